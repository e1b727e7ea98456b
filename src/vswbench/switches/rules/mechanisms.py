"""The backends' rule-update mechanisms (base.RuleMechanism) for the rule-update metric: each
installs n rules in one batch and removes them in one batch, timed around the tool that does it
(rules/batch.py). The rules never match the measured traffic (destinations from ACL_BASE up,
198.19.128.0/17, which no driver sends to), so only the update itself can disturb forwarding.

- RouteBatch (router): n /32 routes in the table the traffic's path looks up, by one
  `ip -batch` (a netlink message per route over one socket); removed the same way.
- NftTransaction (router): a table with a forward chain of n drop rules, one `nft -f`
  transaction; removed by one transaction deleting the table (nftables frees its rules at once).
- OfBundle (ovs): n drop rules in one OpenFlow bundle (`ovs-ofctl --bundle add-flows`);
  removed by one bundle of n `delete_strict` flow mods.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vswbench.switches.base import RuleMechanism
from vswbench.switches.rules.batch import ip_batch
from vswbench.switches.rules.batch import nft_file
from vswbench.switches.rules.functions import acl_denied

UPDATE_TABLE = "vsbru"               # the nftables table of the updates (switch namespace)
UPDATE_COOKIE = 0x3                  # OpenFlow rules of the updates
UPDATE_PRIORITY = 45000


class RouteBatch(RuleMechanism):
    name = "ip -batch routes"

    def __init__(self, netns: str, table: str, via: str, dev: str, temp_dir: str) -> None:
        self.netns, self.table, self.via, self.dev, self.temp = netns, table, via, dev, temp_dir
        self.installed = 0

    def _text(self, verb: str, n: int) -> str:
        tail = f" via {self.via} dev {self.dev}" if verb == "add" else ""
        return "".join(f"route {verb} {a}/32{tail} table {self.table}\n" for a in acl_denied(n))

    def install(self, n: int) -> float:
        seconds = ip_batch(self.netns, self._text("add", n), self.temp, "update-routes.batch")
        self.installed = n
        return seconds

    def remove(self) -> float:
        seconds = ip_batch(self.netns, self._text("del", self.installed), self.temp,
                           "update-routes-del.batch")
        self.installed = 0
        return seconds


class NftTransaction(RuleMechanism):
    name = "nft transaction"

    def __init__(self, netns: str, temp_dir: str) -> None:
        self.netns, self.temp = netns, temp_dir

    def install(self, n: int) -> float:
        rules = "".join(f"add rule ip {UPDATE_TABLE} vsbupd ip daddr {a} drop\n"
                        for a in acl_denied(n))
        text = (f"add table ip {UPDATE_TABLE}\nadd chain ip {UPDATE_TABLE} vsbupd {{ type filter "
                f"hook forward priority 10; policy accept; }}\n{rules}")
        return nft_file(self.netns, text, self.temp, "update.nft")

    def remove(self) -> float:
        return nft_file(self.netns, f"delete table ip {UPDATE_TABLE}\n", self.temp,
                        "update-del.nft")


class OfBundle(RuleMechanism):
    name = "openflow bundle"

    def __init__(self, add_flows: Callable[[Path], None], root: Path) -> None:
        self.add_flows, self.root = add_flows, root
        self.installed = 0

    def _match(self, addr: str) -> str:
        return f"priority={UPDATE_PRIORITY},ip,nw_dst={addr}"

    def _run(self, text: str, name: str) -> float:
        import time

        path = self.root / name
        path.write_text(text)
        start = time.perf_counter()
        self.add_flows(path)
        return time.perf_counter() - start

    def install(self, n: int) -> float:
        text = "".join(f"add cookie={UPDATE_COOKIE:#x},{self._match(a)},actions=drop\n"
                       for a in acl_denied(n))
        self.installed = n
        return self._run(text, "update-flows.txt")

    def remove(self) -> float:
        text = "".join(f"delete_strict {self._match(a)}\n" for a in acl_denied(self.installed))
        self.installed = 0
        return self._run(text, "update-flows-del.txt")
