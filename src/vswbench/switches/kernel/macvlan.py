"""`macvlan` in bridge mode: every host port is a macvlan child of one parent, and frames between
children of the same parent are switched inside the macvlan driver.

The kernel has no `dummy`, so the parent is one end (vsb<id>mvp) of a veth pair whose other end
(vsb<id>mvq) also stays in the switch namespace. Both must be UP: a macvlan child only has carrier
when its parent has, and a veth has carrier only when its peer is up too. Children are created in
the switch namespace on the parent and moved into the host namespace in the same `ip link add`
(IFLA_NET_NS_FD), under HostPort.ifname. switch_ifname is None; port counters are the children's,
read in their namespaces.

Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it.

Placement: bridge-mode delivery hands the frame to the destination child with netif_rx (the
backlog), so there is no NAPI instance to thread. In kernel_mode=napi the children get RPS to the
switch CPU instead: the receive half of the switching runs there ("rps cpuN").
"""
from __future__ import annotations

from vswbench.errors import UsageError
from vswbench.host.netns import ip
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import read_counters
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.counters import switch_view
from vswbench.switches.kernel.links import create_veth
from vswbench.switches.kernel.links import finish_host_end
from vswbench.switches.kernel.napi import place_rps
from vswbench.switches.kernel.switch import KernelSwitch


class MacvlanSwitch(KernelSwitch):
    name = "macvlan"
    link_roles = {"mvp|mvq": "the macvlan master and its peer (kernel/macvlan.py)"}
    description = "macvlan children of one parent, bridge mode"
    kernel_tx_ok = False                # the tester's ports are macvlan devices: no XDP_TX
    tools = {"ip": "iproute2", "ethtool": "ethtool", "tee": "coreutils"}

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH", "MACVLAN", "RPS"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    @property
    def parent(self) -> str:
        return self.ctx.run_id.ifname("mvp")

    @property
    def parent_peer(self) -> str:
        return self.ctx.run_id.ifname("mvq")

    def setup(self) -> None:
        ns = self.ctx.netns
        self.track(create_veth(self.ctx, self.parent, ns, self.parent_peer, ns))
        for dev in (self.parent_peer, self.parent):
            set_up(ns, dev)
        wait_link_up(ns, self.parent)

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.attachments:
            raise UsageError(f"macvlan: port {port.key} attached twice")
        ns = self.ctx.netns
        ip("link", "add", "link", self.parent, "name", port.ifname, "netns", port.netns,
           "type", "macvlan", "mode", "bridge", netns=ns)

        def delete(port: HostPort = port) -> None:
            if namespace_exists(port.netns):
                ip("link", "del", port.ifname, netns=port.netns, check=False)

        self.register(f"macvlan {port.netns}/{port.ifname}", delete)
        finish_host_end(port)
        wait_link_up(port.netns, port.ifname)
        att = Attachment(port, None, host_mac=mac_address(port.netns, port.ifname))
        self.attachments[port.key] = att
        place_rps(self.ctx, port.netns, port.ifname, self.placed)
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        self.out_of(paths)  # validates the keys; bridge mode switches by destination MAC

    def port_counters(self) -> list[PortCounters]:
        out: list[PortCounters] = []
        for att in self.attachments.values():
            out += map(switch_view, read_counters(att.host.netns, [att.host.ifname]))
        return out  # the host ends, seen from the switch (rx = frames the host sent)

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section("parent", ["ip", "-n", ns, "-d", "link", "show", "dev", self.parent])]
        parts += [section(att.host.key, ["ip", "-n", att.host.netns, "-d", "link", "show", "dev",
                                         att.host.ifname]) for att in self.attachments.values()]
        return "\n".join([*parts, self.placement_notes()])
