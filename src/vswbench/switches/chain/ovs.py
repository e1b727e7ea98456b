"""Chain elements that are Open vSwitch bridges (veth backend, option nf=ovs).

One private OVS instance (ovs_daemon.OvsInstance, as the `ovs` backend runs it: ovsdb-server and
ovs-vswitchd with a private run directory, ovs-vswitchd inside the switch namespace, every thread
pinned to the switch CPU) holds one bridge per network function:

    bridge  <run id>br<i>, datapath_type=netdev (the kernel has no openvswitch module),
            fail_mode=secure (no NORMAL flow, ever)
    ports   the element's two veth ends, `in` (OpenFlow port 1) and `out` (2), which the testbed
            planned into the switch namespace without addresses; system ports
    rules   in_port=1,actions=output:2 and in_port=2,actions=output:1

With nf=ovs-afxdp the ports are afxdp ports (type=afxdp, as the `ovs-afxdp` backend makes them)
and other_config:pmd-cpu-mask puts one PMD thread on the switch CPU, which polls every port in
turn and never sleeps, where the main thread polling system ports pays a wake-up and a main-loop
round whose cost does not grow with the packets (at a fixed 8 kpps about 200k cycles per packet
at n = 1 and n = 10 alike). Measured once, 64 B, s_core, quick NDR: links on threaded NAPI
214.5 kpps at n = 1, 99.6 at n = 2, 28.5 at n = 10 (system ports: 68, 35, 11.8); links in the
sender's softirq 348.2 at n = 1, 232.6 at n = 2 (system ports: 155.3, 86.5). The PMD does not
remove the drop from n = 1 to 2 that the NAPI threads' hand-offs make (specs/chains.toml).

All bridges share the one userspace datapath of ovs-vswitchd, whose main thread polls system
ports: the whole chain's forwarding runs on the switch CPU, whatever nf_cpus say (the testbed
records nf_cpus as the switch CPU, chain_nf.effective_placement). The links between bridges are
veth pairs with both ends in the switch namespace; their receive work (threaded NAPI, veth.py)
runs on the switch CPU too.

Counters: `ovs-appctl dpctl/show -s` lists every port of the datapath with its counters in one
query (for system ports OVS reports the interface's own counters); each bridge port becomes a
PortCounters named "ovs:<interface>". The daemons' PIDs are recorded in the run state by
OvsInstance as they start (so `vswbench clean` stops them after a SIGKILL) and are reported by
daemon_pids() for per-process CPU time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from vswbench.host.netns import wait_until
from vswbench.switches.base import Attachment
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.chain.nf import OVS_PORT_PREFIX
from vswbench.switches.ovs.daemon import OvsError
from vswbench.switches.ovs.daemon import OvsInstance
from vswbench.switches.ovs.daemon import pmd_on

IN_PORT, OUT_PORT = 1, 2

_DP_PORT = re.compile(r"^\s*port \d+: (\S+)", re.M)
_DP_STATS = re.compile(r"(RX|TX) packets:(\d+) errors:(\d+) dropped:(\d+)")


def parse_dpctl_ports(text: str) -> dict[str, PortCounters]:
    """`ovs-appctl dpctl/show -s` -> {port name: PortCounters} (unsupported counters are 0)."""
    found: dict[str, PortCounters] = {}
    starts = list(_DP_PORT.finditer(text))
    for i, m in enumerate(starts):
        block = text[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        c = PortCounters(m.group(1))
        for d, packets, errors, dropped in _DP_STATS.findall(block):
            if d == "RX":
                c.rx_packets, c.rx_errors, c.rx_dropped = int(packets), int(errors), int(dropped)
            else:
                c.tx_packets, c.tx_errors, c.tx_dropped = int(packets), int(errors), int(dropped)
        found[c.port] = c
    return found


def parse_interfaces(text: str) -> dict[str, tuple[int | None, str]]:
    """`ovs-vsctl --format=json --columns=name,ofport,error list Interface` ->
    {name: (ofport or None, error or "")}."""
    data = json.loads(text or "{}")
    heads = data.get("headings", [])
    out: dict[str, tuple[int | None, str]] = {}
    for row in data.get("data", []):
        cols = dict(zip(heads, row))
        ofport = cols.get("ofport")
        error = cols.get("error")
        out[str(cols.get("name"))] = (ofport if isinstance(ofport, int) and ofport > 0 else None,
                                      error if isinstance(error, str) else "")
    return out


def bridge_commands(bridges: Sequence[tuple[str, str, str]], port_type: str = "") -> list[str]:
    """One ovs-vsctl transaction: (bridge, in ifname, out ifname) each a netdev bridge in
    fail_mode=secure with its two ports at OpenFlow ports 1 and 2: system ports, or of
    `port_type` (afxdp)."""
    settings = [f"type={port_type}"] if port_type else []
    args: list[str] = []
    for bridge, in_if, out_if in bridges:
        args += ["--", "add-br", bridge, "--", "set", "Bridge", bridge, "datapath_type=netdev",
                 "fail_mode=secure"]
        for ifname, ofport in ((in_if, IN_PORT), (out_if, OUT_PORT)):
            args += ["--", "add-port", bridge, ifname, "--", "set", "Interface", ifname,
                     f"ofport_request={ofport}", *settings]
    return args


def _sections(parts: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"== {title}\n{text.rstrip()}\n" for title, text in parts)


RULES = (f"in_port={IN_PORT},actions=output:{OUT_PORT}",
         f"in_port={OUT_PORT},actions=output:{IN_PORT}")


@dataclass
class OvsChain:
    """The bridges of one testbed's chain, in one private Open vSwitch; `port_type` "" for
    system ports, "afxdp" for afxdp ports polled by a PMD thread on the switch CPU."""
    ctx: SwitchContext
    port_type: str = ""
    ovs: OvsInstance | None = None
    bridges: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # nf -> br, in, out
    _static_dump: str = ""

    def switch_cpu(self) -> int | None:
        cpu = self.ctx.placement.switch_cpu
        return cpu if cpu is not None and cpu < (os.cpu_count() or 1) else None

    def start(self) -> None:
        ctx = self.ctx
        cpu = self.switch_cpu()
        pmd = pmd_on(cpu) if self.port_type else {}
        self.ovs = OvsInstance(ctx.run_id, ctx.registry, ctx.netns, ctx.temp_dir, pmd)
        self.ovs.start()
        if cpu is not None:
            self.ovs.pin(cpu)
        if self.port_type:
            self.ovs.require_port_type(self.port_type, f"nf=ovs-{self.port_type}")

    def _instance(self) -> OvsInstance:
        if self.ovs is None:
            raise OvsError("nf=ovs: the Open vSwitch instance has not started")
        return self.ovs

    def build(self, nf_hosts: Sequence[str], attachments: Mapping[str, Attachment]) -> None:
        ovs = self._instance()
        for i, name in enumerate(nf_hosts, 1):
            ports = [attachments[f"{name}.{p}"].host for p in ("in", "out")]
            if any(hp.netns != self.ctx.netns for hp in ports):
                raise OvsError(f"nf=ovs: the ports of {name} are not in the switch namespace "
                               f"{self.ctx.netns} (the testbed plans them there)")
            self.bridges[name] = (self.ctx.run_id.ifname(f"br{i}"), ports[0].ifname,
                                  ports[1].ifname)
        ovs.vsctl(*bridge_commands(list(self.bridges.values()), self.port_type))
        self._wait_ports()
        assert ovs.paths is not None
        rules = ovs.paths.root / "chain-rules.txt"
        rules.write_text("\n".join(RULES) + "\n")
        for bridge, _in, _out in self.bridges.values():
            ovs.ofctl("add-flows", bridge, str(rules))

    def _wait_ports(self) -> None:
        ovs = self._instance()
        wanted = {p for _b, *ports in self.bridges.values() for p in ports}

        def ready() -> bool:
            found = parse_interfaces(ovs.vsctl("--format=json", "--columns=name,ofport,error",
                                               "list", "Interface"))
            for name in wanted:
                ofport, error = found.get(name, (None, ""))
                if error:
                    raise OvsError(f"nf=ovs: port {name} did not come up: {error}")
            return all(found.get(name, (None, ""))[0] is not None for name in wanted)

        wait_until(ready, timeout=20, what="the chain's OVS ports to get OpenFlow port numbers")

    def port_counters(self) -> list[PortCounters]:
        stats = parse_dpctl_ports(self._instance().appctl("dpctl/show", "-s"))
        out = []
        for _bridge, *ports in self.bridges.values():
            for ifname in ports:
                if ifname not in stats:
                    raise OvsError(f"nf=ovs: no counters for port {ifname} in dpctl/show")
                c = stats[ifname]
                c.port = OVS_PORT_PREFIX + ifname
                out.append(c)
        return out

    def daemon_pids(self) -> dict[str, int]:
        ovs = self.ovs
        if ovs is None:
            return {}
        return {d.name: d.pid for d in (ovs.db_server, ovs.vswitchd)
                if d is not None and d.running()}

    def forwarding_mode(self) -> str:
        cpu = self.switch_cpu()
        where = f"pinned cpu{cpu}" if cpu is not None else "unpinned"
        return (f"ovs-vswitchd {where}, {self.port_type} ports, pmd {where}" if self.port_type
                else f"ovs-vswitchd {where}")

    def config_dump(self) -> str:
        """The bridges and their rules (queried once: they never change), then the datapath's
        ports and flows with their counters (one query each, every trial)."""
        ovs = self._instance()
        if not self._static_dump:
            parts = [(f"ovs-ofctl dump-flows {bridge} ({name}, at setup)",
                      ovs.ofctl("dump-flows", bridge, check=False))
                     for name, (bridge, _i, _o) in self.bridges.items()]
            parts.append(("ovs-vsctl show", ovs.vsctl("show")))
            self._static_dump = _sections(parts)
        return self._static_dump + _sections([
            ("ovs-appctl dpctl/show -s", ovs.appctl("dpctl/show", "-s", check=False)),
            ("ovs-appctl dpctl/dump-flows", ovs.appctl("dpctl/dump-flows", check=False))])

    def stop(self) -> None:
        if self.ovs is not None:
            self.ovs.stop()
        self.bridges.clear()
