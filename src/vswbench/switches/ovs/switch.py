"""Open vSwitch backends: `ovs` (userspace datapath, system ports) and `ovs-afxdp` (afxdp ports,
PMD thread pinned).

The machine has no openvswitch kernel module, so the bridge uses the userspace datapath
(datapath_type=netdev) and ovs-vswitchd runs inside the switch's namespace, where its netdev ports
open their interfaces. The daemons are private to the run (see daemon.py).

Forwarding: by default port-to-port OpenFlow rules (`in_port=X,actions=output:Y` per Path) on a
bridge in fail_mode=secure, so no NORMAL flow exists or ever comes back; with the option
`ovs_mode=normal` the bridge keeps its learning NORMAL flow. `flow_table=exact` installs a rule
per flow (source MAC and IPv4), `clones=K` outputs every frame to K ports: see rules.py.
Functions (switches/rules/functions.py): the drivers' port rules become an LPM table (l3: a rule per
prefix, priority by prefix length), drop rules above them (acl) or ct(commit,nat(src=...)) (nat).

Pitfall handled here: a switch that takes frames out of the kernel stack (system and afxdp ports)
delivers UDP with bad checksums unless TX checksum offload is off on the host-side veth.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from typing import TextIO

from vswbench.errors import CommandError
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host import netlink
from vswbench.host.netns import Namespace
from vswbench.host.netns import VethPair
from vswbench.host.netns import add_address
from vswbench.host.netns import mac_address
from vswbench.host.netns import run
from vswbench.host.netns import run_in
from vswbench.host.netns import set_offload
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.host.netns import wait_until
from vswbench.run.ids import NUM
from vswbench.run.registry import Registration
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import RuleMechanism
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.ovs.daemon import BINARIES
from vswbench.switches.ovs.daemon import INSTALL_FIX
from vswbench.switches.ovs.daemon import OvsError
from vswbench.switches.ovs.daemon import OvsInstance
from vswbench.switches.ovs.daemon import find_schema
from vswbench.switches.ovs.daemon import missing_binaries
from vswbench.switches.ovs.rules import ENGINE_FLOW_FIELD
from vswbench.switches.ovs.rules import EXACT_COOKIE
from vswbench.switches.ovs.rules import FLOW_LIMIT
from vswbench.switches.ovs.rules import PORT_COOKIE
from vswbench.switches.ovs.rules import FlowSource
from vswbench.switches.ovs.rules import RulePath
from vswbench.switches.ovs.rules import clone_outputs
from vswbench.switches.ovs.rules import parse_ovs_options
from vswbench.switches.ovs.rules import rule_lines
from vswbench.switches.ovs.sockets import packet_socket_drops
from vswbench.switches.ovs.stats import datapath_stats
from vswbench.switches.rules.functions import FunctionOptions
from vswbench.switches.rules.functions import check_flows
from vswbench.switches.rules.functions import ovs_function_rules
from vswbench.switches.rules.functions import parse_function

BRIDGE = "br0"
TUNNEL_BRIDGE = "brphy"   # scenario remote-vxlan: the underlay bridge of OVS's VXLAN port
AF_XDP = 44  # socket.AF_XDP, missing from older Pythons

_PORT_RE = re.compile(
    r"port\s+\"?([^\s:\"]+)\"?:\s*rx pkts=(\S+), bytes=\S+, drop=(\S+), errs=(\S+),[^\n]*\n"
    r"\s*tx pkts=(\S+), bytes=\S+, drop=(\S+), errs=(\S+)")


def _count(text: str) -> int:
    text = text.rstrip(",")
    return int(text) if text.isdigit() else 0  # "?" = counter not supported by the port


def parse_dump_ports(text: str) -> dict[str, tuple[int, int, int, int, int, int]]:
    """`ovs-ofctl dump-ports` -> {port: (rx_pkts, rx_drop, rx_errs, tx_pkts, tx_drop, tx_errs)}."""
    return {m.group(1): (_count(m.group(2)), _count(m.group(3)), _count(m.group(4)),
                         _count(m.group(5)), _count(m.group(6)), _count(m.group(7)))
            for m in _PORT_RE.finditer(text)}


@dataclass
class OvsPort:
    key: str
    ifname: str
    ofport: int


class Ovs(FunctionOptions, Switch):
    name = "ovs"
    link_roles = {"sink": "the sink namespace (ovs/switch.py)",
                  rf"o{NUM}|oc{NUM}|ok{NUM}|vx": "ovs ports (ovs/switch.py)"}
    description = "Open vSwitch, userspace datapath (netdev), system ports"
    options_read = {"ovs_mode": "OVS backends: p2p (port-to-port rules) or normal (MAC learning)",
                    "flow_table": "OVS backends: port (a rule per path) or exact (a rule per flow)",
                    "clones": "OVS backends: output ports per frame (1 = no copy)"}
    tools = {binary: "openvswitch-switch" for binary in BINARIES}
    daemons: ClassVar[tuple[str, ...]] = ("ovs-vswitchd", "ovsdb-server", "pmd", "handler",
                                         "revalidator", "urcu")
    functions = frozenset({"l2", "l3", "nat", "acl"})
    port_type = ""          # "" = system: a plain netdev port on the switch-side veth
    wire_capable = True     # the wire of scenario remote: a system port (adopt())

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.opts = parse_ovs_options(ctx.options, self.name)
        self.mode = self.opts.mode
        self.ovs: OvsInstance | None = None
        self.ports: dict[str, OvsPort] = {}
        self.clone_ports: list[OvsPort] = []     # clones=K: the K-1 extra output ports
        self.sink_netns = ctx.run_id.name("sink")
        self.exact_rules = 0                     # per-flow rules installed (flow_table=exact)
        self._first_rules: list[str] = []
        self.function_ports: list[str] = []      # port rules a function replaced
        self._regs: list[Registration] = []

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        opts = parse_ovs_options(options, cls.name)
        fn = parse_function(options, cls.name)
        if fn.name != "l2" and (opts.mode != "p2p" or opts.exact or opts.clones != 1):
            raise UsageError(f"{cls.name}: function {fn.name} replaces the port rules: it needs "
                             "the defaults ovs_mode=p2p, flow_table=port, clones=1")

    def flow_field(self) -> str | None:
        return super().flow_field() or (ENGINE_FLOW_FIELD if self.opts.exact else None)

    # -- availability and versions -------------------------------------------------------------
    @classmethod
    def availability(cls) -> Availability:
        missing = missing_binaries()
        if missing:
            return Availability(False, f"missing {', '.join(missing)}", INSTALL_FIX)
        if find_schema() is None:
            return Availability(False, "no vswitch.ovsschema (Open vSwitch database schema)",
                                INSTALL_FIX)
        return Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        try:
            first = run(["ovs-vswitchd", "--version"]).splitlines()[0]
        except (OSError, CommandError, IndexError):
            return {}
        return {"ovs-vswitchd": first.split()[-1], "kernel": os.uname().release}

    # -- life cycle ------------------------------------------------------------------------------
    def other_config(self) -> dict[str, str]:
        return {}

    def setup(self) -> None:
        ctx = self.ctx
        self.ovs = OvsInstance(ctx.run_id, ctx.registry, ctx.netns, ctx.temp_dir,
                               self.other_config())
        self.ovs.start()
        cpu = self._switch_cpu()
        if cpu is not None:
            self.ovs.pin(cpu)
        fail_mode = "standalone" if self.mode == "normal" else "secure"
        self.ovs.vsctl("add-br", BRIDGE, "--", "set", "Bridge", BRIDGE,
                       "datapath_type=netdev", f"fail_mode={fail_mode}")

    def _switch_cpu(self) -> int | None:
        cpu = self.ctx.placement.switch_cpu
        return cpu if cpu is not None and cpu < (os.cpu_count() or 1) else None

    def _instance(self) -> OvsInstance:
        if self.ovs is None:
            raise OvsError(f"{self.name}: setup() has not run")
        return self.ovs

    def daemon_pids(self) -> dict[str, int]:
        """ovsdb-server and ovs-vswitchd (its PMD and handler threads with it): their CPU time
        is recorded per trial, and the stall monitor counts their threads as the path's."""
        if self.ovs is None:
            return {}
        return {d.name: d.pid for d in (self.ovs.db_server, self.ovs.vswitchd)
                if d is not None and d.running()}

    def attach(self, port: HostPort) -> Attachment:
        ovs = self._instance()
        sw_if = self.ctx.run_id.ifname(f"o{len(self.attachments)}")
        pair = VethPair(port.ifname, port.netns, sw_if, self.ctx.netns, self.ctx.registry)
        pair.__enter__()  # registered for removal; released in teardown()
        if pair._reg is not None:
            self._regs.append(pair._reg)
        set_offload(port.netns, port.ifname, tx=False)  # else UDP leaves OVS with bad checksums
        add_address(port.netns, port.ifname, port.ip_cidr)
        set_up(port.netns, port.ifname)
        set_up(self.ctx.netns, sw_if)
        ovs.vsctl("add-port", BRIDGE, sw_if, "--", "set", "Interface", sw_if,
                  f"ofport_request={len(self.attachments) + 1}", *self.interface_settings())
        ofport = self._wait_ofport(sw_if)
        wait_link_up(port.netns, port.ifname)
        wait_link_up(self.ctx.netns, sw_if)
        self.ports[port.key] = OvsPort(port.key, sw_if, ofport)
        att = Attachment(port, sw_if, host_mac=mac_address(port.netns, port.ifname),
                         switch_mac=mac_address(self.ctx.netns, sw_if))
        self.attachments[port.key] = att
        return att

    def adopt(self, key: str, ifname: str, underlay: str = "") -> Attachment:
        """A system port on an existing interface of the switch namespace (the wire of scenario
        remote, or a kernel VXLAN device over it)."""
        ovs = self._instance()
        set_up(self.ctx.netns, ifname)
        ovs.vsctl("add-port", BRIDGE, ifname, "--", "set", "Interface", ifname,
                  f"ofport_request={len(self.attachments) + 1}")
        self.ports[key] = OvsPort(key, ifname, self._wait_ofport(ifname))
        att = Attachment(HostPort(key, self.ctx.netns, ifname, ""), ifname,
                         switch_mac=mac_address(self.ctx.netns, ifname))
        self.attachments[key] = att
        return att

    def adopt_tunnel(self, key: str, underlay: str, local_cidr: str, remote_ip: str,
                     vni: str, mtu: str) -> Attachment:
        """OVS's own VXLAN port (userspace tunnelling): port `key` of br0 is a vxlan port to
        `remote_ip`; the underlay interface joins a second bridge, TUNNEL_BRIDGE, whose internal
        port holds `local_cidr` (OVS routes and encapsulates through it). The peer's MAC must
        be set afterwards (tunnel_neighbour), so no ARP runs."""
        ovs, netns = self._instance(), self.ctx.netns
        ovs.vsctl("add-br", TUNNEL_BRIDGE, "--", "set", "Bridge", TUNNEL_BRIDGE,
                  "datapath_type=netdev", "fail_mode=standalone")
        ovs.vsctl("set", "Interface", TUNNEL_BRIDGE, f"mtu_request={mtu}")
        set_up(netns, underlay)
        ovs.vsctl("add-port", TUNNEL_BRIDGE, underlay)
        self._wait_ofport(underlay)
        add_address(netns, TUNNEL_BRIDGE, local_cidr)
        set_up(netns, TUNNEL_BRIDGE)
        port = self.ctx.run_id.ifname("vx")
        ovs.vsctl("add-port", BRIDGE, port, "--", "set", "Interface", port, "type=vxlan",
                  f"options:remote_ip={remote_ip}", f"options:local_ip={local_cidr.split('/')[0]}",
                  f"options:key={vni}", f"ofport_request={len(self.attachments) + 1}")
        self.ports[key] = OvsPort(key, port, self._wait_ofport(port))
        att = Attachment(HostPort(key, netns, port, ""), port,
                         switch_mac=mac_address(netns, TUNNEL_BRIDGE))
        self.attachments[key] = att
        return att

    def tunnel_neighbour(self, ip_address: str, mac: str) -> None:
        self._instance().appctl("tnl/arp/set", TUNNEL_BRIDGE, ip_address, mac)

    def interface_settings(self) -> list[str]:
        return []

    def _wait_ofport(self, ifname: str) -> int:
        ovs = self._instance()
        found: list[int] = []

        def ready() -> bool:
            error = ovs.vsctl("get", "Interface", ifname, "error").strip()
            if error not in ("[]", '""', ""):
                raise OvsError(f"{self.name}: port {ifname} did not come up: {error}")
            value = ovs.vsctl("get", "Interface", ifname, "ofport").strip()
            if value.lstrip("-").isdigit() and int(value) > 0:
                found.append(int(value))
                return True
            return False

        wait_until(ready, timeout=15, what=f"OVS port {ifname} to get an OpenFlow port number")
        return found[0]

    def forward(self, paths: list[ForwardPath]) -> None:
        ovs = self._instance()
        if self.mode == "normal":
            return  # the learning NORMAL flow of the standalone bridge forwards everything
        outputs = self._outputs(paths)
        extra = self._clone_ports()
        rules = [RulePath(self.ports[src].ofport, (*outs, *extra), self._flow_source(src))
                 for src, outs in outputs.items()]
        flow_file = self._paths_root() / "flows.txt"
        with flow_file.open("w") as out:         # 100k rules: one file, one add-flows
            self._write_port_rules(out, rules)
            self._write_function_rules(out, outputs)
        self._drop_port_rules(flow_file)
        ovs.ofctl("del-flows", BRIDGE)
        # one OpenFlow bundle: 100k rules in about 1.5 s here (8 s as single flow mods)
        ovs.ofctl("add-flows", BRIDGE, str(flow_file), timeout=300.0, options=("--bundle",))
        if self.exact_rules:   # no ramp from 10,000 datapath flows (see rules.py)
            ovs.appctl("upcall/set-flow-limit", str(max(FLOW_LIMIT, self.exact_rules)))

    def _outputs(self, paths: list[ForwardPath]) -> dict[str, list[int]]:
        """Each source port key -> the OpenFlow ports its paths lead to."""
        outputs: dict[str, list[int]] = {}
        for path in paths:
            for key in (path.src, path.dst):
                if key not in self.ports:
                    raise VswbenchError(f"{self.name}: path {path.src} -> {path.dst}: port {key} "
                                        f"is not attached")
            outputs.setdefault(path.src, []).append(self.ports[path.dst].ofport)
        return outputs

    def _write_port_rules(self, out: TextIO, rules: list[RulePath]) -> None:
        """The paths' rules, counting the exact-match ones (the first three kept for the dump)."""
        self.exact_rules, self._first_rules = 0, []
        for line in rule_lines(rules, self.ctx.flows, self.name):
            if line.startswith(f"cookie={EXACT_COOKIE:#x},"):
                self.exact_rules += 1
                if len(self._first_rules) < 3:
                    self._first_rules.append(line)
            out.write(line + "\n")

    def _write_function_rules(self, out: TextIO, outputs: dict[str, list[int]]) -> None:
        """The forwarding function's rules (l3, nat, acl) on each driver's path, whose port
        rules they replace (noted in function_ports)."""
        fn = self.function
        check_flows(fn, self.ctx.flows)
        for src, outs in (outputs.items() if fn.name != "l2" else ()):
            if src.split(".")[0] not in self.ctx.long_running_hosts:   # a driver's path
                rule = f"cookie={PORT_COOKIE:#x},in_port={self.ports[src].ofport},"
                for line in ovs_function_rules(fn, self.ports[src].ofport, outs[0]):
                    out.write(line + "\n")
                self.function_ports.append(rule)

    def rule_mechanisms(self) -> list[RuleMechanism]:
        from vswbench.switches.rules.mechanisms import OfBundle

        ovs = self._instance()

        def add_flows(path: Path) -> None:
            ovs.ofctl("add-flows", BRIDGE, str(path), timeout=300.0, options=("--bundle",))

        return [OfBundle(add_flows, self._paths_root())]

    def _drop_port_rules(self, flow_file: Path) -> None:
        """Take out the port rules of the paths whose function rules replace them."""
        if not self.function_ports:
            return
        lines = flow_file.read_text().splitlines()
        kept = [ln for ln in lines if not any(ln.startswith(r) for r in self.function_ports)]
        flow_file.write_text("\n".join(kept) + "\n")

    def _flow_source(self, key: str) -> FlowSource | None:
        """flow_table=exact: the addresses a driver's port sends from; None for other ports
        (network functions and reflectors rewrite the source MAC: their paths keep a port rule)."""
        if not self.opts.exact or key.split(".")[0] in self.ctx.long_running_hosts:
            return None
        att = self.attachments[key]
        return FlowSource(att.host_mac, att.host.ip_cidr.split("/")[0])

    def _clone_ports(self) -> tuple[int, ...]:
        """clones=K: K-1 extra OVS ports, veth pairs whose other ends sit UP without an address
        in the run's sink namespace, where the kernel drops the frames (counted as received)."""
        if self.opts.clones <= 1 or self.clone_ports:
            return tuple(p.ofport for p in self.clone_ports)
        ovs, ctx = self._instance(), self.ctx
        sink = Namespace(self.sink_netns, ctx.registry).__enter__()
        if sink._reg is not None:
            self._regs.append(sink._reg)       # released after the veths (LIFO)
        wanted = clone_outputs(len(self.attachments) + 1, self.opts.clones)
        for i, ofport in enumerate(wanted):
            sw_if, sink_if = ctx.run_id.ifname(f"oc{i}"), ctx.run_id.ifname(f"ok{i}")
            pair = VethPair(sink_if, self.sink_netns, sw_if, ctx.netns, ctx.registry)
            pair.__enter__()
            if pair._reg is not None:
                self._regs.append(pair._reg)
            set_up(self.sink_netns, sink_if)
            set_up(ctx.netns, sw_if)
            ovs.vsctl("add-port", BRIDGE, sw_if, "--", "set", "Interface", sw_if,
                      f"ofport_request={ofport}", *self.interface_settings())
            self.clone_ports.append(OvsPort(sink_if, sw_if, self._wait_ofport(sw_if)))
        return tuple(p.ofport for p in self.clone_ports)

    def _paths_root(self) -> Path:
        paths = self._instance().paths
        assert paths is not None
        return paths.root

    def teardown(self) -> None:
        if self.ovs is not None:
            self.ovs.stop()
        while self._regs:
            self._regs.pop().release()
        self.ports.clear()
        self.clone_ports.clear()

    # -- inspection ------------------------------------------------------------------------------
    def config_dump(self) -> str:
        ovs = self._instance()
        if self.exact_rules:   # never 100k rules per trial: the port rules, a count, the first
            rules = ovs.ofctl("dump-flows", BRIDGE, f"table=0,cookie={PORT_COOKIE:#x}/-1",
                              check=False)
            count = ovs.ofctl("dump-aggregate", BRIDGE, f"cookie={EXACT_COOKIE:#x}/-1",
                              check=False).strip()
            rules += (f"per-flow rules (flow_table=exact): {self.exact_rules:,} installed "
                      f"({count}); the first:\n" + "\n".join(self._first_rules) + "\n")
        else:
            rules = ovs.ofctl("dump-flows", BRIDGE, check=False)
            lines = rules.splitlines()
            if len(lines) > 40:    # function l3/acl: never 10,000 rules per result
                rules = "\n".join(lines[:40] + [f"... {len(lines) - 1:,} rules in all"]) + "\n"
        parts = [("ovs-ofctl dump-flows", rules), ("ovs-vsctl show", ovs.vsctl("show")),
                 ("ovs-appctl dpctl/show", ovs.appctl("dpctl/show", check=False)),
                 ("ovs-appctl upcall/show", ovs.appctl("upcall/show", check=False))]
        if not self.port_type:     # system ports: their packet sockets' buffers and drops
            parts.append(("ss -0 -m -a -n (packet sockets; skmem d: dropped, buffer full)",
                          run_in(self.ctx.netns, ["ss", "-0", "-m", "-a", "-n"], check=False)))
        for command in ("dpif-netdev/pmd-stats-show", "dpif-netdev/pmd-rxq-show"):
            text = ovs.appctl(command, check=False).strip()
            if text and ("pmd thread" in text or command.endswith("stats-show")):
                parts.append((f"ovs-appctl {command}", text))
        return "\n".join(f"== {title}\n{text.rstrip()}\n" for title, text in parts)

    def port_counters(self) -> list[PortCounters]:
        """OVS's port counters; a system port's rx_dropped also counts the frames its packet
        socket dropped with its receive buffer full (ovs-vswitchd had not read them yet): the
        kernel's device counters, which OVS reports, never see those."""
        stats = parse_dump_ports(self._instance().ofctl("dump-ports", BRIDGE))
        sockets = packet_socket_drops(self.ctx.netns) if not self.port_type else {}
        counters = []
        for port in self.ports.values():
            values = stats.get(str(port.ofport))
            if values is None:
                raise OvsError(f"{self.name}: no counters for port {port.ifname} "
                               f"(OpenFlow port {port.ofport}) in ovs-ofctl dump-ports")
            rx, rx_drop, rx_err, tx, tx_drop, tx_err = values
            rx_drop += sockets.get(port.ifname, 0)
            counters.append(PortCounters(port.ifname, rx, tx, rx_drop, tx_drop, rx_err, tx_err))
        return counters

    def stats(self) -> dict[str, object]:
        """Datapath flows, flow-cache hits (cumulative since start) and, with clones, what the
        extra ports sent (OVS) and received (the sink's kernel)."""
        ovs = self._instance()
        out: dict[str, object] = dict(datapath_stats(ovs.appctl("dpctl/show", check=False),
                                                     ovs.appctl("dpif-netdev/pmd-stats-show",
                                                                check=False),
                                                     ovs.appctl("upcall/show", check=False)))
        if self.exact_rules:
            out["exact_rules"] = self.exact_rules
        fn = self.function
        if fn.name != "l2":
            out.update(function=fn.name, table_size=fn.table_size)
        if self.clone_ports:
            sent = parse_dump_ports(ovs.ofctl("dump-ports", BRIDGE))
            seen = {name: link.stats.rx_packets if link.stats else 0
                    for name, link in netlink.links(self.sink_netns).items()}
            out["clone_ports"] = {p.ifname: {"ovs_tx_packets": sent.get(str(p.ofport),
                                                                        (0,) * 6)[3],
                                             "sink_rx_packets": seen.get(p.key, 0)}
                                  for p in self.clone_ports}
        return out

    def forwarding_mode(self) -> str:
        cpu = self._switch_cpu()
        return f"ovs-vswitchd pinned cpu{cpu}" if cpu is not None else "ovs-vswitchd unpinned"
