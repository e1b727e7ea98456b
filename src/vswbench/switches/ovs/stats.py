"""What OVS's userspace datapath says about its flow caches (pure parsing, unit-tested alone).

- `ovs-appctl dpctl/show`: datapath lookups (hit, missed, lost) and the datapath flows (megaflows)
  installed now;
- `ovs-appctl dpif-netdev/pmd-stats-show`: per polling thread (PMD threads and the main thread,
  which polls system ports) the packets and where their lookups ended: the simple match cache
  (OVS >= 3.0, for datapath flows that match only the input port: what port-to-port rules give),
  EMC (exact match cache), SMC (signature match cache, off by default), megaflow (dpcls) or a
  miss (an upcall to the OpenFlow tables);
- `ovs-appctl upcall/show`: the datapath flow limit (the revalidators raise it 1000 at a time from
  10,000 while dumps are quick) and the duration of the last dump.

Counters are cumulative since ovs-vswitchd started.
"""

from __future__ import annotations

import re

_LOOKUPS = re.compile(r"lookups:\s*hit:(\d+)\s+missed:(\d+)\s+lost:(\d+)")
_FLOWS = re.compile(r"^\s*flows:\s*(\d+)", re.M)
_UPCALL_FLOWS = re.compile(r"flows\s*:\s*\(current (\d+)\)\s*\(avg (\d+)\)\s*\(max (\d+)\)\s*"
                           r"\(limit (\d+)\)")
_DUMP = re.compile(r"dump duration\s*:\s*(\d+)\s*ms")
PMD_COUNTERS = ("packets received", "simple match hits", "emc hits", "smc hits", "megaflow hits",
                "miss with success upcall", "miss with failed upcall")


def _key(name: str) -> str:
    return name.replace(" ", "_")


def parse_dpctl_show(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    m = _LOOKUPS.search(text)
    if m:
        out.update(lookups_hit=int(m.group(1)), lookups_missed=int(m.group(2)),
                   lookups_lost=int(m.group(3)))
    m = _FLOWS.search(text)
    if m:
        out["datapath_flows"] = int(m.group(1))
    return out


def parse_pmd_cache_stats(text: str) -> dict[str, int]:
    """Sums over every polling thread of PMD_COUNTERS (keys with underscores)."""
    out = {_key(name): 0 for name in PMD_COUNTERS}
    found = False
    for line in text.splitlines():
        name, sep, value = line.strip().partition(":")
        if sep and name in PMD_COUNTERS:
            number = value.strip().split()[0] if value.strip() else ""
            if number.isdigit():
                out[_key(name)] += int(number)
                found = True
    return out if found else {}


def parse_upcall_show(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    m = _UPCALL_FLOWS.search(text)
    if m:
        out.update(upcall_flows_max=int(m.group(3)), flow_limit=int(m.group(4)))
    m = _DUMP.search(text)
    if m:
        out["dump_duration_ms"] = int(m.group(1))
    return out


def datapath_stats(dpctl_show: str, pmd_stats: str, upcall_show: str) -> dict[str, object]:
    out: dict[str, object] = {**parse_dpctl_show(dpctl_show), **parse_upcall_show(upcall_show)}
    cache = parse_pmd_cache_stats(pmd_stats)
    if cache:
        out["cache"] = cache
    return out
