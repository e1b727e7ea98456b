"""The CNI backends other than the bridge plugin's (switch.py says what every CNI backend does):

  cni-macvlan      the macvlan plugin, mode bridge, master a veth end in the switch namespace
                   (the kernel has no dummy: as switches/kernel/macvlan.py does)
  cni-ptp          the ptp plugin: a veth pair per container, the host end in the switch
                   namespace holding the gateway address as /32, routes both ways (l3)
  cni-host-device  the host-device plugin: a veth pair per pair of talking ports, made in the
                   switch namespace, each end moved into its container (no switch: the CNI form
                   of the veth baseline)
  cni-vlan         the vlan plugin: each container gets a VLAN (id 100) child of its own master,
                   a veth end whose peer is a port of one plain bridge (frames cross the bridge
                   tagged and are untagged into the receiving container)
"""
from __future__ import annotations

import ipaddress
from typing import Any

import vswbench.switches.cni.netconf as nc
from vswbench.errors import UsageError
from vswbench.host.netns import ip
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.run.ids import NUM
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import link_pairs
from vswbench.switches.cni.plugin import PACKAGE
from vswbench.switches.cni.switch import CniSwitch
from vswbench.switches.cni.switch import container_side
from vswbench.switches.kernel.counters import read_counters
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.counters import switch_view
from vswbench.switches.kernel.links import create_veth
from vswbench.switches.kernel.napi import place_napi
from vswbench.switches.kernel.napi import place_rps

VLAN_ID = 100


class HostEndCounters(CniSwitch):
    """Counters of the containers' ends, seen from the switch (macvlan, vlan, host-device)."""

    def port_counters(self) -> list[PortCounters]:
        out: list[PortCounters] = []
        for att in self.attachments.values():
            out += map(switch_view, read_counters(att.host.netns, [att.host.ifname]))
        return out

    def child_attachment(self, port: HostPort) -> Attachment:
        inv = self.cni_add(port)
        name, mac = container_side(inv.result)
        wait_link_up(port.netns, name or port.ifname)
        att = Attachment(port, None, host_mac=mac or mac_address(port.netns, port.ifname))
        self.attachments[port.key] = att
        return att

    def config_dump(self) -> str:
        parts = [self.netconf_dump()]
        parts += [section(att.host.key, ["ip", "-n", att.host.netns, "-d", "link", "show", "dev",
                                         att.host.ifname]) for att in self.attachments.values()]
        return "\n".join([*parts, self.placement_notes()])


class CniMacvlan(HostEndCounters):
    name = "cni-macvlan"
    link_roles = {**CniSwitch.link_roles, "mvp|mvq": "the macvlan master and its peer (cni/others.py)"}
    baseline = "macvlan"
    description = "CNI macvlan plugin, mode bridge, on one veth master; host-local IPAM"
    plugin = "macvlan"
    kernel_tx_ok = False                # the tester's ports are macvlan devices: no XDP_TX
    tools = {**CniSwitch.tools, "/usr/lib/cni/macvlan": PACKAGE}

    @classmethod
    def kernel_options(cls) -> list[str]:
        return ["VETH", "MACVLAN", "RPS"]

    def setup(self) -> None:
        ns = self.ctx.netns
        master, peer = self.ctx.run_id.ifname("mvp"), self.ctx.run_id.ifname("mvq")
        self.track(create_veth(self.ctx, master, ns, peer, ns))
        for dev in (peer, master):
            set_up(ns, dev)
        wait_link_up(ns, master)

    def main_plugin(self, port: HostPort) -> dict[str, Any]:
        return nc.macvlan(self.ctx.run_id.ifname("mvp"), self.ipam(port))

    def attach(self, port: HostPort) -> Attachment:
        att = self.child_attachment(port)
        place_rps(self.ctx, port.netns, port.ifname, self.placed)
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        self.out_of(paths)   # bridge mode switches by destination MAC


class CniPtp(CniSwitch):
    """One network per port, a /24 each (198.18.<i+1>.0/24, gateway .1, the addresses the plan
    gives l3 ports): ptp puts a route to its gateway /32 into the container, and two ports of
    one container on one network would collide there (the tester has two)."""
    name = "cni-ptp"
    link_roles = {**CniSwitch.link_roles, rf"cni{NUM}": "a network per port (cni/others.py)"}
    baseline = "router"
    description = ("CNI ptp plugin: a veth pair per container, routed in the switch namespace "
                   "(each port a /24 network, its gateway /32 on the host end); host-local IPAM")
    plugin = "ptp"
    l3 = True
    tools = {**CniSwitch.tools, "/usr/lib/cni/ptp": PACKAGE}

    def setup(self) -> None:
        pass   # the plugin turns on ip_forward in the switch namespace itself

    def network_for(self, port: HostPort) -> tuple[str, str]:
        """(subnet, gateway) of the port's own network."""
        iface = ipaddress.ip_interface(port.ip_cidr)
        return str(iface.network), str(next(iface.network.hosts()))

    def netconf(self, port: HostPort) -> dict[str, Any]:
        subnet, gateway = self.network_for(port)
        ipam = nc.host_local(self.state_dir("ipam"), subnet, gateway)
        index = len(self.invocations)
        return nc.conflist(self.ctx.run_id.name(f"cni{index}"), [nc.ptp(ipam)])

    def attach(self, port: HostPort) -> Attachment:
        att = self.veth_attach(port)
        assert att.switch_ifname is not None
        att.gateway_ip = self.network_for(port)[1]
        # permanent neighbours on the switch side, so no ARP frame mixes with the measured ones
        set_neighbour(self.ctx.netns, att.switch_ifname, port.ip_cidr.split("/")[0],
                      att.host_mac)
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        self.out_of(paths)   # the plugin's host routes (/32 per container) forward by address

    def config_dump(self) -> str:
        ns = self.ctx.netns
        return "\n".join([self.netconf_dump(),
                          section("addresses", ["ip", "-n", ns, "-br", "addr", "show"]),
                          section("routes", ["ip", "-n", ns, "route", "show"]),
                          self.placement_notes()])


class CniHostDevice(HostEndCounters):
    name = "cni-host-device"
    link_roles = {**CniSwitch.link_roles, rf"hd{NUM}": "the moved veth ends (cni/others.py)"}
    baseline = "veth"
    description = ("CNI host-device plugin: the two ends of a veth pair made in the switch "
                   "namespace, moved into the containers (no switch); host-local IPAM")
    plugin = "host-device"
    direct = True
    tools = {**CniSwitch.tools, "/usr/lib/cni/host-device": PACKAGE}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ports: dict[str, HostPort] = {}
        self.device: dict[str, str] = {}

    def setup(self) -> None:
        pass

    def main_plugin(self, port: HostPort) -> dict[str, Any]:
        return nc.host_device(self.device[port.key], self.ipam(port))

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.ports:
            raise UsageError(f"{self.name}: port {port.key} attached twice")
        self.ports[port.key] = port
        att = Attachment(port, None)
        self.attachments[port.key] = att
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        for a, b in link_pairs(paths, who=self.name):
            first = len(self.device)
            names = (self.ctx.run_id.ifname(f"hd{first}"), self.ctx.run_id.ifname(f"hd{first + 1}"))
            self.track(create_veth(self.ctx, names[0], ns, names[1], ns))
            for key, dev in zip((a, b), names, strict=True):
                self.device[key] = dev
                port = self.ports[key]
                inv = self.cni_add(port)
                mac = container_side(inv.result)[1] or mac_address(port.netns, port.ifname)
                self.attachments[key].host_mac = mac
            for key in (a, b):
                port = self.ports[key]
                wait_link_up(port.netns, port.ifname)
                place_napi(self.ctx, port.netns, port.ifname, self.placed)


class CniVlan(HostEndCounters):
    name = "cni-vlan"
    link_roles = {**CniSwitch.link_roles, "br": "the bridge (cni/others.py)",
                  rf"vm{NUM}|vq{NUM}": "each port's veth master and peer (cni/others.py)"}
    description = ("CNI vlan plugin: a VLAN 100 child per container on its own veth master, "
                   "the masters' peers ports of one bridge; host-local IPAM")
    plugin = "vlan"
    kernel_tx_ok = False                # the tester's ports are VLAN devices: no XDP_TX
    tools = {**CniSwitch.tools, "bridge": "iproute2", "/usr/lib/cni/vlan": PACKAGE}

    @classmethod
    def kernel_options(cls) -> list[str]:
        return ["VETH", "BRIDGE", "VLAN_8021Q"]

    @property
    def bridge_name(self) -> str:
        return self.ctx.run_id.ifname("br")

    def setup(self) -> None:
        ns, br = self.ctx.netns, self.bridge_name
        ip("link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0",
           "mcast_snooping", "0", netns=ns)

        def delete() -> None:
            if namespace_exists(ns):
                ip("link", "del", br, netns=ns, check=False)

        self.register(f"bridge {ns}/{br}", delete)
        set_up(ns, br)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.masters: dict[str, str] = {}
        self.peers: dict[str, str] = {}

    def main_plugin(self, port: HostPort) -> dict[str, Any]:
        return nc.vlan(self.masters[port.key], VLAN_ID, self.ipam(port))

    def attach(self, port: HostPort) -> Attachment:
        ns, index = self.ctx.netns, len(self.attachments)
        master, peer = self.ctx.run_id.ifname(f"vm{index}"), self.ctx.run_id.ifname(f"vq{index}")
        self.track(create_veth(self.ctx, master, ns, peer, ns))
        ip("link", "set", "dev", peer, "master", self.bridge_name, netns=ns)
        for dev in (peer, master):
            set_up(ns, dev)
        wait_link_up(ns, master)
        self.masters[port.key], self.peers[port.key] = master, peer
        att = self.child_attachment(port)
        place_napi(self.ctx, ns, peer, self.placed)
        return att

    def port_counters(self) -> list[PortCounters]:
        return read_counters(self.ctx.netns, self.peers.values())   # the bridge's ports

    def forward(self, paths: list[ForwardPath]) -> None:
        """Static fdb entries for the receiving containers, as bridge_fdb=static does."""
        for dst in {id(a): a for a in self.out_of(paths).values()}.values():
            run(["bridge", "-n", self.ctx.netns, "fdb", "replace", dst.host_mac, "dev",
                 self.peers[dst.host.key], "master", "static"])
