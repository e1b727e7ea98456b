"""`bridge`: a Linux bridge device in the switch namespace; its ports are the switch-side veth ends.

Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it. STP is off (ports forward at once).
The bridge learns; forward() also adds a static fdb entry for every path's destination host
(option bridge_fdb=static, the default), because a host that only receives (a sink, an NF's input)
never teaches the bridge its MAC and every frame towards it would be flooded to all ports.
bridge_fdb=learn leaves the table to learning alone (flooding until the hosts have spoken).

Functions (switches/rules/functions.py): acl puts an nftables table of the bridge family in the
switch namespace whose forward chain holds table_size drop rules the traffic never matches, so
every frame the bridge forwards is compared with all of them (as the router's acl, at layer 2:
the bridge family's own forward hook, no br_netfilter). It goes with the namespace.
"""
from __future__ import annotations

from collections.abc import Mapping

from vswbench.errors import UsageError
from vswbench.host.netns import ip
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.napi import place_napi
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.switches.rules.batch import nft_file
from vswbench.switches.rules.functions import FunctionOptions
from vswbench.switches.rules.functions import nft_acl

FDB_MODES = ("static", "learn")
NFT_TABLE = "vsbfn"          # inside the switch namespace only


def fdb_mode(options: Mapping[str, str]) -> str:
    """Option bridge_fdb (default static), or UsageError before anything is built."""
    mode = options.get("bridge_fdb", "static")
    if mode not in FDB_MODES:
        raise UsageError(f"option bridge_fdb={mode!r}: expected one of {', '.join(FDB_MODES)}")
    return mode


class BridgeSwitch(FunctionOptions, KernelSwitch):
    name = "bridge"
    link_roles = {**KernelSwitch.link_roles, "br": "the bridge (kernel/bridge.py)"}
    description = "Linux bridge (learning) in its own namespace, veth ports"
    options_read = {**KernelSwitch.options_read,
                    "bridge_fdb": "bridge: static or learning forwarding database"}
    tools = {**KernelSwitch.tools, "bridge": "iproute2"}
    wire_capable = True
    functions = frozenset({"l2", "acl"})

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH", "BRIDGE"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    @property
    def bridge_name(self) -> str:
        name: str = self.ctx.run_id.ifname("br")   # ctx is FunctionOptions' (Any) before Switch's
        return name

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        super().check_options(options)
        fdb_mode(options)

    def setup(self) -> None:
        fdb_mode(self.ctx.options)
        br, netns = self.bridge_name, self.ctx.netns
        ip("link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0",
           "mcast_snooping", "0", netns=netns)

        def delete() -> None:
            if namespace_exists(netns):
                ip("link", "del", br, netns=netns, check=False)

        self.register(f"bridge {netns}/{br}", delete)
        ip("link", "set", "dev", br, "up", netns=netns)

    def attach(self, port: HostPort) -> Attachment:
        att = super().attach(port)
        assert att.switch_ifname is not None
        ip("link", "set", "dev", att.switch_ifname, "master", self.bridge_name,
           netns=self.ctx.netns)
        wait_link_up(self.ctx.netns, att.switch_ifname)
        return att

    def adopt(self, key: str, ifname: str, underlay: str = "") -> Attachment:
        """A bridge port on an existing interface (the wire, or a VXLAN device over it); the
        receive work of the veth that carries the frames (`underlay`, else the port itself)
        moves to the switch CPU as on every other port."""
        netns = self.ctx.netns
        ip("link", "set", "dev", ifname, "master", self.bridge_name, netns=netns)
        set_up(netns, ifname)   # (carrier comes once the wire's far end is up too)
        att = Attachment(HostPort(key, netns, ifname, ""), ifname,
                         switch_mac=mac_address(netns, ifname))
        self.attachments[key] = att
        place_napi(self.ctx, netns, underlay or ifname, self.placed)
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        fn = self.function
        self.install_seconds: dict[str, float] = {}
        if fn.name == "acl":
            text = nft_acl(NFT_TABLE, fn.table_size, family="bridge")
            self.install_seconds["nft"] = round(nft_file(self.ctx.netns, text,
                                                         self.ctx.temp_dir), 4)
        if self.ctx.options.get("bridge_fdb", "static") != "static":
            return
        static_fdb(self, paths)

    def config_dump(self) -> str:
        ns = self.ctx.netns
        return "\n".join([
            section("bridge", ["ip", "-n", ns, "-d", "link", "show", "dev", self.bridge_name]),
            section("bridge link", ["bridge", "-n", ns, "link", "show"]),
            section("bridge fdb", ["bridge", "-n", ns, "fdb", "show", "br", self.bridge_name]),
            *([section("nftables", ["ip", "netns", "exec", ns, "nft", "list", "ruleset"])]
              if self.function.name == "acl" else []),
            self.placement_notes()])

    def stats(self) -> dict[str, object]:
        fn = self.function
        if fn.name == "l2":
            return {}
        return {"function": fn.name, "table_size": fn.table_size,
                "install_seconds": getattr(self, "install_seconds", {})}


def static_fdb(switch: KernelSwitch, paths: list[ForwardPath]) -> None:
    """One static FDB entry per destination port of the paths: the bridge never floods."""
    for dst in {id(a): a for a in switch.out_of(paths).values()}.values():
        assert dst.switch_ifname is not None
        run(["bridge", "-n", switch.ctx.netns, "fdb", "replace", dst.host_mac, "dev",
             dst.switch_ifname, "master", "static"])
