"""What a switch does per frame and how its rules change: functions.py the forwarding functions
(l2, l3, nat, acl) and their tables, batch.py rule batches (ip -batch, nft -f), mechanisms.py the
rule-update mechanisms (route batch, nft transaction, OpenFlow bundle)."""
