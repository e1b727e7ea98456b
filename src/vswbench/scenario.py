"""Scenarios as pure descriptions (Mininet style): who the containers are, which of their ports
join the switch, which paths frames take, and which engine runs where. No kernel objects here:
testbed.Testbed instantiates a Scenario around a Switch class.

Names:
  p2p        tester (one namespace, two ports, engine loop) -> switch -> tester
  p2p-pair   sender and receiver containers (engine gen / sink) through the switch (Ara et al.)
  pvp        tester -> switch -> nf (engine fwd) -> switch -> tester (Emmerich et al. Fig. 3b)
  chain:N    tester -> switch -> nf1 -> switch -> ... -> nfN -> switch -> tester (Raumer et al.)
  pairs:N    N sender/receiver pairs through one switch (Ara et al. S = NvsN)
  rr         client (engine loop, one port) <-> switch <-> server (engine reflect)
Room is left for `remote` (two hosts, a wire) and DPDK ports (vhost-user, memif): a HostPort kind.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from vswbench.errors import UsageError


class Role(str, Enum):
    TESTER = "tester"      # engine loop on two ports (or one for rr)
    SENDER = "sender"      # engine gen
    RECEIVER = "receiver"  # engine sink
    NF = "nf"              # engine fwd between its two ports
    CLIENT = "client"      # engine loop, one port, round trip
    SERVER = "server"      # engine reflect


@dataclass(frozen=True)
class Host:
    name: str              # logical: "tester", "nf1", "s1", "r1", ...
    role: Role
    ports: tuple[str, ...]  # logical port names, e.g. ("p0", "p1") or ("in", "out")


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


def chain(n: int) -> Scenario:
    hosts = [Host("tester", Role.TESTER, ("p0", "p1"))]
    hops = []
    prev = "tester.p0"
    for i in range(1, n + 1):
        hosts.append(Host(f"nf{i}", Role.NF, ("in", "out")))
        hops.append(Hop(prev, f"nf{i}.in"))
        prev = f"nf{i}.out"
    hops.append(Hop(prev, "tester.p1"))
    return Scenario(f"chain:{n}" if n != 1 else "pvp", tuple(hosts), tuple(hops))


def pairs(n: int) -> Scenario:
    hosts, hops = [], []
    for i in range(1, n + 1):
        hosts += [Host(f"s{i}", Role.SENDER, ("p0",)), Host(f"r{i}", Role.RECEIVER, ("p0",))]
        hops.append(Hop(f"s{i}.p0", f"r{i}.p0"))
    return Scenario(f"pairs:{n}", tuple(hosts), tuple(hops), streams=n)


def rr() -> Scenario:
    return Scenario("rr", (Host("client", Role.CLIENT, ("p0",)), Host("server", Role.SERVER, ("p0",))),
                    (Hop("client.p0", "server.p0"), Hop("server.p0", "client.p0")))


MAX_CHAIN = 10
MAX_PAIRS = 8


def parse(spec: str) -> Scenario:
    """'p2p', 'p2p-pair', 'pvp', 'chain:N', 'pairs:N', 'rr'."""
    s = spec.strip().lower()
    if s == "p2p":
        return p2p()
    if s == "p2p-pair":
        return p2p_pair()
    if s == "pvp":
        return chain(1)
    if s == "rr":
        return rr()
    m = re.fullmatch(r"(chain|pairs):(\d+)", s)
    if m:
        n = int(m.group(2))
        limit = MAX_CHAIN if m.group(1) == "chain" else MAX_PAIRS
        if not 1 <= n <= limit:
            raise UsageError(f"scenario {spec!r}: N must be 1..{limit}")
        return chain(n) if m.group(1) == "chain" else pairs(n)
    raise UsageError(f"unknown scenario {spec!r}: expected p2p, p2p-pair, pvp, chain:N, pairs:N or rr")
