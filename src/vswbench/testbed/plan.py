"""The testbed plan: what a Testbed builds, decided from the scenario, the switch class and the
run id before anything exists (pure: no kernel, no process, no file).

    TestbedPlan   its namespaces, the host ports (namespace, interface name, address), the hops
                  the switch forwards, how the network functions are made (engines, or elements
                  the backend builds), the effective placement and every engine's CPU
    Wiring        what only the built links know: each port's device and MAC, and for l3
                  switches the MAC of the gateway each port's frames go to
    plan.engine_commands(wiring, traffic)
                  the engine command line of every host, from the two

testbed/build.py's Testbed computes the plan in its constructor (bad input fails there, before
anything is created), instantiates it, and fills in the Wiring. Tests inspect a plan, and its
engine command lines with a made-up Wiring, without root.

Names: <run id>sw is the switch's namespace, <run id><host name> a host's, <run id><abbr>p<j> a
host port (tester->t, client->c, server->v, nf2->n2; at most 15 characters). Addresses come only
from 198.18.0.0/15: for l2 switches every host port sits in one /16 (198.18.<host>.<port>/16);
for l3 switches (router) each port has a /24 of its own, host .2, gateway .1 (set by the
backend). nf=ovs elements are bridges: their ports are planned into the switch namespace without
addresses, and the drivers address frames to the stream's final port (switches/chain/nf.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType

from vswbench.engine.params import GEN_ONLY_IO
from vswbench.engine.params import TrialParams
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.run.ids import RunId
from vswbench.scenario import Host
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import Placement
from vswbench.switches.base import Switch
from vswbench.switches.chain.nf import AUTO
from vswbench.switches.chain.nf import SLEEP
from vswbench.switches.chain.nf import check_nf
from vswbench.switches.chain.nf import effective_placement
from vswbench.switches.chain.nf import nf_hosts
from vswbench.switches.chain.nf import nf_poll
from vswbench.switches.chain.nf import ports_in_switch_namespace
from vswbench.switches.chain.nf import runs_engine
from vswbench.testbed.cores import DRIVERS
from vswbench.testbed.cores import apart_problem
from vswbench.testbed.cores import host_cpu
from vswbench.testbed.cores import pair_indexes
from vswbench.testbed.sites import remote_problem
from vswbench.testbed.vm import READY_TIMEOUT_S
from vswbench.testbed.vm import STOP_TIMEOUT_S
from vswbench.testbed.vm import vm_accel
from vswbench.testbed.vm import vm_command
from vswbench.testbed.vm import vm_problem

LONG_RUNNING = (Role.NF, Role.RECEIVER, Role.SERVER)   # started first, stopped after the tester
SLEEPING_NF_RING = 8192     # frames: an NF that does not busy-poll, as the engine's sink has


def host_abbr(name: str) -> str:
    """Short form of a host name for interface names: tester->t, client->c, server->v, nf2->n2."""
    fixed = {"tester": "t", "client": "c", "server": "v"}
    if name in fixed:
        return fixed[name]
    m = re.fullmatch(r"([a-z]+?)(\d+)", name)
    if m:
        return m.group(1)[0] + m.group(2)
    return re.sub(r"[^A-Za-z0-9]", "", name)[:4] or "h"


def plan_ports(scenario: Scenario, run_id: RunId, *, l3: bool,
               in_switch: frozenset[str] = frozenset()) -> list[HostPort]:
    """HostPorts of every host port: namespace, interface name and address (pure, no kernel).
    Hosts named in `in_switch` (nf=ovs bridges) have their ports in the switch namespace,
    without addresses."""
    ports: list[HostPort] = []
    used_if: set[str] = set()
    index = 0
    for h, host in enumerate(scenario.hosts):
        netns = run_id.name("sw" if host.name in in_switch else host.name)
        for j, _port in enumerate(host.ports):
            key = f"{host.name}.{host.ports[j]}"
            suffix = f"{host_abbr(host.name)}p{j}"
            if len(run_id.value + suffix) > 15 or suffix in used_if:
                suffix = f"h{index}"
            used_if.add(suffix)
            if l3:
                if index >= 254:
                    raise UsageError(f"scenario {scenario.name}: too many ports for /24 subnets")
                cidr = f"198.18.{index + 1}.2/24"
            else:
                if h >= 254 or j >= 254:
                    raise UsageError(f"scenario {scenario.name}: too many hosts or ports")
                cidr = f"198.18.{h + 1}.{j + 1}/16"
            ports.append(HostPort(key, netns, run_id.ifname(suffix),
                                  "" if host.name in in_switch else cidr))
            index += 1
    return ports


def plan_paths(scenario: Scenario) -> list[ForwardPath]:
    """One ForwardPath per hop (the switch forwards src -> dst), duplicates removed, order kept."""
    seen: list[ForwardPath] = []
    for hop in scenario.hops:
        p = ForwardPath(src=hop.src, dst=hop.dst)
        if p not in seen:
            seen.append(p)
    return seen


def unsupported(scenario: Scenario, switch_cls: type[Switch]) -> str | None:
    """Why this scenario cannot run on this switch, or None. The `memif` baseline joins engines
    by memif directly, and only p2p keeps both ends in one process. Across processes one engine
    must poll before its peer connects, and that was measured to fail: a network function's
    engine crashed (SIGSEGV) while its memif connected (pvp, chain:3, in CI runs), and separate
    receivers lost the first frames of every run (60 of 19,980 at 10 kpps on pairs:2). Through
    testpmd or ovs-dpdk, whose ports are up before any engine, every scenario runs."""
    if scenario.sites:
        return remote_problem(scenario, switch_cls)   # scenario remote: sites.py
    if scenario.apart and switch_cls.port_kind == "dpdk":
        return (f"scenario {scenario.name} is not supported on {switch_cls.name}: the wire between "
                "tester and DUT is a kernel link; use a kernel, BPF or OVS switch")
    if switch_cls.port_kind != "dpdk" or not switch_cls.direct or scenario.name == "p2p":
        return None
    return (f"scenario {scenario.name} is not supported on {switch_cls.name}: engines joined by "
            "memif directly run only in p2p (across processes a polling engine crashed while "
            "its memif connected); use a DPDK switch (testpmd, ovs-dpdk) for this scenario")


@dataclass(frozen=True)
class EngineCommand:
    host: str
    role: Role
    label: str                   # unique per command, e.g. "tester", "nf1"
    args: tuple[str, ...]        # engine arguments (without the binary)
    cpu: int | None
    ports: tuple[str, ...]       # HostPort keys it opens
    env: tuple[tuple[str, str], ...] = ()   # extra environment of the engine process
    # a VM network function (testbed/vm.py): the program that stands for its engine (python -m
    # vswbench.host.vm_nf), how long it may take to report its start and to stop
    program: str = ""
    ready_timeout: float = 0.0
    stop_timeout: float = 0.0

    @property
    def long_running(self) -> bool:
        return self.role in LONG_RUNNING


@dataclass(frozen=True)
class PortInfo:
    """A wired host port: everything the engine needs about it."""
    key: str
    netns: str
    ifname: str
    cidr: str
    mac: str

    @property
    def ip(self) -> str:
        return self.cidr.split("/")[0]


@dataclass(frozen=True)
class Wiring:
    """What only the built testbed knows: every host port's device and MAC (`ports`, by
    HostPort key) and, for l3 switches, the MAC of the switch side a port's frames are sent to
    (`gateway_macs`, by the key of the port they leave from)."""
    ports: Mapping[str, PortInfo]
    gateway_macs: Mapping[str, str] = field(default_factory=dict)


def _fmt(x: float) -> str:
    return f"{x:.6g}" if x != int(x) else str(int(x))


@dataclass(frozen=True)
class TestbedPlan:
    """What a Testbed builds: see the module docstring. Made by plan_testbed()."""

    __test__ = False  # not a pytest test class
    scenario: Scenario
    switch_cls: type[Switch]
    run_id: RunId
    placement: Placement          # effective: nf=ovs elements run on the switch CPU
    options: Mapping[str, str]
    nf: str                       # how the network functions forward (option nf, chain/nf.py)
    nf_poll: str                  # how fwd engines wait for frames (option nf_poll)
    flows: int                    # the workload's flow count, for backends with per-flow rules
    host_ports: tuple[HostPort, ...]
    paths: tuple[ForwardPath, ...]

    # -- what is created -------------------------------------------------------------------
    @property
    def switch_ns(self) -> str:
        return self.run_id.name("sw")

    @property
    def dpdk(self) -> bool:
        """Host ports are DPDK virtual devices (no kernel links, no addresses, no neighbours)."""
        return self.switch_cls.port_kind == "dpdk"

    @property
    def bridged_hosts(self) -> tuple[str, ...]:
        """NF hosts that are bridges in the switch namespace (nf=ovs), not namespaces."""
        return nf_hosts(self.scenario) if ports_in_switch_namespace(self.nf) else ()

    @property
    def host_namespaces(self) -> tuple[str, ...]:
        """The namespace of every host that has one (all but nf=ovs bridges), in host order."""
        return tuple(self.run_id.name(host.name) for host in self.scenario.hosts
                     if host.name not in self.bridged_hosts)

    @property
    def long_running_hosts(self) -> frozenset[str]:
        return frozenset(h.name for h in self.scenario.hosts if h.role in LONG_RUNNING)

    @property
    def built_nfs(self) -> tuple[str, ...]:
        """Network functions the backend builds (nf=router|ovs); () when engines forward."""
        return () if runs_engine(self.nf) else nf_hosts(self.scenario)

    @property
    def gateway_ports(self) -> tuple[str, ...]:
        """l3: the ports whose gateway MAC the engine commands need (every hop's source, every
        network function's `in`); () for l2 switches."""
        if not self.switch_cls.l3:
            return ()
        keys = [p.src for p in self.paths]
        keys += [f"{h.name}.{h.ports[0]}" for h in self.scenario.hosts if h.role == Role.NF]
        return tuple(dict.fromkeys(keys))

    def engine_cpus(self) -> dict[str, int | None]:
        """The CPU of every host that runs an engine (None: the scheduler's choice)."""
        cpus, nf_index, pairs = {}, 0, pair_indexes(self.scenario)
        for host in self.scenario.hosts:
            if host.role == Role.NF:
                nf_index += 1
                if not runs_engine(self.nf):
                    continue
            cpus[host.name] = host_cpu(self.placement, host.role, nf_index,
                                       pairs.get(host.name, 0))
        return cpus

    # -- hops --------------------------------------------------------------------------------
    def hop_from(self, key: str) -> ForwardPath:
        return next(p for p in self.paths if p.src == key)

    def hop_into(self, key: str) -> ForwardPath:
        return next(p for p in self.paths if p.dst == key)

    def final_destination(self, wiring: Wiring, key: str) -> PortInfo:
        """Follow the hops from `key` through network functions to the port the stream ends at."""
        current = self.hop_from(key).dst
        for _ in range(len(self.paths) + 1):
            host = self.scenario.host(current.split(".")[0])
            if host.role != Role.NF:
                return wiring.ports[current]
            current = self.hop_from(f"{host.name}.{host.ports[1]}").dst
        raise VswbenchError(f"scenario {self.scenario.name}: hops from {key} form a loop")

    def _gateway(self, wiring: Wiring, key: str) -> str:
        mac = wiring.gateway_macs.get(key)
        if not mac:
            raise VswbenchError(f"{self.switch_cls.name}: no gateway MAC for {key}")
        return mac

    def next_hop_mac(self, wiring: Wiring, path: ForwardPath) -> str:
        """The MAC a frame entering the switch on path.src leaves its port with: l2 and direct,
        the destination port's; l3, the gateway's; nf=ovs bridges, the stream's final port's."""
        if self.bridged_hosts:   # bridges forward frames unchanged: address the final port
            return self.final_destination(wiring, path.src).mac
        if self.switch_cls.l3:
            return self._gateway(wiring, path.src)
        return wiring.ports[path.dst].mac

    def next_hop_macs(self, wiring: Wiring) -> dict[tuple[str, str], str]:
        return {(p.src, p.dst): self.next_hop_mac(wiring, p) for p in self.paths}

    # -- engine command lines ----------------------------------------------------------------
    def tester_core_alone(self) -> bool:
        """The tester has a core of its own: neither the switch nor a network function on it."""
        p = self.placement
        return p.tester_cpu is not None and \
            not set(p.tester_cpus) & {*p.switch_cpus, *p.nf_cpus}

    def engine_commands(self, wiring: Wiring, traffic: TrialParams, *, stream_base: int = 1,
                        server_duration: float = 0.0, flow_field: str | None = None,
                        destination_ip: Callable[[str], str] | None = None,
                        tester_gap_us: float = 0.0) -> list[EngineCommand]:
        """The engine processes of one run of `traffic`: drivers (gen/loop) from stream id
        `stream_base` on, and long-running NFs, sinks and reflectors that stay up for
        `server_duration` seconds (0: the traffic's duration + 60). `flow_field` and
        `destination_ip` are the switch's (Switch.flow_field, Switch.destination_ip);
        `tester_gap_us` > 0: the drivers skip the departures due in their own gaps longer than
        that (engine --gap-us), where the tester's core is its alone (tester_core_alone)."""
        cmds: list[EngineCommand] = []
        next_hop = self.next_hop_macs(wiring)
        server_duration = server_duration or traffic.duration + 60
        send = traffic.send_args(len([h for h in self.scenario.hosts if h.role in DRIVERS]))
        send += ["--flow-field", flow_field] if flow_field else []
        if tester_gap_us > 0 and self.tester_core_alone():
            send += ["--gap-us", _fmt(tester_gap_us)]
        stream, nf_index, pairs = stream_base, 0, pair_indexes(self.scenario)
        for host in self.scenario.hosts:
            if host.role == Role.NF:
                nf_index += 1
                if not runs_engine(self.nf):
                    continue  # the backend builds this network function (nf=router|ovs)
            cpu = host_cpu(self.placement, host.role, nf_index, pairs.get(host.name, 0))
            keys = [f"{host.name}.{p}" for p in host.ports]
            common = self._common_args(host, traffic.io, cpu, [wiring.ports[k].ifname for k in keys])
            if host.role in DRIVERS:
                first, dst = self.hop_from(keys[0]), self.final_destination(wiring, keys[0])
                mode = "gen" if host.role == Role.SENDER else "loop"
                args = [mode, *common, *send, "--dst-mac", next_hop[(first.src, first.dst)],
                        "--dst-ip", destination_ip(dst.ip) if destination_ip else dst.ip,
                        "--stream-id", str(stream)]
                stream += 1
            elif host.role == Role.NF:
                args = self._nf_args(wiring, keys, common, next_hop, (cpu, nf_index),
                                     server_duration)
            else:
                args = self._server_args(host.role, common, cpu, server_duration)
            if host.vm:
                cmds.append(self._vm_command(host.name, wiring, keys, cpu, args))
            else:
                cmds.append(EngineCommand(host.name, host.role, host.name, tuple(args), cpu,
                                          tuple(keys), self._engine_env(host.role)))
        return cmds

    def _common_args(self, host: Host, io: str, cpu: int | None, ifnames: list[str]) -> list[str]:
        """An engine's namespace, io, core, DPDK file prefix and ports."""
        io = "dpdk" if self.dpdk else io
        if io == "auto":
            raise VswbenchError("io auto reached the testbed unresolved: plan the trial with "
                                "measure.plan.plan_trial, which chooses the tester")
        if io in GEN_ONLY_IO and host.role in (Role.NF, Role.SERVER):
            io = "afpacket"   # no fwd/reflect in the kernel generator: these keep afpacket
        common = ["--netns", self.run_id.name(host.name), "--io", io,
                  *(["--cpu", str(cpu)] if cpu is not None else [])]
        if self.dpdk:  # a DPDK file prefix of its own, carrying the run id
            common += ["--eal-args",
                       f"--file-prefix {self.run_id.name('e' + host_abbr(host.name))}"]
        for ifname in ifnames:
            common += ["--port", ifname]
        return common

    def _nf_args(self, wiring: Wiring, keys: list[str], common: list[str],
                 next_hop: dict[tuple[str, str], str], core: tuple[int | None, int],
                 server_duration: float) -> list[str]:
        """fwd of NF `core[1]` on CPU core[0]: frames leaving `in` go back towards the previous
        hop (l2: its source port, l3: the gateway of `in`), frames leaving `out` take out's."""
        cpu, nf_index = core
        into_in = self.hop_into(keys[0])
        reverse = (into_in.dst, into_in.src)
        back = (next_hop[reverse] if reverse in next_hop
                else self._gateway(wiring, keys[0]) if self.switch_cls.l3
                else wiring.ports[into_in.src].mac)
        ahead = self.hop_from(keys[1])
        args = ["fwd", *common, "--rewrite-mac", "--dst-mac", back,
                "--dst-mac", next_hop[(ahead.src, ahead.dst)],
                "--duration", _fmt(server_duration)]
        if not self.dpdk and (self.nf_poll == SLEEP or (
                self.nf_poll == AUTO and self._shares_cpu(cpu, nf_index))):
            # idle: give the core to its neighbours; a ring as deep as a sleeping sink's
            # rides out their time slices (NF drops were all inside its socket ring)
            args += ["--no-busy-poll", "--ring", str(SLEEPING_NF_RING)]
        return args

    def _server_args(self, role: Role, common: list[str], cpu: int | None,
                     server_duration: float) -> list[str]:
        """sink of a receiver, reflect of a server (which yields a core it shares)."""
        if role == Role.RECEIVER:
            return ["sink", *common, "--duration", _fmt(server_duration)]
        args = ["reflect", *common, "--duration", _fmt(server_duration)]
        if cpu is not None and cpu in (*self.placement.switch_cpus, *self.placement.tester_cpus):
            args.append("--no-busy-poll")  # sharing a core: do not starve its partner
        return args

    def _engine_env(self, role: Role) -> tuple[tuple[str, str], ...]:
        """A DPDK engine's: a long-running one must not wait for its links (its memif peers come
        after it), none waits at the end for its peer (the switch, which stays) to leave."""
        if not self.dpdk:
            return ()
        wait = (("VSB_DPDK_LINK_WAIT", "0"),) if role in LONG_RUNNING else ()
        return (*wait, ("VSB_DPDK_LINGER", "0"))

    def _vm_command(self, host: str, wiring: Wiring, keys: list[str], cpu: int | None,
                    fwd: list[str]) -> EngineCommand:
        """The fwd of a VM network function: its MAC and duration arguments go to the guest's
        engine, which sleeps when idle (under TCG a polling guest holds a host core)."""
        start = fwd.index("--rewrite-mac")
        guest = [a for a in fwd[start:] if a not in ("--no-busy-poll", "--ring", str(
            SLEEPING_NF_RING))] + ["--no-busy-poll"]
        program, args = vm_command(
            run_id=self.run_id, host=host, abbr=host_abbr(host), netns=self.run_id.name(host),
            ports=[wiring.ports[k].ifname for k in keys], macs=[wiring.ports[k].mac for k in keys],
            cpu=cpu, accel=vm_accel(self.options), guest_args=guest, dpdk=self.dpdk)
        return EngineCommand(host, Role.NF, host, tuple(args), cpu, tuple(keys), (), program,
                             READY_TIMEOUT_S, STOP_TIMEOUT_S)

    def _shares_cpu(self, cpu: int | None, nf_index: int) -> bool:
        """Does NF number `nf_index` share its core with the tester or another NF engine? Then it
        must not busy-poll: pollers on one core get scheduler slices (milliseconds) each, and a
        chain of them on the tester's core delivered nothing from five NFs on (measured)."""
        if cpu is None:
            return True
        if cpu in self.placement.tester_cpus:
            return True
        nfs = [h for h in self.scenario.hosts if h.role == Role.NF]
        return any(host_cpu(self.placement, Role.NF, i) == cpu
                   for i in range(1, len(nfs) + 1) if i != nf_index)

    def placement_warnings(self) -> list[str]:
        """Polling processes that share a core: each gets slices of it from the scheduler (a few
        ms), so throughput collapses and latency reaches milliseconds. On a 2-core machine pvp
        with a DPDK switch has three pollers (tester, switch, NF) for two cores."""
        sw = self.placement.switch_cpu
        if sw is None and self.placement.tester_cpu is None:
            return ["unpinned: the scheduler places tester, switch and NFs (and may move them "
                    "during a trial)"]
        both = sorted(set(self.placement.tester_cpus) & set(self.placement.switch_cpus))
        if both and not self.switch_cls.direct:
            return [f"the tester and the switch share CPU {', '.join(map(str, both))}: the "
                    "switch's work waits for the "
                    "tester's time slices, so the figures measure the scheduler as much as the "
                    "switch (give them different --tester-cpu and --switch-cpu)"]
        if not self.dpdk or self.switch_cls.direct:
            return []
        nf_index, shared = 0, []
        for host in self.scenario.hosts:
            if host.role == Role.NF:
                nf_index += 1
                cpu = host_cpu(self.placement, host.role, nf_index)
                if cpu is not None and cpu == sw and not host.vm:   # a guest's engine sleeps
                    shared.append(host.name)
        if not shared:
            return []
        return [f"{', '.join(shared)} and the {self.switch_cls.name} polling thread share CPU "
                f"{sw}: both poll, each gets scheduler slices of the core (expect low throughput "
                "and millisecond latency; give each poller a core of its own where there are any)"]


def plan_testbed(scenario: Scenario, switch_cls: type[Switch], run_id: RunId,
                 placement: Placement | None = None, options: Mapping[str, str] | None = None,
                 flows: int = 1) -> TestbedPlan:
    """The plan of a testbed, or UsageError for a combination that cannot run (nothing is
    created either way)."""
    problem = unsupported(scenario, switch_cls)
    if problem:
        raise UsageError(problem)
    opts = MappingProxyType(dict(options or {}))
    if scenario.apart:
        apart_problem(placement or Placement())
    nf = check_nf(opts, scenario, switch_cls)
    problem = vm_problem(scenario, switch_cls, nf)
    if problem:
        raise UsageError(problem)
    vm_accel(opts)
    bridged = frozenset(nf_hosts(scenario) if ports_in_switch_namespace(nf) else ())
    return TestbedPlan(scenario, switch_cls, run_id,
                       effective_placement(nf, placement or Placement()), opts, nf,
                       nf_poll(opts), flows,
                       tuple(plan_ports(scenario, run_id, l3=switch_cls.l3, in_switch=bridged)),
                       tuple(plan_paths(scenario)))
