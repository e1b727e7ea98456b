"""`ovs-dpdk`: Open vSwitch with DPDK (Debian's ovs-vswitchd-dpdk), userspace datapath, one PMD
thread pinned to the switch CPU, vhost-user ports towards the containers (Emmerich et al.'s
fastest OvS, Ara et al.'s OVS-DPDK).

Ports: `dpdkvhostuser` (OVS is the vhost-user server; its socket lies in the private OVS run
directory, the engine connects with virtio_user). memif is refused: OVS gives a memif port one TX
queue per thread and drops every frame it sends to the engine's one-queue memif client.
Forwarding: the port-to-port OpenFlow rules of the `ovs` backend.

DPDK in OVS gets --no-pci, --no-huge with --legacy-mem (OVS-DPDK without hugepages needs it) and a
file prefix vsb<run id>ovs; per-port memory pools keep the first vhost connection from stalling
the daemon for seconds while it touches a shared pool sized for many ports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from vswbench.errors import CommandError
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.netns import run
from vswbench.host.netns import wait_until
from vswbench.run.ids import NUM
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import BusyCycles
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.dpdk.ports import DPDK_PORT_HELP
from vswbench.switches.dpdk.ports import DPDK_THREADS
from vswbench.switches.dpdk.ports import DpdkLink
from vswbench.switches.dpdk.ports import dpdk_availability
from vswbench.switches.dpdk.ports import eal_common
from vswbench.switches.dpdk.ports import parse_transport
from vswbench.switches.dpdk.ports import port_mac
from vswbench.switches.dpdk.ports import remove_runtime_dir
from vswbench.switches.ovs.daemon import OvsInstance
from vswbench.switches.ovs.rules import parse_ovs_options
from vswbench.switches.ovs.switch import BRIDGE
from vswbench.switches.ovs.switch import Ovs
from vswbench.switches.ovs.switch import OvsPort

VSWITCHD_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
FIX = "apt-get install openvswitch-switch-dpdk (or run ./setup.sh)"
MEMORY_MB = 1024

_PMD_RE = re.compile(r"pmd thread[^\n]*:\n(.*?)(?=\n\S|\Z)", re.S)


def parse_pmd_stats(text: str) -> BusyCycles | None:
    """`dpif-netdev/pmd-stats-show` -> processing cycles and packets received, summed over the PMD
    threads (the main thread's non-PMD ports are not polled work)."""
    cycles = packets = 0
    found = False
    for block in _PMD_RE.findall(text):
        c = re.search(r"processing cycles:\s*(\d+)", block)
        p = re.search(r"packets received:\s*(\d+)", block)
        if c and p:
            cycles, packets, found = cycles + int(c.group(1)), packets + int(p.group(1)), True
    return BusyCycles(cycles, packets) if found else None


_FLOW_RE = re.compile(r"n_packets=(\d+),.*?in_port=\"?(\d+)\"?\s+actions=(\S+)")


def parse_rxq_states(text: str) -> dict[str, list[bool]]:
    """Per port, whether each of its receive queues is enabled, from pmd-rxq-show's lines
    "  port: NAME   queue-id:  0 (enabled)  pmd usage: ..." (a queue is "disabled" until the
    vhost thread saw its peer enable it)."""
    states: dict[str, list[bool]] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5 and words[0] == "port:" and words[2] == "queue-id:":
            states.setdefault(words[1], []).append(words[4] == "(enabled)")
    return states


def parse_flow_counts(text: str) -> tuple[dict[int, int], dict[int, int]]:
    """`ovs-ofctl dump-flows` of port-to-port rules -> (received per in_port, sent per output)."""
    rx: dict[int, int] = {}
    tx: dict[int, int] = {}
    for m in _FLOW_RE.finditer(text):
        n, port = int(m.group(1)), int(m.group(2))
        rx[port] = rx.get(port, 0) + n
        for out in re.findall(r"output:\"?(\d+)", m.group(3)):
            tx[int(out)] = tx.get(int(out), 0) + n
    return rx, tx


class OvsDpdk(Ovs):
    name = "ovs-dpdk"
    link_roles = {**Ovs.link_roles,
                  rf"ovs|vhu{NUM}": "its DPDK file prefix and vhost ports (ovs/dpdk.py)"}
    idle_polls = True                   # its PMD thread polls the DPDK ports
    description = "Open vSwitch with DPDK, PMD thread pinned, vhost-user ports"
    options_read = {**Ovs.options_read, **DPDK_PORT_HELP}
    tools = {**Ovs.tools, VSWITCHD_DPDK: "openvswitch-switch-dpdk"}
    daemons = (*Ovs.daemons, *DPDK_THREADS)
    port_kind = "dpdk"
    ingress_ring_frames = 1024   # memif rsize 2^10, virtio_user queue_size 1024 (dpdk/ports.py)
    enables_ports_late = True    # pmd-rxq-show: a vhost-user queue "(disabled)" until enabled

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        self.check_options(ctx.options)
        super().__init__(ctx)
        self.transport = parse_transport(ctx.options, "vhost")
        self.prefix = ctx.run_id.name("ovs")
        self.links: dict[str, DpdkLink] = {}

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        opts = parse_ovs_options(options, cls.name)
        if opts.exact or opts.clones > 1:
            # The engine's DPDK ports carry no address of the container's (the per-flow rules
            # need it), and the clones' sink ports would have to be DPDK ports too.
            raise UsageError(f"{cls.name}: flow_table=exact and clones are implemented for the "
                             "OVS backends with kernel ports (ovs, ovs-afxdp), not for DPDK ports")
        if parse_transport(options, "vhost") != "vhost":
            # Measured: OVS opens a memif vdev with a TX queue per thread (PMD + main) while the
            # engine's memif client negotiates one ring pair, and every frame OVS sends to it is
            # counted as a TX drop. vhost-user is OVS's container port.
            raise UsageError("ovs-dpdk: dpdk_port=memif does not work with OVS 3.1 (its memif "
                             "port drops every frame it sends to a one-queue peer); use the "
                             "default vhost-user ports, or memif with --switch testpmd")

    @classmethod
    def availability(cls) -> Availability:
        base = Ovs.availability()  # the OVS tools and schema
        return dpdk_availability(VSWITCHD_DPDK, FIX) if base.ok else base

    @classmethod
    def versions(cls) -> dict[str, str]:
        try:
            lines = run([VSWITCHD_DPDK, "--version"]).splitlines()
        except (OSError, CommandError):
            return {}
        out = {"ovs-vswitchd-dpdk": lines[0].split()[-1]} if lines else {}
        for line in lines:
            if line.startswith("DPDK"):
                out["dpdk"] = line.split()[-1]
        return out

    def other_config(self) -> dict[str, str]:
        cpu = self._switch_cpu()
        mask = hex(1 << (cpu if cpu is not None else 0))
        extra = " ".join(eal_common(self.prefix, MEMORY_MB) + ["--legacy-mem"])
        return {"dpdk-init": "true", "dpdk-extra": extra, "per-port-memory": "true",
                "pmd-cpu-mask": mask, "dpdk-lcore-mask": mask}

    def setup(self) -> None:
        ctx = self.ctx
        ctx.registry.register(f"DPDK runtime dir of {self.prefix}",
                              lambda: remove_runtime_dir(self.prefix))
        self.ovs = OvsInstance(ctx.run_id, ctx.registry, ctx.netns, ctx.temp_dir,
                               self.other_config(), vswitchd_binary=VSWITCHD_DPDK,
                               ready_timeout=60.0)
        self.ovs.start()
        cpu = self._switch_cpu()
        if cpu is not None:
            self.ovs.pin(cpu)
        ovs = self.ovs

        def initialised() -> bool:
            if ovs.vswitchd is not None and not ovs.vswitchd.running():
                raise VswbenchError("ovs-dpdk: ovs-vswitchd-dpdk exited while DPDK initialised:\n"
                                    + ovs.vswitchd.log_tail())
            return ovs.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized").strip() == "true"

        wait_until(initialised, timeout=60, what="DPDK to initialise in ovs-vswitchd-dpdk",
                   interval=0.1)
        self.ovs.vsctl("add-br", BRIDGE, "--", "set", "Bridge", BRIDGE, "datapath_type=netdev",
                       "fail_mode=secure")

    def attach(self, port: HostPort) -> Attachment:
        ovs = self._instance()
        index = len(self.attachments)
        ifname = self.ctx.run_id.name(f"vhu{index}")
        root = self._paths_root()
        link = DpdkLink(port.key, index, str(Path(root) / ifname), port_mac(index, self.ctx.run_id),
                        self.transport)
        settings = ["type=dpdkvhostuser"]
        ovs.vsctl("add-port", BRIDGE, ifname, "--", "set", "Interface", ifname,
                  f"ofport_request={index + 1}", *settings)
        ofport = self._wait_ofport(ifname)
        self.links[port.key] = link
        self.ports[port.key] = OvsPort(port.key, ifname, ofport)
        att = Attachment(port, None, host_mac=link.mac, dpdk_port=link.engine_vdev)
        self.attachments[port.key] = att
        return att

    def teardown(self) -> None:
        super().teardown()
        remove_runtime_dir(self.prefix)

    def port_counters(self) -> list[PortCounters]:
        """Per port from the OpenFlow rules' counters (a port received what its in_port rule
        matched and sent what the rules output to it), which the revalidator refreshes about
        twice a second; plus one live row per PMD thread (packets received). OVS 3.1 with DPDK
        22.11 answers "could not retrieve stats (Protocol error)" for vhost-user ports, so the
        interface counters are not available. Frames the switch could not take in show up as the
        tester's refused sends."""
        return self.sample()[0]

    def sample(self) -> tuple[list[PortCounters], BusyCycles | None]:
        """One dump-flows and one pmd-stats-show for the counters and the useful cycles."""
        ovs = self._instance()
        rx, tx = parse_flow_counts(ovs.ofctl("dump-flows", BRIDGE))
        rows = [PortCounters(port.ifname, rx.get(port.ofport, 0), tx.get(port.ofport, 0))
                for port in self.ports.values()]
        pmd = parse_pmd_stats(ovs.appctl("dpif-netdev/pmd-stats-show", check=False))
        if pmd is not None:
            rows.append(PortCounters("pmd (all ports, live)", pmd.packets, 0))
        return rows, pmd

    def busy_cycles(self) -> BusyCycles | None:
        return parse_pmd_stats(self._instance().appctl("dpif-netdev/pmd-stats-show", check=False))

    def ports_polled(self) -> bool:
        states = parse_rxq_states(self._instance().appctl("dpif-netdev/pmd-rxq-show",
                                                          check=False))
        return all(states.get(p.ifname) and all(states[p.ifname]) for p in self.ports.values())

    def tester_cpu_free(self) -> bool:
        return True         # its poll loop on its own core; the tester's core runs the tester only

    def forwarding_mode(self) -> str:
        cpu = self._switch_cpu()
        where = f"cpu{cpu}" if cpu is not None else "unpinned"
        return f"pmd {where} ({self.transport} ports)"
