"""The host machine: namespaces and links, CPU counters, the system fingerprint, doctor."""
