"""Scenarios as pure descriptions (Mininet style): who the containers are, which of their ports
join the switch, which paths frames take, and which engine runs where. No kernel objects here:
testbed.Testbed instantiates a Scenario around a Switch class.

Names:
  p2p        tester (one namespace, two ports, engine loop) -> switch -> tester
  p2p-pair   sender and receiver containers (engine gen / sink) through the switch (Ara et al.)
  pvp        tester -> switch -> nf (engine fwd) -> switch -> tester (Emmerich et al. Fig. 3b)
  chain:N    tester -> switch -> nf1 -> switch -> ... -> nfN -> switch -> tester (Raumer et al.)
  pvp-vm, chain-vm:N   the same with every network function a virtual machine (its two virtio-net
             ports on taps, the engine's fwd in the guest: host/vm_nf.py, Emmerich et al.)
  pairs:N    N sender/receiver pairs through one switch (Ara et al. S = NvsN)
  rr         client (engine loop, one port) <-> switch <-> server (engine reflect)
  remote     two emulated hosts (sites h1, h2), each a namespace with its own switch instance,
             joined by a veth wire; sender s1 on h1, receiver r1 on h2 (Ara et al., L = remote)
  remote-rr  the same two hosts, client on h1, server (reflect) on h2: round trip across the wire
  remote-vxlan, remote-vxlan-rr   the same, the switches joined by VXLAN over the wire
  tester-dut the tester (engine loop, two ports) on a tester host and the switch on a DUT host,
             joined by the wire: the DUT's CPU accounting holds only the switch (`apart`)
Socket measurements (measure/sockets.py) see pvp and chain:N as `socket_chain(n)`, under the same
name: client -> switch -> nf1 -> switch -> ... -> nfN -> switch -> server, where the client and
the server are kernel socket endpoints and the network functions route (no engine).
A Host's `site` names the emulated host whose switch it attaches to ("" = the one switch);
Scenario.sites lists them and Scenario.wire says how they are joined (testbed/sites.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from enum import Enum

from vswbench.errors import UsageError


class Role(str, Enum):
    TESTER = "tester"      # engine loop on two ports (or one for rr)
    SENDER = "sender"      # engine gen
    RECEIVER = "receiver"  # engine sink
    NF = "nf"              # engine fwd between its two ports (socket chains: IP routing)
    CLIENT = "client"      # engine loop, one port, round trip
    SERVER = "server"      # engine reflect


@dataclass(frozen=True)
class Host:
    name: str              # logical: "tester", "nf1", "s1", "r1", ...
    role: Role
    ports: tuple[str, ...]  # logical port names, e.g. ("p0", "p1") or ("in", "out")
    site: str = ""          # the emulated host whose switch it attaches to ("" = the one switch)
    vm: bool = False        # a network function in a virtual machine (host/vm_nf.py), not a netns


@dataclass(frozen=True)
class Hop:
    """Frames leave `src` (host.port) and must reach `dst` (host.port) through the switch."""
    src: str
    dst: str


@dataclass(frozen=True)
class Scenario:
    name: str
    hosts: tuple[Host, ...]
    hops: tuple[Hop, ...]          # in order along each stream; the switch forwards each hop
    streams: int = 1               # independent traffic streams (pairs:N -> N)
    extra: dict[str, str] = field(default_factory=dict)
    sites: tuple[str, ...] = ()    # emulated hosts, each with its own switch ("remote")
    wire: str = ""                 # how the sites' switches are joined: "veth" or "vxlan"
    # tester and DUT apart (tester-dut): the engines on the tester's CPUs (their receive work
    # too: threaded NAPI there), the switch on the DUT's; a trial's CPU figures are the DUT's
    apart: bool = False

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def port_keys(self) -> list[str]:
        return [f"{h.name}.{p}" for h in self.hosts for p in h.ports]


def p2p() -> Scenario:
    return Scenario("p2p", (Host("tester", Role.TESTER, ("p0", "p1")),),
                    (Hop("tester.p0", "tester.p1"),))


def p2p_pair() -> Scenario:
    return Scenario("p2p-pair", (Host("s1", Role.SENDER, ("p0",)), Host("r1", Role.RECEIVER, ("p0",))),
                    (Hop("s1.p0", "r1.p0"),))


def _through_nfs(first: str, n: int, last: str,
                 vm: bool = False) -> tuple[list[Host], tuple[Hop, ...]]:
    """Network functions nf1..nfN (ports in, out; virtual machines with `vm`) and the hops from
    port `first` through each of them, in order, to port `last`."""
    nfs = [Host(f"nf{i}", Role.NF, ("in", "out"), vm=vm) for i in range(1, n + 1)]
    ports = [first, *(p for i in range(1, n + 1) for p in (f"nf{i}.in", f"nf{i}.out")), last]
    return nfs, tuple(Hop(src, dst) for src, dst in zip(ports[::2], ports[1::2], strict=True))


def _chain_name(n: int) -> str:
    return f"chain:{n}" if n != 1 else "pvp"


def chain(n: int, vm: bool = False) -> Scenario:
    nfs, hops = _through_nfs("tester.p0", n, "tester.p1", vm)
    name = (f"chain-vm:{n}" if n != 1 else "pvp-vm") if vm else _chain_name(n)
    return Scenario(name, (Host("tester", Role.TESTER, ("p0", "p1")), *nfs), hops)


def vm_hosts(s: Scenario) -> tuple[str, ...]:
    """The network functions that are virtual machines (pvp-vm, chain-vm:N)."""
    return tuple(h.name for h in s.hosts if h.vm)


def socket_chain(n: int) -> Scenario:
    """pvp (n = 1) and chain:N as socket measurements see them: a client (one port), network
    functions nf1..nfN (ports in, out) and a server (one port); the hops lead from the client
    through every network function to the server (the way back is the reverse of each)."""
    nfs, hops = _through_nfs("client.p0", n, "server.p0")
    return Scenario(_chain_name(n), (Host("client", Role.CLIENT, ("p0",)), *nfs,
                                     Host("server", Role.SERVER, ("p0",))), hops)


def pairs(n: int) -> Scenario:
    hosts, hops = [], []
    for i in range(1, n + 1):
        hosts += [Host(f"s{i}", Role.SENDER, ("p0",)), Host(f"r{i}", Role.RECEIVER, ("p0",))]
        hops.append(Hop(f"s{i}.p0", f"r{i}.p0"))
    return Scenario(f"pairs:{n}", tuple(hosts), tuple(hops), streams=n)


def rr() -> Scenario:
    return Scenario("rr", (Host("client", Role.CLIENT, ("p0",)), Host("server", Role.SERVER, ("p0",))),
                    (Hop("client.p0", "server.p0"), Hop("server.p0", "client.p0")))


def tester_dut() -> Scenario:
    """The tester on a host of its own, the switch on the DUT, the wire between (CSIT's 2-node
    testbed): emulated by the tester's namespace and the switch's, each on its own CPUs."""
    return Scenario("tester-dut", (Host("tester", Role.TESTER, ("p0", "p1")),),
                    (Hop("tester.p0", "tester.p1"),), apart=True)


SITES = ("h1", "h2")
WIRES = ("veth", "vxlan")


def remote(wire: str = "veth", round_trip: bool = False) -> Scenario:
    """Two emulated hosts joined by a wire (veth, or VXLAN over it): sender/receiver across
    them, or with `round_trip` client/server (the server reflects)."""
    if wire not in WIRES:
        raise UsageError(f"remote wire {wire!r}: expected one of {', '.join(WIRES)}")
    name = "remote" + ("" if wire == "veth" else f"-{wire}") + ("-rr" if round_trip else "")
    hops: tuple[Hop, ...]
    if round_trip:
        hosts = (Host("client", Role.CLIENT, ("p0",), SITES[0]),
                 Host("server", Role.SERVER, ("p0",), SITES[1]))
        hops = (Hop("client.p0", "server.p0"), Hop("server.p0", "client.p0"))
    else:
        hosts = (Host("s1", Role.SENDER, ("p0",), SITES[0]),
                 Host("r1", Role.RECEIVER, ("p0",), SITES[1]))
        hops = (Hop("s1.p0", "r1.p0"),)
    return Scenario(name, hosts, hops, sites=SITES, wire=wire)


def local_twin(s: Scenario) -> Scenario:
    """The one-switch scenario with the same roles: where the tester's own ceiling is measured
    for a remote one (rr for remote[-vxlan]-rr, p2p-pair for remote[-vxlan])."""
    if not s.sites:
        return s
    return rr() if any(h.role == Role.CLIENT for h in s.hosts) else p2p_pair()


REMOTE = {"remote": ("veth", False), "remote-rr": ("veth", True),
          "remote-vxlan": ("vxlan", False), "remote-vxlan-rr": ("vxlan", True)}
MAX_CHAIN = 10
MAX_CHAIN_VM = 4    # each guest holds 512 MiB and, under TCG, a host core while it forwards
MAX_PAIRS = 8


def parse(spec: str) -> Scenario:
    """'p2p', 'p2p-pair', 'pvp', 'chain:N', 'pvp-vm', 'chain-vm:N', 'pairs:N', 'rr',
    'remote[-vxlan][-rr]', 'tester-dut'."""
    s = spec.strip().lower()
    if s in REMOTE:
        return remote(*REMOTE[s])
    fixed = _FIXED.get(s)
    if fixed is not None:
        return fixed()
    numbered = _numbered(spec, s)
    if numbered is not None:
        return numbered
    raise UsageError(f"unknown scenario {spec!r}: expected p2p, p2p-pair, pvp, chain:N, pvp-vm, "
                     "chain-vm:N, pairs:N, rr, remote, remote-rr, remote-vxlan, remote-vxlan-rr "
                     "or tester-dut")


# the scenarios named by one word (the remote ones: REMOTE)
_FIXED: dict[str, Callable[[], Scenario]] = {
    "p2p": p2p, "p2p-pair": p2p_pair, "pvp": lambda: chain(1),
    "pvp-vm": lambda: chain(1, vm=True), "rr": rr, "tester-dut": tester_dut}


def _numbered(spec: str, s: str) -> Scenario | None:
    """chain-vm:N, chain:N, pairs:N (N within its limit), or None for another name."""
    m = re.fullmatch(r"chain-vm:(\d+)", s)
    if m:
        if not 1 <= int(m.group(1)) <= MAX_CHAIN_VM:
            raise UsageError(f"scenario {spec!r}: N must be 1..{MAX_CHAIN_VM}")
        return chain(int(m.group(1)), vm=True)
    m = re.fullmatch(r"(chain|pairs):(\d+)", s)
    if m:
        n = int(m.group(2))
        limit = MAX_CHAIN if m.group(1) == "chain" else MAX_PAIRS
        if not 1 <= n <= limit:
            raise UsageError(f"scenario {spec!r}: N must be 1..{limit}")
        return chain(n) if m.group(1) == "chain" else pairs(n)
    return None
