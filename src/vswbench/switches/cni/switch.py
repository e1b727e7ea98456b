"""CniSwitch: a switch built by CNI plugins as a runtime builds a container's network, and the
bridge plugin's backends.

Each host port is a container: setup() makes what the plugins need to exist beforehand (a master
device, for macvlan and vlan), attach() runs ADD for the port (netconf.py builds the list,
plugin.py calls it) with the port's planned address as runtimeConfig "ips", DEL is registered at
once (teardown, an error and a signal all run it; `vswbench clean` runs it from the record for a
killed run). The plugins run in the switch namespace, so the bridge, the host ends of the veths
and every iptables rule they install live there and never in the root namespace.

What the harness adds on top of the plugins' wiring, as it does for every kernel backend (and
says in config_dump): the kernel_mode placement (TSO off on both ends of each plugin-made veth,
threaded NAPI on its host end, pinned to the switch CPU) and, for the bridge backends, static fdb
entries for the receiving hosts (bridge_fdb=static, bridge.py: a host that only receives never
teaches the bridge its MAC, and every frame would be flooded, and with hairpinMode on flooded back
to its sender too).

The bridge backends, the netconfs Podman and containerd ship (netconf.py):
  cni-bridge            isGateway, ipMasq, hairpinMode (Podman's default network, 87-podman)
  cni-bridge-promisc    isGateway, ipMasq, promiscMode (containerd's 10-containerd-net)
  cni-bridge-bare       all four off: the plugin's mechanism alone, against `bridge`
  cni-bridge-bandwidth, -firewall, -tuning: cni-bridge with that plugin chained after it
ipMasq installs, in the plugin's (switch) namespace, an iptables-nft rule in nat POSTROUTING
(`ip saddr <container> jump CNI-<hash>`) and that chain (accept to the subnet, masquerade the
rest); DEL removes both and leaves the empty nat table, which goes with the namespace.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import ClassVar

import vswbench.switches.cni.netconf as nc
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.netns import ip
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import wait_link_up
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import SwitchContext
from vswbench.switches.cni.plugin import PACKAGE
from vswbench.switches.cni.plugin import Invocation
from vswbench.switches.cni.plugin import add
from vswbench.switches.cni.plugin import delete
from vswbench.switches.cni.plugin import plugin_versions
from vswbench.switches.cni.plugin import record
from vswbench.switches.cni.plugin import record_path
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.bridge import fdb_mode
from vswbench.switches.kernel.bridge import static_fdb
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.iface import ethtool_k
from vswbench.switches.kernel.napi import kernel_mode
from vswbench.switches.kernel.switch import KernelSwitch


def host_side(result: Mapping[str, Any], exclude: str = "") -> tuple[str, str]:
    """(name, mac) of the interface a plugin made on the host side (no "sandbox"), not
    `exclude` (the bridge); ("", "") when there is none."""
    for iface in result.get("interfaces") or []:
        if not iface.get("sandbox") and iface.get("name") != exclude:
            return str(iface.get("name", "")), str(iface.get("mac", ""))
    return "", ""


def container_side(result: Mapping[str, Any]) -> tuple[str, str]:
    for iface in result.get("interfaces") or []:
        if iface.get("sandbox"):
            return str(iface.get("name", "")), str(iface.get("mac", ""))
    return "", ""


class CniSwitch(KernelSwitch):
    """A backend whose ports are made by one CNI network (a conflist)."""
    link_roles = {**KernelSwitch.link_roles, "cni": "the CNI network's name (cni/switch.py)"}
    baseline = "bridge"         # the containers section compares it with the bridge
    container_network = True    # left out of switch = ["*"]: specs/containers.toml
    plugin: ClassVar[str] = ""                  # the main plugin
    chain: ClassVar[tuple[str, ...]] = ()       # plugins chained after it
    tools = {**KernelSwitch.tools, "/usr/lib/cni/host-local": PACKAGE}
    kernel_tx_ok = True

    @classmethod
    def plugins(cls) -> tuple[str, ...]:
        return (cls.plugin, "host-local", *cls.chain)

    @classmethod
    def kernel_options(cls) -> list[str]:
        return ["VETH"]

    @classmethod
    def availability(cls) -> Availability:
        # (the plugins are tools by their full path: /usr/lib/cni is on no PATH)
        missing = basic_availability(cls.tools, cls.kernel_options())
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return {**kernel_versions(), **plugin_versions(cls.plugins()[:1] + cls.chain)}

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        if not ctx.temp_dir:
            raise VswbenchError(f"{self.name}: no run directory for host-local's state")
        self.invocations: dict[str, Invocation] = {}
        self.netconf_shown: dict[str, Any] = {}

    # -- the network ----------------------------------------------------------------------
    @property
    def network_name(self) -> str:
        return self.ctx.run_id.name("cni")

    def state_dir(self, what: str) -> str:
        return str(Path(self.ctx.temp_dir) / what)

    def ipam(self, port: HostPort) -> dict[str, Any]:
        return nc.host_local(self.state_dir("ipam"), nc.L2_SUBNET, self.ipam_gateway())

    def ipam_gateway(self) -> str | None:
        return nc.L2_GATEWAY

    def main_plugin(self, port: HostPort) -> dict[str, Any]:
        raise NotImplementedError

    def netconf(self, port: HostPort) -> dict[str, Any]:
        plugins = [self.main_plugin(port),
                   *(nc.chained(kind, self.state_dir(kind)) for kind in self.chain)]
        return nc.conflist(self.network_name, plugins)

    # -- ADD / DEL --------------------------------------------------------------------------
    def cni_add(self, port: HostPort) -> Invocation:
        """ADD for one port; its DEL registered before the plugins run (an ADD cut short is
        undone too: DEL of what does not exist succeeds, as the spec asks of plugins)."""
        if port.key in self.invocations:
            raise UsageError(f"{self.name}: port {port.key} attached twice")
        if not port.ip_cidr:
            raise UsageError(f"{self.name}: port {port.key} has no address")
        inv = Invocation(self.netconf(port), self.ctx.netns, port.netns, port.ifname,
                         container_id=port.ifname, ips=(port.ip_cidr,))
        self.netconf_shown = inv.netconf
        record(self.ctx.temp_dir, inv)
        self.invocations[port.key] = inv
        self.register(f"CNI DEL {port.netns}/{port.ifname}", lambda: self.cni_del(port.key))
        inv = dataclasses.replace(inv, result=add(inv))
        self.invocations[port.key] = inv
        record(self.ctx.temp_dir, inv)
        return inv

    def cni_del(self, key: str) -> None:
        inv = self.invocations.pop(key, None)
        if inv is None or not namespace_exists(inv.plugin_netns):
            return
        errors = delete(inv)
        record_path(self.ctx.temp_dir, inv).unlink(missing_ok=True)
        if errors:
            raise VswbenchError("; ".join(errors))

    def napi_on_plugin_veth(self, att: Attachment) -> None:
        """The harness's placement on a veth the plugin made: TSO off on both ends (links.py
        says why), then threaded NAPI on the host end (KernelSwitch.place_port)."""
        assert att.switch_ifname is not None
        if kernel_mode(self.ctx) == "napi":
            ethtool_k(self.ctx.netns, att.switch_ifname, tso=False)
            ethtool_k(att.host.netns, att.host.ifname, tso=False)
        self.place_port(att)

    def veth_attach(self, port: HostPort, exclude: str = "") -> Attachment:
        """ADD, then the Attachment of a plugin that makes a veth pair (bridge, ptp)."""
        inv = self.cni_add(port)
        swif, swmac = host_side(inv.result, exclude)
        if not swif:
            raise VswbenchError(f"{self.name}: ADD for {port.key} named no host-side interface")
        wait_link_up(port.netns, port.ifname)
        att = Attachment(port, swif, host_mac=mac_address(port.netns, port.ifname),
                         switch_mac=swmac or mac_address(self.ctx.netns, swif))
        self.attachments[port.key] = att
        self.napi_on_plugin_veth(att)
        return att

    def stats(self) -> dict[str, object]:
        return {"cni_plugins": [self.plugin, *self.chain], "cni_netconf": self.netconf_shown}

    def netconf_dump(self) -> str:
        body = json.dumps(self.netconf_shown, indent=1) if self.netconf_shown else "(none)"
        return f"## CNI netconf ({', '.join(nc.plugin_types(self.netconf_shown)) or '-'})\n" \
               f"{body}\n"


class CniBridge(CniSwitch):
    name = "cni-bridge"
    link_roles = {**CniSwitch.link_roles, "br": "the bridge (cni/switch.py)"}
    description = ("CNI bridge plugin (Debian containernetworking-plugins), Podman's default "
                   "netconf: isGateway, ipMasq, hairpinMode; host-local IPAM")
    plugin = "bridge"
    tools = {**CniSwitch.tools, "bridge": "iproute2", "iptables": "iptables",
             "/usr/lib/cni/bridge": PACKAGE}
    options_read = {**KernelSwitch.options_read,
                    "bridge_fdb": "bridge: static or learning forwarding database"}
    gateway: ClassVar[bool] = True
    ipmasq: ClassVar[bool] = True
    hairpin: ClassVar[bool] = True
    promisc: ClassVar[bool] = False

    @classmethod
    def kernel_options(cls) -> list[str]:
        return ["VETH", "BRIDGE", *(["NFT_MASQ", "NFT_COMPAT"] if cls.ipmasq else [])]

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        super().check_options(options)
        fdb_mode(options)

    @property
    def bridge_name(self) -> str:
        return self.ctx.run_id.ifname("br")

    def ipam_gateway(self) -> str | None:
        return nc.L2_GATEWAY if self.gateway else None

    def main_plugin(self, port: HostPort) -> dict[str, Any]:
        return nc.bridge(self.bridge_name, self.ipam(port), gateway=self.gateway,
                         ipmasq=self.ipmasq, hairpin=self.hairpin, promisc=self.promisc)

    def setup(self) -> None:
        fdb_mode(self.ctx.options)
        netns, br = self.ctx.netns, self.bridge_name

        def delete_bridge() -> None:   # the plugin makes the bridge and never deletes it
            if namespace_exists(netns):
                ip("link", "del", br, netns=netns, check=False)

        self.register(f"bridge {netns}/{br} (made by the CNI bridge plugin)", delete_bridge)

    def attach(self, port: HostPort) -> Attachment:
        return self.veth_attach(port, exclude=self.bridge_name)

    def forward(self, paths: list[ForwardPath]) -> None:
        if fdb_mode(self.ctx.options) != "static":
            return
        static_fdb(self, paths)

    def config_dump(self) -> str:
        ns = self.ctx.netns
        return "\n".join([
            self.netconf_dump(),
            section("bridge", ["ip", "-n", ns, "-d", "link", "show", "dev", self.bridge_name]),
            section("bridge link", ["bridge", "-n", ns, "link", "show"]),
            section("addresses", ["ip", "-n", ns, "-br", "addr", "show"]),
            section("nftables (what the plugins installed)",
                    ["ip", "netns", "exec", ns, "nft", "list", "ruleset"]),
            section("br_netfilter", ["ip", "netns", "exec", ns, "sysctl",
                                     "net.bridge.bridge-nf-call-iptables"]),
            section("conntrack entries", ["ip", "netns", "exec", ns, "cat",
                                          "/proc/sys/net/netfilter/nf_conntrack_count"]),
            self.placement_notes()])


class CniBridgePromisc(CniBridge):
    name = "cni-bridge-promisc"
    description = ("CNI bridge plugin, containerd's default netconf: isGateway, ipMasq, "
                   "promiscMode; host-local IPAM")
    hairpin = False
    promisc = True


class CniBridgeBare(CniBridge):
    name = "cni-bridge-bare"
    description = ("CNI bridge plugin with isGateway, ipMasq, hairpinMode and promiscMode off "
                   "(the plugin's mechanism alone); host-local IPAM")
    tools = {k: v for k, v in CniBridge.tools.items() if k != "iptables"}
    gateway = ipmasq = hairpin = promisc = False


class CniBridgeBandwidth(CniBridge):
    name = "cni-bridge-bandwidth"
    description = ("cni-bridge's netconf with the bandwidth plugin chained (tbf both ways at "
                   "10 Gbit/s, an ifb device for the container's egress)")
    chain = ("bandwidth",)
    tools = {**CniBridge.tools, "/usr/lib/cni/bandwidth": PACKAGE}

    @classmethod
    def kernel_options(cls) -> list[str]:
        return [*super().kernel_options(), "IFB", "NET_SCH_TBF", "NET_SCH_INGRESS",
                "NET_ACT_MIRRED", "NET_CLS_U32"]


class CniBridgeFirewall(CniBridge):
    name = "cni-bridge-firewall"
    description = ("cni-bridge's netconf with the firewall plugin chained (iptables backend: "
                   "CNI-FORWARD and CNI-ADMIN chains admitting the container)")
    chain = ("firewall",)
    tools = {**CniBridge.tools, "/usr/lib/cni/firewall": PACKAGE}


class CniBridgeTuning(CniBridge):
    name = "cni-bridge-tuning"
    description = ("cni-bridge's netconf with the tuning plugin chained (one sysctl in the "
                   "container: net.core.somaxconn=512)")
    chain = ("tuning",)
    tools = {**CniBridge.tools, "/usr/lib/cni/tuning": PACKAGE}
