"""OVS's system ports in the userspace datapath receive through one AF_PACKET socket each, read
by ovs-vswitchd's main loop. Their receive buffer is net.core.rmem_default (212992 bytes here):
about 90 frames of 1518 B, 2 ms at 40 kpps. A frame that arrives with the buffer full is dropped
by the socket, counted in its sk_drops (`ss -0 -m`: `d<N>`) and in no device counter, so OVS's
own port counters never show it. Measured (ovs, 1518 B, 100 kpps, 6 s): 2,478 frames dropped
there, Recv-Q 137588 of 212992 bytes. The buffer cannot be set for the switch alone: in a
network namespace other than the host's, net.core.rmem_default and rmem_max are read-only on
this kernel (host-wide values), and vswbench never changes the host's.

`packet_socket_drops` reads those drops per interface (sock_diag through `ss`), so that a
trial's loss through OVS is counted at the switch port that lost it."""

from __future__ import annotations

import re

from vswbench.errors import CommandError
from vswbench.host.netns import run_in

# `ss -0 -m -a -n`: a packet socket bound to an interface, then its skmem with the drops
_PACKET_LINE = re.compile(r"^p_raw\s.*?\S+:(?P<ifname>[^\s:]+)\s.*skmem:\((?P<mem>[^)]*)\)",
                          re.MULTILINE)
_DROPS = re.compile(r"(?:^|,)d(\d+)(?:,|$)")


def parse_packet_drops(text: str) -> dict[str, int]:
    """{interface: drops} of the packet sockets in `ss -0 -m -a -n` output (summed per
    interface; sockets bound to no interface are left out)."""
    drops: dict[str, int] = {}
    for m in _PACKET_LINE.finditer(text):
        d = _DROPS.search(m.group("mem"))
        if d and m.group("ifname") not in ("*", "0"):
            drops[m.group("ifname")] = drops.get(m.group("ifname"), 0) + int(d.group(1))
    return drops


def packet_socket_drops(netns: str) -> dict[str, int]:
    """Drops of every packet socket in `netns` by interface; {} when ss cannot tell."""
    try:
        return parse_packet_drops(run_in(netns, ["ss", "-0", "-m", "-a", "-n"], timeout=10))
    except CommandError:
        return {}

