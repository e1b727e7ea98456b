"""What a kernel switch reports: port counters from `ip -s -j link show` (turned to the switch's
point of view where the counted end is the host's) and the titled blocks of its config dump."""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from vswbench.errors import CommandError
from vswbench.host.netns import ip
from vswbench.host.netns import run
from vswbench.switches.base import PortCounters


def counters_from_link(link: dict[str, Any], port: str | None = None) -> PortCounters:
    """PortCounters from one entry of `ip -s -j link show`."""
    stats = link.get("stats64") or link.get("stats") or {}
    rx, tx = stats.get("rx", {}), stats.get("tx", {})
    return PortCounters(port or str(link.get("ifname", "?")),
                        rx_packets=int(rx.get("packets", 0)), tx_packets=int(tx.get("packets", 0)),
                        rx_dropped=int(rx.get("dropped", 0)), tx_dropped=int(tx.get("dropped", 0)),
                        rx_errors=int(rx.get("errors", 0)), tx_errors=int(tx.get("errors", 0)))


def switch_view(host_end: PortCounters) -> PortCounters:
    """Counters of a host end (veth baseline, macvlan child) turned to the switch's point of view,
    like every other backend's: rx = frames the switch took from the host, tx = frames it gave."""
    c = host_end
    return PortCounters(c.port, rx_packets=c.tx_packets, tx_packets=c.rx_packets,
                        rx_dropped=c.tx_dropped, tx_dropped=c.rx_dropped,
                        rx_errors=c.tx_errors, tx_errors=c.rx_errors)


def read_counters(netns: str | None, ifnames: Iterable[str]) -> list[PortCounters]:
    wanted = list(ifnames)
    if not wanted:
        return []
    links = json.loads(ip("-s", "-j", "link", "show", netns=netns) or "[]")
    by_name = {link.get("ifname"): link for link in links}
    return [counters_from_link(by_name[n], n) for n in wanted if n in by_name]


def section(title: str, argv: list[str]) -> str:
    """One titled block of a config dump; a failing command shows its error instead."""
    try:
        body = run(argv).rstrip()
    except CommandError as exc:
        body = f"({exc})"
    return f"## {title}\n$ {' '.join(argv)}\n{body}\n"
