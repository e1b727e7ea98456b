"""Socket measurements through pvp and chain:N (measure/sockets.py): the client and the server
are kernel socket endpoints at the two ends of the chain, and the network functions between them
are kernel IP routers, each in its own namespace with ports `in` and `out` (the testbed builds
the namespaces for option nf=fwd; no engine runs in them):

    client   <server>/32 out of p0, next hop nf1's `in`
    nf i     ip_forward=1, rp_filter=0, send_redirects=0 (switches/chain/router.py);
             <server>/32 out of `out`, next hop the next element's `in` (nfN: the server);
             <client>/32 out of `in`, next hop the previous element's `out` (nf1: the client)
    server   <client>/32 out of p0, next hop nfN's `out`

Every route has a permanent neighbour entry for its next hop's MAC, so no ARP frame crosses the
switch; the addresses stay those testbed/plan.py planned (one /16 in 198.18.0.0/15), and the
/32 routes are more specific than the ports' connected /16. The switch forwards every hop and
its reverse (measure/sockets.py's both_ways), as it forwards rr's.

The scenario keeps its name (pvp, chain:N), and every result says how its network functions
forwarded (`nf`: NF_ROUTING), so nobody mistakes it for a chain of the engine's fwd, and how
many IP datagrams each one routed during the run (`nf_forwarded`: the growth of Ip
ForwDatagrams in its namespace's /proc/net/snmp; a GRO-merged super-packet counts once). A router
takes no core of its own: the kernel routes in the softirq of the CPU that delivers the packet
to its `in` (the sender's, or the switch's receive thread where the switch has one), so the
placement is rr's (client, switch, server).

Refused (exit 3, plan_sockets): l3 switches, which route by the destination address (the
server's address would take the switch's route to the server's port, past the network
functions), and option nf other than fwd (the router and OVS elements are built for the frame
engine's one-way streams). Pure, but for read_forwarded and apply_routing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vswbench.errors import VswbenchError
from vswbench.host.netns import run_in
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.scenario import socket_chain
from vswbench.switches.base import Switch
from vswbench.switches.chain.nf import DESCRIPTION
from vswbench.switches.chain.nf import FWD
from vswbench.switches.chain.nf import OPTION
from vswbench.switches.chain.nf import nf_hosts
from vswbench.switches.chain.nf import nf_kind
from vswbench.switches.chain.router import enable_forwarding
from vswbench.switches.chain.router import route_through
from vswbench.testbed.plan import PortInfo

NF_ROUTING = "kernel IP routing"


def socket_scenario(scenario: Scenario) -> Scenario:
    """pvp and chain:N as socket measurements run them (scenario.socket_chain, same name); any
    other scenario unchanged."""
    n = len(nf_hosts(scenario))
    if n and any(h.role is Role.TESTER for h in scenario.hosts):
        return socket_chain(n)
    return scenario


def chain_problem(scenario: Scenario, options: Mapping[str, str],
                  switch_cls: type[Switch] | None = None) -> str | None:
    """Why a socket chain cannot run with these options (and through this switch, where one is
    given), or None (also for a scenario without network functions). A bad value of option nf
    is a UsageError."""
    if not nf_hosts(scenario):
        return None
    if switch_cls is not None and switch_cls.l3:
        return (f"switch {switch_cls.name} routes by destination address: the client's packets "
                f"to the server would take the switch's route to the server's port, past the "
                f"network functions of {scenario.name}; use an l2 switch (bridge, ovs, veth, "
                f"tc-bpf, ...) or scenario rr")
    kind = nf_kind(options)
    if kind != FWD:
        return (f"option {OPTION}={kind} builds the chain's elements ({DESCRIPTION[kind]}) "
                f"for the frame engine's one-way streams; socket measurements through "
                f"{scenario.name} make their network functions kernel IP routers of their own "
                f"(both ways, between a client and a server): leave option {OPTION} out")
    return None


@dataclass(frozen=True)
class ChainRoute:
    """<destination>/32 out of `ifname` in `netns`, to the next hop's MAC."""
    netns: str
    ifname: str
    destination: str
    next_mac: str


@dataclass(frozen=True)
class Router:
    """A network function of a socket chain: its host name, namespace, `in` and `out`."""
    name: str
    netns: str
    in_if: str
    out_if: str


@dataclass(frozen=True)
class ChainRouting:
    """What apply_routing sets: the routers in chain order, and every route of the chain, both
    ways."""
    routers: tuple[Router, ...]
    routes: tuple[ChainRoute, ...]


def chain_links(scenario: Scenario) -> list[tuple[str, str]]:
    """The links of a socket chain from client to server, as (port key nearer the client, port
    key nearer the server): client.p0-nf1.in, nf1.out-nf2.in, ..., nfN.out-server.p0."""
    client = next((h for h in scenario.hosts if h.role is Role.CLIENT), None)
    if client is None:
        raise VswbenchError(f"scenario {scenario.name}: no client")
    onward: dict[str, str] = {}
    for hop in scenario.hops:              # the reverse hops start at `in` and server ports
        onward.setdefault(hop.src, hop.dst)
    links: list[tuple[str, str]] = []
    key = f"{client.name}.{client.ports[0]}"
    for _ in range(len(scenario.hosts)):
        if key not in onward:
            break
        dst = onward[key]
        links.append((key, dst))
        host = scenario.host(dst.split(".")[0])
        if host.role is not Role.NF:
            if host.role is not Role.SERVER:
                break
            return links
        key = f"{host.name}.{host.ports[1]}"
    raise VswbenchError(f"scenario {scenario.name}: the hops from the client do not lead "
                        "through network functions to the server")


def plan_routing(scenario: Scenario, ports: Mapping[str, PortInfo]) -> ChainRouting:
    """The routers and routes of a built socket chain (`ports`: the testbed's PortInfo by key):
    across each link the end nearer the client routes the server to the other end, and the end
    nearer the server routes the client back."""
    links = chain_links(scenario)
    client, server = ports[links[0][0]], ports[links[-1][1]]
    routes: list[ChainRoute] = []
    for near, far in links:
        a, b = ports[near], ports[far]
        routes.append(ChainRoute(a.netns, a.ifname, server.ip, b.mac))
        routes.append(ChainRoute(b.netns, b.ifname, client.ip, a.mac))
    routers = tuple(Router(h, ports[f"{h}.in"].netns, ports[f"{h}.in"].ifname,
                           ports[f"{h}.out"].ifname) for h in nf_hosts(scenario))
    return ChainRouting(routers, tuple(routes))


def forwarded_datagrams(snmp: str) -> int:
    """Ip: ForwDatagrams of a /proc/net/snmp text (its header line names the columns)."""
    rows = [line.split() for line in snmp.splitlines() if line.startswith("Ip:")]
    if len(rows) < 2 or "ForwDatagrams" not in rows[0]:
        raise VswbenchError("/proc/net/snmp has no Ip: ForwDatagrams")
    return int(rows[1][rows[0].index("ForwDatagrams")])


def read_forwarded(routing: ChainRouting) -> dict[str, int]:
    """ForwDatagrams of every router's namespace, by its host name (nf1, nf2, ...)."""
    return {r.name: forwarded_datagrams(run_in(r.netns, ["cat", "/proc/net/snmp"]))
            for r in routing.routers}


def apply_routing(routing: ChainRouting) -> None:
    """Make the network functions routers and set every route (in the run's namespaces, which
    take all of it with them when they are removed)."""
    for router in routing.routers:
        enable_forwarding(router.netns, (router.in_if, router.out_if))
    for route in routing.routes:
        route_through(route.netns, route.ifname, route.destination, route.next_mac)
