"""Testbed: instantiate a TestbedPlan (testbed/plan.py) around a Switch class, and own
everything it creates.

    sw ns  <run id>sw             the switch's own namespace (empty until the backend fills it)
    hosts  <run id><host name>    one namespace per scenario Host (tester, nf1, s1, r1, ...)
    ports  <run id><abbr>p<j>     host interfaces, e.g. vsb1a2btp0, vsb1a2bn1p1 (<= 15 chars)

The plan (names, addresses, hops, network functions, CPUs) is computed in the constructor, before
anything exists; bad input fails there. Everything is registered with the run's cleanup registry
the moment it exists; leaving the `with` block removes it, newest first.

After wiring, the testbed knows every host port's MAC, and for l3 switches the gateway's, as a
Wiring; the next hop of every path (`next_hop_mac`) and the engine command line of every host
(`engine_commands`) follow from the plan and the Wiring.

Chains whose network functions are not engines (option nf=router|ovs of the veth backend,
switches/chain/nf.py): no engine runs for the NFs, the backend builds them (ctx.nf_hosts). nf=ovs
elements are bridges: their ports are planned into the switch namespace without addresses (no NF
namespaces), the drivers address frames to the stream's final port (the bridges forward them
unchanged), and the recorded placement puts the NFs on the switch CPU, where ovs-vswitchd runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

from vswbench.engine.params import TESTER_GAP_US
from vswbench.engine.params import TrialParams
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host import netlink
from vswbench.host.netns import LinkCounters
from vswbench.host.netns import Namespace
from vswbench.host.netns import add_address
from vswbench.host.netns import addresses
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_pids
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import sysctl
from vswbench.host.netns import wait_link_up
from vswbench.host.tuning import run_namespaces
from vswbench.host.tuning import set_mtu
from vswbench.run.scope import Run
from vswbench.scenario import Scenario
from vswbench.scenario import vm_hosts
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import Placement
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel.napi import Placed
from vswbench.switches.kernel.napi import place_napi
from vswbench.testbed.plan import EngineCommand
from vswbench.testbed.plan import PortInfo
from vswbench.testbed.plan import Wiring
from vswbench.testbed.plan import plan_testbed
from vswbench.testbed.plan import unsupported
from vswbench.testbed.sites import SiteSwitches
from vswbench.testbed.vm import accel_problem
from vswbench.testbed.vm import vm_accel
from vswbench.units import STD_MTU

__all__ = ["EngineCommand", "PortInfo", "Testbed", "unsupported"]

LINK_TIMEOUT = 10.0
# Sysctls for host namespaces: no ICMP errors for the engine's frames (port unreachable would add
# frames the engine never sent), no ARP for addresses of other ports of the same namespace.
HOST_SYSCTLS = {"net.ipv4.icmp_msgs_per_sec": 0,
                "net.ipv4.icmp_msgs_burst": 0, "net.ipv4.conf.all.arp_ignore": 1,
                "net.ipv4.conf.all.arp_announce": 2}


class Testbed:
    """Context manager: builds a TestbedPlan around a switch; tears all of it down on exit."""

    __test__ = False  # not a pytest test class

    def __init__(self, scenario: Scenario, switch_cls: type[Switch], run: Run,
                 placement: Placement | None = None,
                 options: Mapping[str, str] | None = None, flows: int = 1,
                 mtu: int = STD_MTU) -> None:
        self.plan = plan_testbed(scenario, switch_cls, run.id, placement, options, flows)
        if vm_hosts(scenario) and (why := accel_problem(vm_accel(self.plan.options))):
            raise UsageError(why)   # --vm-accel kvm where KVM does not boot a guest: exit 2
        self.run = run
        self.mtu = mtu                   # every link's MTU (above 1500: frames above 1518 B)
        self.mtu_links: dict[str, int] = {}   # {netns/ifname: mtu} where it was raised
        self.switch: Switch | None = None
        self.attachments: dict[str, Attachment] = {}
        self.ports: dict[str, PortInfo] = {}
        self.next_hop_mac: dict[tuple[str, str], str] = {}
        self.wiring = Wiring({})
        self.tester_napi = Placed()      # tester-dut: the tester ports' receive placement
        self._stack = ExitStack()

    # -- the plan's facts ------------------------------------------------------------------
    @property
    def scenario(self) -> Scenario:
        return self.plan.scenario

    @property
    def switch_cls(self) -> type[Switch]:
        return self.plan.switch_cls

    @property
    def placement(self) -> Placement:
        return self.plan.placement

    @property
    def options(self) -> dict[str, str]:
        return dict(self.plan.options)

    @property
    def flows(self) -> int:
        return self.plan.flows

    @property
    def nf(self) -> str:
        return self.plan.nf

    @property
    def nf_poll(self) -> str:
        return self.plan.nf_poll

    @property
    def switch_ns(self) -> str:
        return self.plan.switch_ns

    @property
    def host_ports(self) -> tuple[HostPort, ...]:
        return self.plan.host_ports

    @property
    def paths(self) -> tuple[ForwardPath, ...]:
        return self.plan.paths

    @property
    def dpdk(self) -> bool:
        """Host ports are DPDK virtual devices (no kernel links, no addresses, no neighbours)."""
        return self.plan.dpdk

    @property
    def starts_in_order(self) -> bool:
        """Its long-running engines start one after the other: DPDK engines joined by memif with
        no switch between them (a client needs its server, the engine before, up). Through a
        DPDK switch every engine is a client of the switch's sockets: they start at once (an
        EAL's start takes 0.3 s; a chain's four took 1.2 s a phase one after the other)."""
        return self.plan.dpdk and self.plan.switch_cls.direct

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> Testbed:
        try:
            self._build()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _build(self) -> None:
        plan, reg = self.plan, self.run.registry
        self._stack.enter_context(Namespace(plan.switch_ns, reg))
        for ns in plan.host_namespaces:   # nf=ovs bridges have none: they are switch ports
            self._stack.enter_context(Namespace(ns, reg))
            sysctl(ns, **HOST_SYSCTLS)
        ctx = SwitchContext(self.run.id, reg, plan.switch_ns, plan.placement, self.options,
                            temp_dir=str(self.run.temp_dir()),
                            long_running_hosts=plan.long_running_hosts,
                            nf_hosts=plan.built_nfs, flows=plan.flows)
        switch = (SiteSwitches(ctx, plan.scenario, plan.switch_cls) if plan.scenario.sites
                  else plan.switch_cls(ctx))   # scenario remote: a switch per site (sites.py)
        self.switch = switch
        teardown = reg.register(f"switch {plan.switch_cls.name}", switch.teardown)
        self._stack.callback(teardown.release)
        switch.setup()
        for hp in plan.host_ports:
            self.attachments[hp.key] = switch.attach(hp)
            self._address(hp)
        switch.forward(list(plan.paths))
        self._record_daemons()
        if plan.dpdk:
            self._dpdk_ports()
        else:
            for hp in plan.host_ports:
                wait_link_up(hp.netns, hp.ifname, timeout=LINK_TIMEOUT)
                self._address(hp)  # direct backends may create the link only in forward()
                self.ports[hp.key] = PortInfo(hp.key, hp.netns, hp.ifname, hp.ip_cidr,
                                              mac_address(hp.netns, hp.ifname))
        if self.mtu != STD_MTU and not plan.dpdk:
            # before the traffic: engines size their buffers for their port's MTU; a link that
            # refuses it (an XDP program without frags) raises TuningUnsupported (exit 3)
            self.mtu_links = set_mtu(run_namespaces(str(self.run.id)), self.mtu)
        if plan.scenario.apart and not plan.dpdk:
            self._tester_napi(ctx)
        self.wiring = Wiring(dict(self.ports), self._gateway_macs())
        self.next_hop_mac.update(plan.next_hop_macs(self.wiring))
        if not plan.dpdk:
            self._neighbours()

    def _tester_napi(self, ctx: SwitchContext) -> None:
        """tester-dut: the tester's ports receive through threaded NAPI on the tester's CPU, so
        the frames the switch sends them are taken there, not in the DUT's softirq (a veth
        delivers in the sender's context without it)."""
        for hp in self.plan.host_ports:
            place_napi(ctx, hp.netns, hp.ifname, self.tester_napi, cpu=self.placement.tester_cpu)

    def _dpdk_ports(self) -> None:
        for hp in self.plan.host_ports:
            att = self.attachments[hp.key]
            if not att.dpdk_port or not att.host_mac:
                raise VswbenchError(f"{self.switch_cls.name}: port {hp.key} got no DPDK device")
            self.ports[hp.key] = PortInfo(hp.key, hp.netns, att.dpdk_port, hp.ip_cidr, att.host_mac)

    def _gateway_macs(self) -> dict[str, str]:
        """l3: the MAC of the switch side of each port the engine commands send through."""
        macs = {}
        for key in self.plan.gateway_ports:
            att = self.attachments[key]
            if att.switch_mac:
                macs[key] = att.switch_mac
            elif att.switch_ifname:
                macs[key] = mac_address(self.switch_ns, att.switch_ifname)
        return macs

    def _address(self, hp: HostPort) -> None:
        if not hp.ip_cidr:
            return  # a switch port (nf=ovs bridge)
        try:
            present = addresses(hp.netns, hp.ifname)
        except VswbenchError:
            return  # not created yet (direct backends link ports in forward())
        if hp.ip_cidr.split("/")[0] not in present:
            add_address(hp.netns, hp.ifname, hp.ip_cidr)

    def _record_daemons(self) -> None:
        """Processes the backend started (in the switch namespace, or named by daemon_pids())
        go into the run state, so `vswbench clean` can stop them after a SIGKILL."""
        state = self.run.state
        if state is None:
            return
        pids = set(namespace_pids(self.switch_ns))
        extra = getattr(self.switch, "daemon_pids", None)
        if callable(extra):
            found = extra()
            pids.update(found.values() if isinstance(found, dict) else found)
        known = {p.pid for p in state.processes}
        for pid in sorted(pids - known):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            state.add_process(pid, [a.decode(errors="replace") for a in argv if a])

    def _neighbours(self) -> None:
        """Permanent neighbour entries, so no ARP frames mix with the measured ones."""
        for path in self.paths:
            src, dst = self.ports[path.src], self.ports[path.dst]
            if self.switch_cls.l3:
                gw = self.attachments[path.src].gateway_ip
                if gw:
                    set_neighbour(src.netns, src.ifname, gw, self.next_hop_mac[(path.src, path.dst)])
            elif src.ip and dst.ip:  # (bridge ports of nf=ovs have no address)
                set_neighbour(src.netns, src.ifname, dst.ip, dst.mac)
                set_neighbour(dst.netns, dst.ifname, src.ip, src.mac)

    # -- facts -----------------------------------------------------------------------------
    def hop_from(self, key: str) -> ForwardPath:
        return self.plan.hop_from(key)

    def hop_into(self, key: str) -> ForwardPath:
        return self.plan.hop_into(key)

    def final_destination(self, key: str) -> PortInfo:
        """Follow the hops from `key` through network functions to the port the stream ends at."""
        return self.plan.final_destination(self.wiring, key)

    def kernel_counters(self) -> dict[str, LinkCounters]:
        """Kernel interface counters of every host port (one netlink dump per namespace); none
        for DPDK ports."""
        if self.dpdk:
            return {}
        by_ns: dict[str, dict[str, netlink.LinkState]] = {}
        for info in self.ports.values():
            if info.netns not in by_ns:
                by_ns[info.netns] = netlink.links(info.netns)
        return {info.key: LinkCounters.of(by_ns[info.netns][info.ifname])
                for info in self.ports.values()}

    def activity(self) -> object:
        """Something that changes while frames move: the host ports' kernel counters, or for DPDK
        ports the switch's port counters."""
        if self.dpdk:
            assert self.switch is not None
            return self.switch.port_counters()
        return self.kernel_counters()

    def placement_warnings(self) -> list[str]:
        return self.plan.placement_warnings() + [
            f"tester-dut: {note} (the tester's receive work may run on the DUT's CPU)"
            for note in self.tester_napi.notes]

    def describe(self) -> dict[str, Any]:
        return {"scenario": self.scenario.name, "switch": self.switch_cls.name, "nf": self.nf,
                "switch_netns": self.switch_ns, "placement": asdict(self.placement),
                "ports": {k: asdict(v) for k, v in self.ports.items()},
                "next_hop_mac": {f"{s}->{d}": m for (s, d), m in self.next_hop_mac.items()}}

    # -- engine command lines --------------------------------------------------------------
    def engine_commands(self, traffic: TrialParams, *, stream_base: int = 1,
                        server_duration: float = 0.0) -> list[EngineCommand]:
        """The engine processes of one run of `traffic` (TestbedPlan.engine_commands) on the
        built testbed: its wiring, the switch's flow field and destination addresses."""
        sw = self.switch
        return self.plan.engine_commands(
            self.wiring, traffic, stream_base=stream_base, server_duration=server_duration,
            flow_field=sw.flow_field() if sw is not None else None,
            destination_ip=sw.destination_ip if sw is not None else None,
            tester_gap_us=TESTER_GAP_US if sw is not None and sw.tester_cpu_free() else 0.0)
