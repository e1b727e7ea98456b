"""The campaign keys of the socket kinds (stream, rr, crr: measure/sockets.py), kept out of
spec.py: proto, msg_size, mtu, offloads and service are dimensions of those kinds' points only;
a point's `size` is then its message size in bytes. A study is refused for a scenario without a
kernel socket at each end (p2p, tester-dut), for the DPDK switches, and for l3 switches named with
pvp or chain:N (whose network functions are kernel IP routers: measure/socket_chain.py), as the
command line refuses them (exit 3 there); "*" brings only the switches each scenario can take."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from vswbench.campaign.point import Point
from vswbench.campaign.values import SOCKET_KINDS

SOCKET_KEYS = ("proto", "msg_size", "mtu", "offloads", "service")
DEFAULT_MSG_SIZE = {"stream": 16384, "rr": 64, "crr": 64}


def socket_problems(i: int, kinds: list[str], scenarios: list[str], switches: list[str],
                    protos: list[str]) -> list[str]:
    """A study's socket kinds against its scenarios, its switches as written (a DPDK switch
    named is refused; "*" brings the kernel switches only: socket_points) and protocols."""
    used = [k for k in kinds if k in SOCKET_KINDS]
    if not used:
        return []
    from vswbench import scenario as scen
    from vswbench.switches.catalog import all_switches
    from vswbench.switches.catalog import calibration_switches

    problems = []
    classes = all_switches()
    for name in scenarios:
        parsed = scen.parse(name)
        chain = any(h.role is scen.Role.NF for h in parsed.hosts)
        if any(h.role is scen.Role.TESTER for h in parsed.hosts) and not chain:
            problems.append(f"study {i}, scenario: kinds {', '.join(used)} need a client and a "
                            f"server namespace (rr, p2p-pair, pairs:N, pvp, chain:N, "
                            f"remote[-vxlan][-rr]), and {name}'s tester has its two ports in one")
        l3 = [s for s in switches if chain and s in classes and classes[s].l3]
        if l3:
            problems.append(f"study {i}, switch: {', '.join(l3)} route by destination address, "
                            f"past the network functions of {name}; kinds {', '.join(used)} "
                            f"through {name} need l2 switches")
    dpdk = [s for s in switches if s in classes and classes[s].port_kind == "dpdk"]
    if dpdk:
        problems.append(f"study {i}, switch: {', '.join(dpdk)}: DPDK ports, which no kernel "
                        f"socket reaches; kinds {', '.join(used)} need kernel switches")
    devices = [s for s in switches if s in calibration_switches()]
    if devices:
        problems.append(f"study {i}, switch: {', '.join(devices)}: the calibration device "
                        f"shapes frames at a rate; kinds {', '.join(used)} need another switch")
    if used == ["crr"] and "udp" in protos:
        problems.append(f"study {i}, proto: crr opens a TCP connection per transaction: "
                        "remove udp")
    return problems


def _socket_capable(switch: str, scenario: str) -> bool:
    from vswbench.scenario import Role
    from vswbench.scenario import parse
    from vswbench.switches.catalog import all_switches
    from vswbench.switches.catalog import calibration_switches

    cls = all_switches().get(switch)
    if cls is not None and cls.l3 and any(h.role is Role.NF for h in parse(scenario).hosts):
        return False
    return not (cls is not None and cls.port_kind == "dpdk") and switch not in \
        calibration_switches()


def socket_switch_count(switches: tuple[str, ...], scenario: str) -> int:
    """The switches of a study that socket points are made for in `scenario`."""
    return sum(1 for s in switches if _socket_capable(s, scenario))


def socket_points(st: Any, point: Point) -> list[Point]:
    """The points of one socket kind for a study's product (crr: TCP only; none for a DPDK
    switch, nor for an l3 switch in pvp or chain:N, which "*" brings)."""
    if not _socket_capable(point.switch, point.scenario):
        return []
    sizes = st.msg_sizes or (DEFAULT_MSG_SIZE[point.kind],)
    protos = ("tcp",) if point.kind == "crr" else st.protos
    return [replace(point, size=size, proto=proto, mtu=mtu, offloads=off, service=service,
                    io="auto", burst=1)
            for proto, size, mtu, off, service in itertools.product(
                protos, sizes, st.mtus, st.offloads, st.services)]
