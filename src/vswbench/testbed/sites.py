"""Two emulated hosts on one machine (scenario remote, Ara et al.'s L = remote): each site is a
namespace holding its own instance of the switch class, and a wire joins them.

    vsb<id>h1  [switch 1] --- wire vsb<id>w1 === vsb<id>w2 --- [switch 2]  vsb<id>h2
                  |                                                 |
               s1 / client                                      r1 / server

Wire "veth": the veth pair is a port of each switch (Switch.adopt). Wire "vxlan": the veth pair
is the underlay, addressed 198.19.0.1/24 and 198.19.0.2/24 (MTU 1600, so a 1518-byte frame
plus 50 bytes of VXLAN fits), and a kernel VXLAN device in each site (VNI 24, UDP 4789,
vsb<id>x1 / x2, MTU 1500) is the switch's port. OVS uses its own VXLAN port instead
(Ovs.adopt_tunnel: userspace tunnelling, the underlay address on a second bridge `brphy`
holding the wire, the peer's MAC set with tnl/arp/set); the config dump says which.

SiteSwitches looks like one Switch to the testbed and the trial: attach() goes to the switch of
the host's site, forward() splits every hop that crosses the wire into its two halves, counters
and config dumps carry the site's name. Everything is registered with the run's registry.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from vswbench.errors import UsageError
from vswbench.host.netns import Namespace
from vswbench.host.netns import VethPair
from vswbench.host.netns import add_address
from vswbench.host.netns import ip
from vswbench.host.netns import namespace_pids
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.run.registry import Registration
from vswbench.scenario import Scenario
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import BusyCycles
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext

VXLAN_VNI = "24"
VXLAN_PORT = "4789"
UNDERLAY = ("198.19.0.1/24", "198.19.0.2/24")
WIRE_MTU = "1600"


def remote_problem(scenario: Scenario, switch_cls: type[Switch]) -> str | None:
    """Why `switch_cls` cannot be the switch of each site of `scenario`, or None."""
    if not scenario.sites or switch_cls.wire_capable:
        return None
    return (f"scenario {scenario.name} is not supported on {switch_cls.name}: each emulated "
            "host's switch must take the wire as a port; use bridge or ovs")


def wire_key(site: str) -> str:
    return f"wire.{site}"


class SiteSwitches(Switch):
    """One switch instance per site, joined by the wire; seen from outside as one switch."""

    name = "sites"
    description = "one switch per emulated host, joined by a wire"

    def __init__(self, ctx: SwitchContext, scenario: Scenario, switch_cls: type[Switch]) -> None:
        super().__init__(ctx)
        self.scenario = scenario
        self.switch_cls = switch_cls
        self.site_ns = {site: ctx.run_id.name(site) for site in scenario.sites}
        self.inner: dict[str, Switch] = {}
        self._regs: list[Registration] = []
        self.wire_ifs: dict[str, str] = {}     # site -> its end of the veth wire
        self.port_ifs: dict[str, str] = {}     # site -> the switch port of the wire
        self.tunnel = "kernel"                 # remote-vxlan: kernel VXLAN devices, or "ovs"

    @classmethod
    def availability(cls) -> Availability:
        return Availability(True)

    def _track(self, reg: Registration | None) -> None:
        if reg is not None:
            self._regs.append(reg)

    # -- life cycle ----------------------------------------------------------------------------
    def setup(self) -> None:
        ctx = self.ctx
        for site, ns in self.site_ns.items():
            space = Namespace(ns, ctx.registry).__enter__()
            self._track(space._reg)
            switch = self.switch_cls(replace(ctx, netns=ns))
            reg = ctx.registry.register(f"switch {self.switch_cls.name} on {site}",
                                        switch.teardown)
            self._track(reg)
            self.inner[site] = switch
            switch.setup()
        self._wire()
        self.wait_up()

    def _wire(self) -> None:
        (a, ns_a), (b, ns_b) = self.site_ns.items()
        rid = self.ctx.run_id
        w_a, w_b = rid.ifname("w1"), rid.ifname("w2")
        pair = VethPair(w_a, ns_a, w_b, ns_b, self.ctx.registry).__enter__()
        self._track(pair._reg)
        self.wire_ifs = {a: w_a, b: w_b}
        for site, ifname in self.wire_ifs.items():
            if self.scenario.wire == "vxlan":
                ip("link", "set", "dev", ifname, "mtu", WIRE_MTU, netns=self.site_ns[site])
            set_up(self.site_ns[site], ifname)
        if self.scenario.wire == "veth":
            for site, ifname in self.wire_ifs.items():
                self.port_ifs[site] = ifname
                self.inner[site].adopt(wire_key(site), ifname)
            return
        if self.scenario.wire != "vxlan":
            raise UsageError(f"scenario {self.scenario.name}: unknown wire "
                             f"{self.scenario.wire!r} (veth or vxlan)")
        locals_ = dict(zip(self.site_ns, UNDERLAY))
        if all(hasattr(s, "adopt_tunnel") for s in self.inner.values()):
            self._ovs_tunnel(locals_)
            return
        for index, (site, ns) in enumerate(self.site_ns.items()):
            wire = self.wire_ifs[site]
            add_address(ns, wire, locals_[site])
            peer = next(cidr for s, cidr in locals_.items() if s != site)
            vx = rid.ifname(f"x{index + 1}")
            ip("link", "add", vx, "type", "vxlan", "id", VXLAN_VNI, "local",
               locals_[site].split("/")[0], "remote", peer.split("/")[0], "dstport", VXLAN_PORT,
               "dev", wire, netns=ns)
            # (removed with its namespace; the veth's registration removes the wire)
            ip("link", "set", "dev", vx, "mtu", "1500", netns=ns)
            self.port_ifs[site] = vx
            self.inner[site].adopt(wire_key(site), vx, underlay=wire)

    def _ovs_tunnel(self, locals_: dict[str, str]) -> None:
        """OVS: its own VXLAN ports (userspace tunnelling over a second bridge on the wire)."""
        macs = {}
        for site in self.site_ns:
            peer = next(cidr for s, cidr in locals_.items() if s != site)
            switch: Any = self.inner[site]
            att = switch.adopt_tunnel(wire_key(site), self.wire_ifs[site], locals_[site],
                                      peer.split("/")[0], VXLAN_VNI, WIRE_MTU)
            self.port_ifs[site] = att.switch_ifname or "?"
            macs[site] = att.switch_mac
        for site in self.site_ns:
            peer = next(s for s in self.site_ns if s != site)
            self.inner[site].tunnel_neighbour(  # type: ignore[attr-defined]
                locals_[peer].split("/")[0], macs[peer])
        self.tunnel = "ovs"

    def wait_up(self) -> None:
        for site, ns in self.site_ns.items():
            wait_link_up(ns, self.wire_ifs[site])   # (a VXLAN device's operstate stays UNKNOWN)

    def site_of(self, key: str) -> str:
        site = self.scenario.host(key.split(".")[0]).site
        if site not in self.inner:
            raise UsageError(f"scenario {self.scenario.name}: host of port {key} is on no site")
        return site

    def attach(self, port: HostPort) -> Attachment:
        att = self.inner[self.site_of(port.key)].attach(port)
        self.attachments[port.key] = att
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        """Each hop within a site goes to that site's switch; a hop across the wire becomes
        src -> wire on the source's site and wire -> dst on the destination's. The wire's
        attachment takes the MAC of the host beyond it, so learning switches with static
        entries (bridge_fdb=static) point that MAC at the wire."""
        halves: dict[str, list[ForwardPath]] = {site: [] for site in self.inner}
        for path in paths:
            a, b = self.site_of(path.src), self.site_of(path.dst)
            if a == b:
                halves[a].append(path)
                continue
            halves[a].append(ForwardPath(path.src, wire_key(a)))
            halves[b].append(ForwardPath(wire_key(b), path.dst))
            self.inner[a].attachments[wire_key(a)].host_mac = self.attachments[path.dst].host_mac
        for site, switch in self.inner.items():
            switch.forward(halves[site])

    def teardown(self) -> None:
        while self._regs:
            self._regs.pop().release()
        self.inner.clear()

    # -- inspection -----------------------------------------------------------------------------
    def config_dump(self) -> str:
        wire = (f"wire: {self.scenario.wire}; "
                + ", ".join(f"{s}: {self.wire_ifs.get(s, '?')} (port {self.port_ifs.get(s)})"
                            for s in self.inner))
        if self.scenario.wire == "vxlan":
            tunnel = "OVS userspace" if self.tunnel == "ovs" else "kernel"
            wire += (f"; {tunnel} VXLAN VNI {VXLAN_VNI} UDP {VXLAN_PORT} over "
                     f"{' / '.join(UNDERLAY)} MTU {WIRE_MTU}")
        return wire + "\n" + "\n".join(f"#### site {site} ({self.site_ns[site]})\n"
                                       + switch.config_dump()
                                       for site, switch in self.inner.items())

    def port_counters(self) -> list[PortCounters]:
        return [replace(c, port=f"{site}/{c.port}") for site, switch in self.inner.items()
                for c in switch.port_counters()]

    def busy_cycles(self) -> BusyCycles | None:
        found = [s.busy_cycles() for s in self.inner.values()]
        if not found or any(b is None for b in found):
            return None
        return BusyCycles(sum(b.cycles for b in found if b), sum(b.packets for b in found if b))

    def flow_field(self) -> str | None:
        return next(iter(self.inner.values())).flow_field() if self.inner else None

    def stats(self) -> dict[str, object]:
        return {site: switch.stats() for site, switch in self.inner.items()}

    def forwarding_mode(self) -> str:
        modes = {site: switch.forwarding_mode() for site, switch in self.inner.items()}
        if len(set(modes.values())) == 1:
            return next(iter(modes.values()))
        return "; ".join(f"{site}: {mode}" for site, mode in modes.items())

    def daemon_pids(self) -> dict[str, int]:
        """Processes in the sites' namespaces and those the inner switches name (per site)."""
        found: dict[str, int] = {}
        for site, switch in self.inner.items():
            for pid in namespace_pids(self.site_ns[site]):
                found[f"{site} {pid}"] = pid
            getter = getattr(switch, "daemon_pids", None)
            extra = getter() if callable(getter) else {}
            items = extra.items() if isinstance(extra, dict) else ((p, p) for p in extra)
            for name, pid in items:
                found[f"{site} {name}"] = int(pid)
        return found
