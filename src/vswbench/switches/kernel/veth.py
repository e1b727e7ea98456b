"""`veth`: the baseline, no switch at all: one veth pair joins the two host ports of each path.

attach() only records the HostPort; forward(paths) creates one veth pair per pair of ports that talk
(a path and its reverse share the pair), with the ends named HostPort.ifname in HostPort.netns.
Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it; Attachment.host_mac is filled (in the
Attachment objects attach() returned) once forward() has created the link. A port no path names
gets no link. The switch namespace stays empty.

Placement: there is no switch, but the receiving end's stack would still run in the sender's
softirq; in kernel_mode=napi both ends get GRO + threaded NAPI pinned to the switch CPU, so the
baseline is measured the same way as the switches.

Chains (option nf, switches/chain/nf.py): with nf=fwd (the default) the network functions are engines.
With nf=router each NF namespace forwards with the kernel's IP routing (chain/router.py: its NAPI
threads run on the NF's CPU instead of the switch CPU); with nf=ovs each NF is an OVS bridge whose
two ports are veth ends in the switch namespace (chain/ovs.py: one private ovs-vswitchd, pinned to
the switch CPU, started in setup(); nf=ovs-afxdp gives the bridges afxdp ports polled by a PMD
thread there). The testbed names the NF hosts in ctx.nf_hosts.

Pitfall (Linux 6.x, veth_skb_is_eligible_for_gro): a veth hands a frame to its peer's NAPI only
if the *sending* device has no TSO, or the frame comes from a local socket and the peer does UDP
GRO forwarding. With TSO on (the default) GRO + threaded NAPI change nothing: the receive work
still runs in the sender's softirq and the pinned napi/* threads stay idle (measured: 0 ticks of
CPU time at 100 kpps). create_veth (switches/kernel/links.py) therefore turns TSO off on both ends
of every veth in kernel_mode napi, for every kernel backend, so each hop's receive work really runs in its
pinned NAPI thread (measured: the threads then carry it).
"""
from __future__ import annotations

import pathlib
from collections.abc import Mapping

from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.netns import mac_address
from vswbench.host.netns import wait_link_up
from vswbench.run.ids import NUM
from vswbench.safefile import write_text
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.base import link_pairs
from vswbench.switches.chain.nf import OVS_AFXDP
from vswbench.switches.chain.nf import OVS_KINDS
from vswbench.switches.chain.nf import ROUTER
from vswbench.switches.chain.nf import nf_kind
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import read_counters
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.counters import switch_view
from vswbench.switches.kernel.links import create_veth
from vswbench.switches.kernel.links import finish_host_end
from vswbench.switches.kernel.napi import place_napi
from vswbench.switches.kernel.switch import KernelSwitch


class VethSwitch(KernelSwitch):
    name = "veth"
    link_roles = {**KernelSwitch.link_roles,
                  rf"br{NUM}": "the OVS bridges of option nf=ovs (chain/ovs.py)"}
    description = "direct veth link between the hosts (baseline, no switch)"
    direct = True

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        super().check_options(options)
        nf_kind(options)

    def __init__(self, ctx: SwitchContext) -> None:
        # the chain elements place their work with kernel.napi: imported here, so that importing
        # either package first works (this package's __init__ imports this module)
        from vswbench.switches.chain.ovs import OvsChain
        from vswbench.switches.chain.router import RouterChain

        super().__init__(ctx)
        self.nf = nf_kind(ctx.options)
        self.router = RouterChain(ctx, placed=self.placed) if self.nf == ROUTER else None
        self.ovs_chain = (OvsChain(ctx, "afxdp" if self.nf == OVS_AFXDP else "")
                          if self.nf in OVS_KINDS else None)

    def setup(self) -> None:
        if self.ovs_chain is not None:
            self.ovs_chain.start()

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.attachments:
            raise UsageError(f"veth: port {port.key} attached twice")
        att = Attachment(port, None)
        self.attachments[port.key] = att
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        for a_key, b_key in link_pairs(paths, "veth"):
            a, b = (self.attachments.get(k) for k in (a_key, b_key))
            if a is None or b is None:
                raise UsageError(f"veth: path names a port that is not attached ({a_key}, {b_key})")
            if a.host_mac:
                continue  # linked by an earlier forward()
            ha, hb = a.host, b.host
            self.track(create_veth(self.ctx, ha.ifname, ha.netns, hb.ifname, hb.netns))
            for att in (a, b):
                # frames from a host into OVS system ports need complete UDP checksums
                leaves_stack = self.ovs_chain is not None and att.host.netns != self.ctx.netns
                att.host_mac = finish_host_end(att.host, tx_csum=not leaves_stack)
            for att in (a, b):
                wait_link_up(att.host.netns, att.host.ifname)
                att.host_mac = mac_address(att.host.netns, att.host.ifname)
                if self.router is None:   # router elements place their ports' NAPI threads
                    place_napi(self.ctx, att.host.netns, att.host.ifname, self.placed)
        if (self.nf == ROUTER or self.nf in OVS_KINDS) and not self.ctx.nf_hosts:
            raise VswbenchError(f"veth: option nf={self.nf} but the testbed named no network "
                                "functions")
        if self.router is not None and not self.router.elements:
            self.router.build(self.ctx.nf_hosts, paths, self.attachments)
        if self.ovs_chain is not None and not self.ovs_chain.bridges:
            self.ovs_chain.build(self.ctx.nf_hosts, self.attachments)

    def teardown(self) -> None:
        if self.ovs_chain is not None:
            self.ovs_chain.stop()        # the daemons first, then the links
        super().teardown()

    def port_counters(self) -> list[PortCounters]:
        linked = [att for att in self.attachments.values() if att.host_mac]
        found: dict[tuple[str, str], PortCounters] = {}
        for netns in dict.fromkeys(att.host.netns for att in linked):   # one query per namespace
            names = [att.host.ifname for att in linked if att.host.netns == netns]
            found.update({(netns, c.port): c for c in read_counters(netns, names)})
        out = [switch_view(found[key]) for key in ((a.host.netns, a.host.ifname) for a in linked)
               if key in found]
        if self.ovs_chain is not None and self.ovs_chain.bridges:
            out += self.ovs_chain.port_counters()
        return out  # the host ends, seen from the switch (rx = frames the host sent)

    def daemon_pids(self) -> dict[str, int]:
        return self.ovs_chain.daemon_pids() if self.ovs_chain is not None else {}

    def cpu_threads(self) -> dict[str, int]:
        """Kernel threads doing the router elements' work (per-element CPU time, measure/trial.py)."""
        return self.router.cpu_threads() if self.router is not None else {}

    def forwarding_mode(self) -> str:
        if self.router is not None:
            return self.router.forwarding_mode()
        if self.ovs_chain is not None:
            return f"{self.ovs_chain.forwarding_mode()}, links {self.placed.mode()}"
        return self.placed.mode()

    def config_dump(self) -> str:
        linked = [att for att in self.attachments.values() if att.host_mac]
        routers = {e.netns: e.name for e in self.router.elements} if self.router else {}
        parts = []
        for netns in dict.fromkeys(att.host.netns for att in linked):   # one call per namespace
            keys = ", ".join(att.host.key for att in linked if att.host.netns == netns)
            if netns in routers:   # links, the /32 route and the permanent neighbour entry
                parts.append(section(f"{routers[netns]} ({keys}): links, routes, neighbours",
                                     ["ip", "-d", "-n", netns, "-batch", self._router_batch()]))
            else:
                parts.append(section(keys, ["ip", "-n", netns, "-d", "link", "show"]))
        if self.ovs_chain is not None and self.ovs_chain.bridges:
            parts.append(self.ovs_chain.config_dump())
        return "\n".join([*parts, self.placement_notes()])

    def _router_batch(self) -> str:
        path = pathlib.Path(self.ctx.temp_dir or "/tmp") / "router-dump.ip"
        if not path.exists():                # never through a link planted in /tmp
            write_text(path, "link show\nroute show\nneigh show\n")
        return str(path)
