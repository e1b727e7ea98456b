"""Testbed: instantiate a Scenario around a Switch class, and own everything it creates.

    sw ns  <run id>sw             the switch's own namespace (empty until the backend fills it)
    hosts  <run id><host name>    one namespace per scenario Host (tester, nf1, s1, r1, ...)
    ports  <run id><abbr>p<j>     host interfaces, e.g. vsb1a2btp0, vsb1a2bn1p1 (<= 15 chars)

Addresses come only from 198.18.0.0/15: for l2 switches every host port sits in one /16
(198.18.<host>.<port>/16); for l3 switches (router) each port has a /24 of its own, host .2,
gateway .1 (set by the backend). Everything is registered with the run's cleanup registry the
moment it exists; leaving the `with` block removes it, newest first.

After wiring, the testbed knows for every hop the MAC a frame needs to leave with (l2/direct: the
destination host port's MAC; l3: the gateway's, i.e. the switch side of the source's attachment)
and builds the engine command line of every host (`engine_commands`).

Chains whose network functions are not engines (option nf=router|ovs of the veth backend,
switches/chain_nf.py): no engine runs for the NFs, the backend builds them (ctx.nf_hosts). nf=ovs elements
are bridges: their ports are planned into the switch namespace without addresses (no NF
namespaces), the drivers address frames to the stream's final port (the bridges forward them
unchanged), and the recorded placement puts the NFs on the switch CPU, where ovs-vswitchd runs.
"""

from __future__ import annotations

import ipaddress
import re
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from typing import Any

from vswbench.engine.params import GEN_ONLY_IO, TrialParams
from vswbench.errors import UsageError, VswbenchError
from vswbench.host.netns import (LinkCounters, Namespace, add_address, addresses, ip_json,
                                 mac_address, namespace_pids, set_neighbour, sysctl, wait_link_up)
from vswbench.run.ids import RunId
from vswbench.run.scope import Run
from vswbench.scenario import Role, Scenario
from vswbench.switches.base import (Attachment, ForwardPath, HostPort, Placement, Switch,
                                    SwitchContext)
from vswbench.switches.chain.nf import (AUTO, FWD, SLEEP, check_nf, effective_placement, nf_hosts,
                                        nf_poll, ports_in_switch_namespace, runs_engine)
from vswbench.testbed.sites import SiteSwitches, remote_problem

L2_NET = ipaddress.ip_network("198.18.0.0/16")
LONG_RUNNING = (Role.NF, Role.RECEIVER, Role.SERVER)   # started first, stopped after the tester
DRIVERS = (Role.TESTER, Role.SENDER, Role.CLIENT)
LINK_TIMEOUT = 10.0
SLEEPING_NF_RING = 8192     # frames: an NF that does not busy-poll, as the engine's sink has
# Sysctls for host namespaces: no ICMP errors for the engine's frames (port unreachable would add
# frames the engine never sent), no ARP for addresses of other ports of the same namespace.
HOST_SYSCTLS = {"net.ipv4.icmp_msgs_per_sec": 0,
                "net.ipv4.icmp_msgs_burst": 0, "net.ipv4.conf.all.arp_ignore": 1,
                "net.ipv4.conf.all.arp_announce": 2}


# -- planning (pure) ---------------------------------------------------------------------------
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
    if switch_cls.port_kind != "dpdk" or not switch_cls.direct or scenario.name == "p2p":
        return None
    return (f"scenario {scenario.name} is not supported on {switch_cls.name}: engines joined by "
            "memif directly run only in p2p (across processes a polling engine crashed while "
            "its memif connected); use a DPDK switch (testpmd, ovs-dpdk) for this scenario")


def host_cpu(placement: Placement, role: Role, nf_index: int) -> int | None:
    """CPU of a host's engine: tester side (tester, sender, receiver, client) on the tester CPU,
    network functions round-robin over nf_cpus, the reflecting server on the first NF CPU."""
    if role == Role.NF:
        return placement.nf_cpu(nf_index)
    if role == Role.SERVER:
        return placement.nf_cpus[0] if placement.nf_cpus else placement.switch_cpu
    return placement.tester_cpu


# -- engine command lines ----------------------------------------------------------------------
@dataclass(frozen=True)
class EngineCommand:
    host: str
    role: Role
    label: str                   # unique per command, e.g. "tester", "nf1"
    args: tuple[str, ...]        # engine arguments (without the binary)
    cpu: int | None
    ports: tuple[str, ...]       # HostPort keys it opens
    env: tuple[tuple[str, str], ...] = ()   # extra environment of the engine process

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


def _fmt(x: float) -> str:
    return f"{x:.6g}" if x != int(x) else str(int(x))


class Testbed:
    """Context manager: builds the scenario around a switch; tears all of it down on exit."""

    __test__ = False  # not a pytest test class
    nf: str = FWD     # how the network functions forward (option nf, switches/chain_nf.py)
    nf_poll: str = AUTO   # how fwd engines wait for frames (option nf_poll, switches/chain_nf.py)

    def __init__(self, scenario: Scenario, switch_cls: type[Switch], run: Run,
                 placement: Placement | None = None,
                 options: dict[str, str] | None = None, flows: int = 1) -> None:
        self.scenario = scenario
        self.flows = flows     # the workload's flow count, for backends with per-flow rules
        self.switch_cls = switch_cls
        self.run = run
        self.options = dict(options or {})
        problem = unsupported(scenario, switch_cls)
        if problem:
            raise UsageError(problem)
        self.nf = check_nf(self.options, scenario, switch_cls)
        self.nf_poll = nf_poll(self.options)
        self.placement = effective_placement(self.nf, placement or Placement())
        self.switch_ns = run.id.name("sw")
        self.host_ports = plan_ports(scenario, run.id, l3=switch_cls.l3,
                                     in_switch=frozenset(self._bridged_hosts()))
        self.paths = plan_paths(scenario)
        self.switch: Switch | None = None
        self.attachments: dict[str, Attachment] = {}
        self.ports: dict[str, PortInfo] = {}
        self.next_hop_mac: dict[tuple[str, str], str] = {}
        self._stack = ExitStack()

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
        reg = self.run.registry
        self._stack.enter_context(Namespace(self.switch_ns, reg))
        for host in self.scenario.hosts:
            if host.name in self._bridged_hosts():
                continue  # nf=ovs: a bridge in the switch namespace, no namespace of its own
            ns = self.run.id.name(host.name)
            self._stack.enter_context(Namespace(ns, reg))
            sysctl(ns, **HOST_SYSCTLS)
        ctx = SwitchContext(self.run.id, reg, self.switch_ns, self.placement, self.options,
                            temp_dir=str(self.run.temp_dir()),
                            long_running_hosts=frozenset(h.name for h in self.scenario.hosts
                                                         if h.role in LONG_RUNNING),
                            nf_hosts=() if runs_engine(self.nf) else nf_hosts(self.scenario),
                            flows=self.flows)
        switch = (SiteSwitches(ctx, self.scenario, self.switch_cls) if self.scenario.sites
                  else self.switch_cls(ctx))   # scenario remote: a switch per site (sites.py)
        self.switch = switch
        teardown = reg.register(f"switch {self.switch_cls.name}", switch.teardown)
        self._stack.callback(teardown.release)
        switch.setup()
        for hp in self.host_ports:
            self.attachments[hp.key] = switch.attach(hp)
            self._address(hp)
        switch.forward(self.paths)
        self._record_daemons()
        if self.dpdk:
            self._dpdk_ports()
            return
        for hp in self.host_ports:
            wait_link_up(hp.netns, hp.ifname, timeout=LINK_TIMEOUT)
            self._address(hp)  # direct backends may create the link only in forward()
            self.ports[hp.key] = PortInfo(hp.key, hp.netns, hp.ifname, hp.ip_cidr,
                                          mac_address(hp.netns, hp.ifname))
        for path in self.paths:
            self.next_hop_mac[(path.src, path.dst)] = self._next_hop(path)
        self._neighbours()

    def _bridged_hosts(self) -> tuple[str, ...]:
        """NF hosts that are bridges in the switch namespace (nf=ovs), not namespaces."""
        return nf_hosts(self.scenario) if ports_in_switch_namespace(self.nf) else ()

    @property
    def dpdk(self) -> bool:
        """Host ports are DPDK virtual devices (no kernel links, no addresses, no neighbours)."""
        return self.switch_cls.port_kind == "dpdk"

    def _dpdk_ports(self) -> None:
        for hp in self.host_ports:
            att = self.attachments[hp.key]
            if not att.dpdk_port or not att.host_mac:
                raise VswbenchError(f"{self.switch_cls.name}: port {hp.key} got no DPDK device")
            self.ports[hp.key] = PortInfo(hp.key, hp.netns, att.dpdk_port, hp.ip_cidr, att.host_mac)
        for path in self.paths:
            self.next_hop_mac[(path.src, path.dst)] = self._next_hop(path)

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
                argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            state.add_process(pid, [a.decode(errors="replace") for a in argv if a])

    def _next_hop(self, path: ForwardPath) -> str:
        if self._bridged_hosts():   # bridges forward frames unchanged: address the final port
            return self.final_destination(path.src).mac
        if self.switch_cls.l3:
            att = self.attachments[path.src]
            if att.switch_mac:
                return att.switch_mac
            if att.switch_ifname:
                return mac_address(self.switch_ns, att.switch_ifname)
            raise VswbenchError(f"{self.switch_cls.name}: no gateway MAC for {path.src}")
        return self.ports[path.dst].mac

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
        return next(p for p in self.paths if p.src == key)

    def hop_into(self, key: str) -> ForwardPath:
        return next(p for p in self.paths if p.dst == key)

    def final_destination(self, key: str) -> PortInfo:
        """Follow the hops from `key` through network functions to the port the stream ends at."""
        current = self.hop_from(key).dst
        for _ in range(len(self.paths) + 1):
            host = self.scenario.host(current.split(".")[0])
            if host.role != Role.NF:
                return self.ports[current]
            current = self.hop_from(f"{host.name}.{host.ports[1]}").dst
        raise VswbenchError(f"scenario {self.scenario.name}: hops from {key} form a loop")

    def kernel_counters(self) -> dict[str, LinkCounters]:
        """Kernel interface counters of every host port (one `ip` call per namespace); none for
        DPDK ports."""
        if self.dpdk:
            return {}
        by_ns: dict[str, dict[str, Any]] = {}
        result = {}
        for info in self.ports.values():
            if info.netns not in by_ns:
                by_ns[info.netns] = {str(link["ifname"]): link for link in
                                     ip_json("-s", "link", "show", netns=info.netns)}
            stats = by_ns[info.netns][info.ifname]["stats64"]
            rx, tx = stats["rx"], stats["tx"]
            result[info.key] = LinkCounters(rx["packets"], tx["packets"], rx["bytes"], tx["bytes"],
                                            rx["dropped"], tx["dropped"])
        return result

    def activity(self) -> object:
        """Something that changes while frames move: the host ports' kernel counters, or for DPDK
        ports the switch's port counters."""
        if self.dpdk:
            assert self.switch is not None
            return self.switch.port_counters()
        return self.kernel_counters()

    def placement_warnings(self) -> list[str]:
        """Polling processes that share a core: each gets slices of it from the scheduler (a few
        ms), so throughput collapses and latency reaches milliseconds. On a 2-core machine pvp
        with a DPDK switch has three pollers (tester, switch, NF) for two cores."""
        sw = self.placement.switch_cpu
        if sw is None and self.placement.tester_cpu is None:
            return ["unpinned: the scheduler places tester, switch and NFs (and may move them "
                    "during a trial)"]
        if self.placement.tester_cpu == sw and not self.switch_cls.direct:
            return [f"the tester and the switch share CPU {sw}: the switch's work waits for the "
                    "tester's time slices, so the figures measure the scheduler as much as the "
                    "switch (give them different --tester-cpu and --switch-cpu)"]
        if not self.dpdk or self.switch_cls.direct:
            return []
        nf_index, shared = 0, []
        for host in self.scenario.hosts:
            if host.role == Role.NF:
                nf_index += 1
                cpu = host_cpu(self.placement, host.role, nf_index)
                if cpu is not None and cpu == sw:
                    shared.append(host.name)
        if not shared:
            return []
        return [f"{', '.join(shared)} and the {self.switch_cls.name} polling thread share CPU "
                f"{sw}: both poll, each gets scheduler slices of the core (expect low throughput "
                "and millisecond latency; give each poller a core of its own where there are any)"]

    def describe(self) -> dict[str, Any]:
        return {"scenario": self.scenario.name, "switch": self.switch_cls.name, "nf": self.nf,
                "switch_netns": self.switch_ns, "placement": asdict(self.placement),
                "ports": {k: asdict(v) for k, v in self.ports.items()},
                "next_hop_mac": {f"{s}->{d}": m for (s, d), m in self.next_hop_mac.items()}}

    # -- engine command lines --------------------------------------------------------------
    def engine_commands(self, traffic: TrialParams, *, stream_base: int = 1,
                        server_duration: float = 0.0) -> list[EngineCommand]:
        """The engine processes of one run of `traffic`: drivers (gen/loop) from stream id
        `stream_base` on, and long-running NFs, sinks and reflectors that stay up for
        `server_duration` seconds (0: the traffic's duration + 60)."""
        cmds: list[EngineCommand] = []
        senders = [h for h in self.scenario.hosts if h.role in DRIVERS]
        server_duration = server_duration or traffic.duration + 60
        stream = stream_base
        nf_index = 0
        for host in self.scenario.hosts:
            ns = self.run.id.name(host.name)
            if host.role == Role.NF:
                nf_index += 1
                if not runs_engine(self.nf):
                    continue  # the backend builds this network function (nf=router|ovs)
            cpu = host_cpu(self.placement, host.role, nf_index)
            keys = [f"{host.name}.{p}" for p in host.ports]
            io = "dpdk" if self.dpdk else traffic.io
            if io == "auto":
                raise VswbenchError("io auto reached the testbed unresolved: plan the trial with "
                                    "measure.plan.plan_trial, which chooses the tester")
            if io in GEN_ONLY_IO and host.role in (Role.NF, Role.SERVER):
                io = "afpacket"   # no fwd/reflect in the kernel generator: these keep afpacket
            common = ["--netns", ns, "--io", io, *(["--cpu", str(cpu)] if cpu is not None
                                                   else [])]
            if self.dpdk:  # a DPDK file prefix of its own, carrying the run id
                common += ["--eal-args", f"--file-prefix {self.run.id.name('e' + host_abbr(host.name))}"]
            for key in keys:
                common += ["--port", self.ports[key].ifname]
            send = traffic.send_args(len(senders))
            field = self.switch.flow_field() if self.switch is not None else None
            send += ["--flow-field", field] if field else []
            if host.role in DRIVERS:
                first = self.hop_from(keys[0])
                dst = self.final_destination(keys[0])
                mode = "gen" if host.role == Role.SENDER else "loop"
                args = [mode, *common, *send, "--dst-mac", self.next_hop_mac[(first.src, first.dst)],
                        "--dst-ip", self.switch.destination_ip(dst.ip) if self.switch else dst.ip,
                        "--stream-id", str(stream)]
                stream += 1
            elif host.role == Role.NF:
                into_in = self.hop_into(keys[0])
                # frames leaving `in` go back towards the previous hop: in l2 its source port,
                # in l3 the gateway of `in`; frames leaving `out` take out's hop.
                back = (self.next_hop_mac[self._reverse_key(into_in)]
                        if self._reverse_key(into_in) in self.next_hop_mac
                        else self._back_mac(keys[0], into_in.src))
                ahead = self.hop_from(keys[1])
                args = ["fwd", *common, "--rewrite-mac", "--dst-mac", back,
                        "--dst-mac", self.next_hop_mac[(ahead.src, ahead.dst)],
                        "--duration", _fmt(server_duration)]
                if not self.dpdk and (self.nf_poll == SLEEP or (
                        self.nf_poll == AUTO and self._shares_cpu(cpu, nf_index))):
                    # idle: give the core to its neighbours; a ring as deep as a sleeping sink's
                    # rides out their time slices (NF drops were all inside its socket ring)
                    args += ["--no-busy-poll", "--ring", str(SLEEPING_NF_RING)]
            elif host.role == Role.RECEIVER:
                args = ["sink", *common, "--duration", _fmt(server_duration)]
            else:  # SERVER
                args = ["reflect", *common, "--duration", _fmt(server_duration)]
                if cpu is not None and cpu in (self.placement.switch_cpu,
                                               self.placement.tester_cpu):
                    args.append("--no-busy-poll")  # sharing a core: do not starve its partner
            # A long-running DPDK engine reports ready before its memif peers exist (the drivers
            # start after it): it must not wait for its links to come up.
            env: tuple[tuple[str, str], ...] = ()
            if self.dpdk and host.role in LONG_RUNNING:
                env += (("VSB_DPDK_LINK_WAIT", "0"),)
            if self.dpdk:
                # an engine's memif peer here is the switch (or its own other port), which stays:
                # waiting at the end for it to leave first would only add the wait
                env += (("VSB_DPDK_LINGER", "0"),)
            cmds.append(EngineCommand(host.name, host.role, host.name, tuple(args), cpu,
                                      tuple(keys), env))
        return cmds

    def _shares_cpu(self, cpu: int | None, nf_index: int) -> bool:
        """Does NF number `nf_index` share its core with the tester or another NF engine? Then it
        must not busy-poll: pollers on one core get scheduler slices (milliseconds) each, and a
        chain of them on the tester's core delivered nothing from five NFs on (measured)."""
        if cpu is None:
            return True
        if cpu == self.placement.tester_cpu:
            return True
        nfs = [h for h in self.scenario.hosts if h.role == Role.NF]
        return any(host_cpu(self.placement, Role.NF, i) == cpu
                   for i in range(1, len(nfs) + 1) if i != nf_index)

    @staticmethod
    def _reverse_key(path: ForwardPath) -> tuple[str, str]:
        return (path.dst, path.src)

    def _back_mac(self, from_key: str, to_key: str) -> str:
        if self.switch_cls.l3:
            att = self.attachments[from_key]
            return att.switch_mac or mac_address(self.switch_ns, att.switch_ifname or "")
        return self.ports[to_key].mac

