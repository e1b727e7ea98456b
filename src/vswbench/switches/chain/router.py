"""Chain elements that forward with the kernel's IP routing (veth backend, option nf=router).

Each network function is its own namespace with two veth ports, `in` and `out`, and no engine:
    sysctl  ip_forward=1; rp_filter=0 (all, default and both ports: the stream's source is
            reachable through either port's /16); send_redirects=0
    route   <stream destination>/32 dev out (more specific than the ports' connected /16)
    neigh   <stream destination> lladdr <next hop's MAC> dev out nud permanent
so a frame entering `in` leaves `out` with the next hop's MAC (the next element's `in`, or the
tester's p1) without a single ARP frame. The stream's destination is the tester's p1 address; the
engine sends TTL 64, so ten hops are far from expiring, and the namespaces answer nothing (ICMP
errors are rate-limited to zero by the testbed, IPv6 is off).

CPU placement (kernel_mode=napi, the default): the forwarding runs in the receive path of `in`.
With GRO on (and TSO off on the sending end, which veth.py sets for these chains: see its
docstring), veth receives through NAPI; threaded NAPI moves that work into a kernel thread
`napi/<if>-<id>`, which is pinned to the element's CPU (Placement.nf_cpu(i), the CPU its engine
would have had). Network function i's receive, routing and transmit into the next ring thus run
on its own core, and placements s_core / bi / pbp place the elements as they place engines. The
tester's ports get no NAPI: its engine busy-polls its core, and a NAPI thread pinned there only
got scheduler slices (measured: chain:1 at 100 kpps lost 31 % at the full ring of the tester's
p1); delivery to the tester runs in the last element's context, on the last element's core. No
separate switch core exists: forwarding_mode() says "per-element ..." (models/chain_data.py
reads that as links charged to the cores of the elements). kernel_mode=softirq leaves the
kernel's default: the whole chain then runs in the tester's softirq, on the tester's core.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from vswbench.errors import VswbenchError
from vswbench.host.netns import ip
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import sysctl
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import SwitchContext
from vswbench.switches.chain.nf import PER_ELEMENT
from vswbench.switches.kernel.napi import Placed
from vswbench.switches.kernel.napi import kernel_mode
from vswbench.switches.kernel.napi import napi_thread_pids
from vswbench.switches.kernel.napi import place_napi


@dataclass(frozen=True)
class RouterElement:
    """What one router element needs: its ports and where its frames go."""
    name: str                     # "nf1"
    netns: str
    in_if: str
    out_if: str
    destination: str              # the stream's destination address (the tester's p1)
    next_mac: str                 # MAC of the port `out` is linked to
    cpu: int | None


def plan_elements(nf_hosts: Sequence[str], paths: Sequence[ForwardPath],
                  attachments: Mapping[str, Attachment], ctx: SwitchContext) -> list[RouterElement]:
    """One RouterElement per NF host (pure given the attachments: no kernel)."""
    dst_of = {p.src: p.dst for p in paths}
    elements = []
    for i, name in enumerate(nf_hosts, 1):
        key_in, key_out = f"{name}.in", f"{name}.out"
        if key_out not in dst_of or key_in not in attachments:
            raise VswbenchError(f"router elements: {name} has no path out of {key_out}")
        final = dst_of[key_out]
        for _ in range(len(nf_hosts) + 1):          # through the next elements to the tester
            host = final.split(".")[0]
            if host not in nf_hosts:
                break
            final = dst_of[f"{host}.out"]
        destination = attachments[final].host.ip_cidr.split("/")[0]
        if not destination:
            raise VswbenchError(f"router elements: the stream's destination {final} has no address")
        next_att = attachments[dst_of[key_out]]
        elements.append(RouterElement(name, attachments[key_in].host.netns,
                                      attachments[key_in].host.ifname,
                                      attachments[key_out].host.ifname, destination,
                                      next_att.host_mac, ctx.placement.nf_cpu(i)))
    return elements


def enable_forwarding(netns: str, ports: Sequence[str]) -> None:
    """ip_forward=1; rp_filter=0 and send_redirects=0 (all, default and each of `ports`)."""
    settings: dict[str, int] = {"net.ipv4.ip_forward": 1}   # first: it resets per-port forwarding
    for conf in ("all", "default", *ports):
        settings[f"net.ipv4.conf.{conf}.rp_filter"] = 0
        settings[f"net.ipv4.conf.{conf}.send_redirects"] = 0
    sysctl(netns, **settings)


def route_through(netns: str, ifname: str, destination: str, next_mac: str) -> None:
    """<destination>/32 out of `ifname` (more specific than the ports' connected /16), and a
    permanent neighbour entry giving it the next hop's MAC: no ARP frame ever."""
    ip("route", "replace", f"{destination}/32", "dev", ifname, netns=netns)
    set_neighbour(netns, ifname, destination, next_mac)


def configure(element: RouterElement) -> None:
    """ip_forward, rp_filter, redirects, the /32 route and the permanent neighbour entry."""
    enable_forwarding(element.netns, (element.in_if, element.out_if))
    route_through(element.netns, element.out_if, element.destination, element.next_mac)


@dataclass
class RouterChain:
    """The router elements of one testbed, and where their receive work runs (`placed`: the
    veth backend's record of NAPI placements, shared)."""
    ctx: SwitchContext
    placed: Placed = field(default_factory=Placed)
    elements: list[RouterElement] = field(default_factory=list)
    _threads: dict[str, int] | None = None

    def build(self, nf_hosts: Sequence[str], paths: Sequence[ForwardPath],
              attachments: Mapping[str, Attachment]) -> None:
        self.elements = plan_elements(nf_hosts, paths, attachments, self.ctx)
        for element in self.elements:
            configure(element)
            for ifname in (element.in_if, element.out_if):
                place_napi(self.ctx, element.netns, ifname, self.placed, cpu=element.cpu)

    def forwarding_mode(self) -> str:
        if kernel_mode(self.ctx) != "napi" or not self.placed.modes:
            return self.placed.mode()                # sender-softirq
        cpus = ",".join("-" if e.cpu is None else str(e.cpu) for e in self.elements)
        return f"{PER_ELEMENT} napi-threaded (nf cpus {cpus})"

    def cpu_threads(self) -> dict[str, int]:
        """The kernel threads doing each element's work, for per-element CPU time: nfI = the
        NAPI thread of nfI's `in`. Found once: the threads live as long as their interfaces."""
        if self._threads is None:
            self._threads = {}
            for e in self.elements:
                for pid in napi_thread_pids(e.in_if)[:1]:
                    self._threads[e.name] = pid
        return dict(self._threads)

    def notes(self) -> list[str]:
        return list(self.placed.notes)
