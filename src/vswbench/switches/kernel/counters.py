"""What a kernel switch reports: port counters from a netlink dump of its links (turned to the
switch's point of view where the counted end is the host's) and the titled blocks of its config
dump."""
from __future__ import annotations

from collections.abc import Iterable

from vswbench.errors import CommandError
from vswbench.host import netlink
from vswbench.host.netns import run
from vswbench.switches.base import PortCounters


def counters_from_link(link: netlink.LinkState, port: str | None = None) -> PortCounters:
    """PortCounters of one link (all zero where the kernel gave none)."""
    s = link.stats
    if s is None:
        return PortCounters(port or link.ifname)
    return PortCounters(port or link.ifname, rx_packets=s.rx_packets, tx_packets=s.tx_packets,
                        rx_dropped=s.rx_dropped, tx_dropped=s.tx_dropped,
                        rx_errors=s.rx_errors, tx_errors=s.tx_errors)


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
    by_name = netlink.links(netns)
    return [counters_from_link(by_name[n], n) for n in wanted if n in by_name]


def section(title: str, argv: list[str]) -> str:
    """One titled block of a config dump; a failing command shows its error instead."""
    try:
        body = run(argv).rstrip()
    except CommandError as exc:
        body = f"({exc})"
    return f"## {title}\n$ {' '.join(argv)}\n{body}\n"
