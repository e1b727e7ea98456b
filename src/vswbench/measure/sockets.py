"""Bodies of `vswbench stream | rr | crr`: what applications see through a testbed. The
project's socket server (vswbench-sockapp, engine/sockapp.py) listens in the server's namespace,
its client drives N flows from the client's namespace, through the switch's kernel path; the
CPU of every core is accounted as the frame trials account it (/proc/stat busy time x TSC Hz).

Where a kernel socket can be each endpoint: rr and remote[-vxlan]-rr (client -> server),
p2p-pair, pairs:N and remote[-vxlan] (sender i -> receiver i; every pair at once), and pvp and
chain:N (client -> nf1 -> ... -> nfN -> server, each network function a kernel IP router in its
own namespace: measure/socket_chain.py; results say so in `nf`). The testbed forwards both
directions (the socket's replies and ACKs). Refused with exit 3 and the reason: the DPDK
switches (their ports are DPDK devices, which no kernel socket reaches), p2p and tester-dut (the
tester's two ports are one namespace, where the kernel delivers a socket's traffic locally), and
pvp and chain:N through l3 switches or with option nf other than fwd (socket_chain.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from vswbench.engine.params import TrialParams
from vswbench.engine.process import EngineProcess
from vswbench.engine.sockapp import BASE_PORT
from vswbench.engine.sockapp import MAX_FLOWS
from vswbench.engine.sockapp import MAX_SIZE
from vswbench.engine.sockapp import ClientResult
from vswbench.engine.sockapp import ServerResult
from vswbench.engine.sockapp import SockParams
from vswbench.engine.sockapp import find_sockapp
from vswbench.engine.sockapp import parse_client
from vswbench.engine.sockapp import parse_server
from vswbench.errors import UsageError
from vswbench.host.cpustat import CoreUsage
from vswbench.host.cpustat import busy_cycles
from vswbench.host.cpustat import core_usage
from vswbench.host.cpustat import process_cpu_s
from vswbench.host.cpustat import read_proc_stat
from vswbench.host.netns import LinkCounters
from vswbench.host.netns import sysctl
from vswbench.host.tuning import MTUS
from vswbench.host.tuning import OFFLOADS
from vswbench.host.tuning import SERVICE_VIP
from vswbench.host.tuning import add_service
from vswbench.host.tuning import run_namespaces
from vswbench.host.tuning import set_mtu
from vswbench.host.tuning import set_offloads
from vswbench.measure.plan import SwitchUnavailable
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import ensure_runnable
from vswbench.measure.plan import make_placement
from vswbench.measure.plan import plan_trial
from vswbench.measure.socket_chain import NF_ROUTING
from vswbench.measure.socket_chain import ChainRouting
from vswbench.measure.socket_chain import apply_routing
from vswbench.measure.socket_chain import chain_problem
from vswbench.measure.socket_chain import plan_routing
from vswbench.measure.socket_chain import read_forwarded
from vswbench.measure.socket_chain import socket_scenario
from vswbench.run.ids import RunId
from vswbench.run.scope import Run
from vswbench.run.scope import run_scope
from vswbench.scenario import Hop
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.base import Switch
from vswbench.switches.chain.nf import POLL_OPTION
from vswbench.switches.chain.nf import nf_hosts
from vswbench.testbed.build import Testbed
from vswbench.testbed.cores import host_cpu
from vswbench.testbed.plan import PortInfo

KINDS = ("stream", "rr", "crr")
START_TIMEOUT = 10.0
PEER_PORTS = (18400, 18401)       # bench/sockets_vs_peers: iperf3's and sockperf's servers
# the client's namespace: TIME_WAIT ports reused and the whole port range (crr opens tens of
# thousands of connections a minute; only the run's own namespace is touched)
CLIENT_SYSCTLS: dict[str, str | int] = {"net.ipv4.tcp_tw_reuse": 1,
                                        "net.ipv4.ip_local_port_range": "1024 65000"}


class SocketsUnsupported(SwitchUnavailable):
    """exit 3: this switch or scenario has no kernel socket endpoint."""


@dataclass(frozen=True)
class SocketOptions:
    switch: str
    scenario: str = "rr"
    load: SockParams = SockParams()
    mtu: int = 1500
    offloads: str = "default"       # default (as the switch left them) | on | off
    service: bool = False           # through a virtual IP DNAT'ed by nftables
    tester_cpu: int | None = None
    switch_cpu: int | None = None
    options: dict[str, str] | None = None


@dataclass(frozen=True)
class SocketPlan:
    switch_cls: type[Switch]
    scenario: Scenario              # with the reverse of every hop (replies, ACKs)
    placement: Placement
    options: dict[str, str]
    load: SockParams
    endpoints: tuple[tuple[str, str], ...]   # (client port key, server port key) per pair
    mtu: int
    offloads: str
    service: bool
    nf: str | None = None           # how the network functions forward (pvp, chain:N)


def endpoints(scenario: Scenario) -> list[tuple[str, str]]:
    """(client port, server port) of every pair (pvp and chain:N as socket_scenario makes
    them), or SocketsUnsupported with the reason."""
    scenario = socket_scenario(scenario)
    roles = {h.role for h in scenario.hosts}
    if Role.TESTER in roles:
        raise SocketsUnsupported(
            f"scenario {scenario.name}: the tester's two ports are one namespace, where the "
            "kernel delivers a socket's traffic locally (never through the switch); use rr, "
            "p2p-pair, pairs:N, pvp, chain:N or remote[-vxlan][-rr]")
    if Role.CLIENT in roles:
        return [(f"{h.name}.{h.ports[0]}", "server.p0") for h in scenario.hosts
                if h.role is Role.CLIENT]
    return [(f"{h.name}.{h.ports[0]}", f"r{h.name[1:]}.p0") for h in scenario.hosts
            if h.role is Role.SENDER]


def both_ways(scenario: Scenario) -> Scenario:
    hops = list(scenario.hops)
    for hop in scenario.hops:
        if Hop(hop.dst, hop.src) not in hops:
            hops.append(Hop(hop.dst, hop.src))
    return replace(scenario, hops=tuple(hops))


def plan_sockets(opts: SocketOptions) -> SocketPlan:
    """Check every input; nothing is created here."""
    problems = opts.load.problems()
    if problems:
        raise UsageError("; ".join(problems))
    if opts.mtu not in MTUS:
        raise UsageError(f"--mtu {opts.mtu}: expected {' or '.join(map(str, MTUS))}")
    if opts.offloads not in OFFLOADS:
        raise UsageError(f"--offloads {opts.offloads!r}: expected {', '.join(OFFLOADS)}")
    options = dict(opts.options or {})
    asked = parse(opts.scenario)
    chain = nf_hosts(asked)
    if chain:   # before plan_trial, whose check of option nf is the frame chains' (exit 2)
        if POLL_OPTION in options:
            raise UsageError(f"option {POLL_OPTION} says how fwd engines wait for frames, and "
                             f"socket measurements through {opts.scenario} run none (their "
                             f"network functions are {NF_ROUTING}); leave it out")
        problem = chain_problem(asked, options)
        if problem:
            raise SocketsUnsupported(problem)
    topts = TrialOptions(opts.switch, opts.scenario, TrialParams(io="afpacket"),
                         opts.tester_cpu, opts.switch_cpu, options=options)
    trial = plan_trial(topts)
    if trial.switch_cls.port_kind == "dpdk":
        raise SocketsUnsupported(
            f"switch {opts.switch}: its ports are DPDK devices (memif, vhost-user) that no "
            "kernel socket reaches; socket measurements need a kernel switch (see `vswbench "
            "switches`)")
    scenario = socket_scenario(trial.scenario)
    problem = chain_problem(scenario, trial.options, trial.switch_cls)
    if problem:
        raise SocketsUnsupported(problem)
    pairs = endpoints(scenario)
    # a router takes no core of its own (socket_chain.py): the client, switch and server sit
    # where rr puts them
    placement = make_placement(replace(topts, scenario="rr")) if chain else trial.placement
    return SocketPlan(trial.switch_cls, both_ways(scenario), placement, trial.options,
                      opts.load, tuple(pairs), opts.mtu, opts.offloads, opts.service,
                      NF_ROUTING if chain else None)


def _sockapp(run: Run, netns: str, args: list[str], label: str) -> EngineProcess:
    return EngineProcess(["netns", "exec", netns, str(find_sockapp()), *args], engine="ip",
                         registry=run.registry, state=run.state, label=label,
                         stop_timeout=10.0).start()


@dataclass
class SocketBed:
    """A built, tuned testbed: per pair its client port, server port and the address the
    client connects to (the server's, or the service's virtual IP)."""
    run: Run
    testbed: Testbed
    targets: list[tuple[PortInfo, PortInfo, str]]
    tuning: dict[str, Any]
    routing: ChainRouting | None = None     # pvp, chain:N: the routers (socket_chain.py)


@contextmanager
def socket_testbed(plan: SocketPlan, progress: Callable[[str], None] = print,
                   run_id: RunId | None = None) -> Iterator[SocketBed]:
    """Build the testbed, set its MTU and offloads, add the service path; removed on exit."""
    ensure_runnable(plan.switch_cls)
    find_sockapp()          # not found: fail before anything is built
    load = plan.load
    with run_scope(run_id=run_id) as run, Testbed(plan.scenario, plan.switch_cls, run, plan.placement,
                                     plan.options, flows=load.flows) as tb:
        assert tb.switch is not None
        routing = plan_routing(plan.scenario, tb.ports) if plan.nf else None
        if routing is not None:
            apply_routing(routing)
        progress(f"run {run.id}: {plan.switch_cls.name} / {plan.scenario.name} ready "
                 f"({tb.switch.forwarding_mode()}"
                 + (f"; network functions: {plan.nf}" if plan.nf else "") + ")")
        spaces = run_namespaces(str(run.id))
        tuning: dict[str, Any] = {"mtu": plan.mtu, "offloads": plan.offloads}
        if plan.mtu != 1500:
            tuning["mtu_links"] = set_mtu(spaces, plan.mtu)
        if plan.offloads != "default":
            tuning["offload_links"] = set_offloads(spaces, plan.offloads == "on")
        ports = [*range(BASE_PORT, BASE_PORT + MAX_FLOWS), *PEER_PORTS]
        targets = []
        for client_key, server_key in plan.endpoints:
            client, server = tb.ports[client_key], tb.ports[server_key]
            sysctl(client.netns, **CLIENT_SYSCTLS)
            target = server.ip
            if plan.service:
                l3_path = plan.switch_cls.l3 and not plan.scenario.sites
                add_service(tb.switch_ns if l3_path else client.netns, run.id.name("svc"),
                            vip=SERVICE_VIP, backend=server.ip, ports=ports,
                            hook="prerouting" if l3_path else "output", registry=run.registry,
                            route_dev=None if l3_path else client.ifname)
                target = SERVICE_VIP
            targets.append((client, server, target))
        yield SocketBed(run, tb, targets, tuning, routing)


def run_sockets(plan: SocketPlan, progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Build the testbed, tune it, run the servers and clients once; the result as JSON."""
    with socket_testbed(plan, progress) as bed:
        return measure_once(bed, plan, progress)


def measure_once(bed: SocketBed, plan: SocketPlan,
                 progress: Callable[[str], None] = print) -> dict[str, Any]:
    """One run of plan.load on a socket testbed: every pair's server, then its client."""
    run, tb, load = bed.run, bed.testbed, plan.load
    servers: list[EngineProcess] = []
    try:
        for i, (_, server, _) in enumerate(bed.targets):
            proc = _sockapp(run, server.netns, load.server_args(
                server.ip, cpu=host_cpu(plan.placement, Role.SERVER, 0)), f"server{i + 1}")
            servers.append(proc)
            proc.wait_for_record("ready", START_TIMEOUT)
        progress(f"run {run.id}: {load.mode} {load.proto}, {load.flows} flow(s) of "
                 f"{load.size} B for {load.duration:g} s")
        routed = read_forwarded(bed.routing) if bed.routing else {}
        links_before = tb.kernel_counters()
        before = read_proc_stat()
        started = time.monotonic()
        clients = [_sockapp(run, client.netns, load.client_args(
            target, cpu=plan.placement.tester_core(i)), f"client{i + 1}")
            for i, (client, _, target) in enumerate(bed.targets)]
        client_results = [proc.wait(load.duration + 30).check() for proc in clients]
        after = read_proc_stat()
        elapsed = time.monotonic() - started
        if bed.routing:
            routed = {nf: n - routed[nf] for nf, n in read_forwarded(bed.routing).items()}
        drops = port_tx_drops(links_before, tb.kernel_counters())
        server_cpu = [process_cpu_s(p.pid) for p in servers]
    finally:
        server_results = [p.stop() for p in servers]
    parsed_c = [parse_client(r.of_type("result")[-1].data) for r in client_results]
    parsed_s = [parse_server(r.check().of_type("result")[-1].data) for r in server_results]
    # the client calibrated the TSC as the engine does (engine/src/tsc.c)
    tsc_hz = next((float(c.raw["tsc_hz"]) for c in parsed_c if c.raw.get("tsc_hz")), None)
    usage = core_usage(before, after)
    result = summarize(plan, parsed_c, parsed_s, elapsed=elapsed,
                       cycles=busy_cycles(usage, tsc_hz) if tsc_hz else None,
                       busy_s=sum(u.busy_s for u in usage.values()))
    result.update({
        "switch": plan.switch_cls.name, "scenario": plan.scenario.name,
        "forwarding_mode": tb.switch.forwarding_mode() if tb.switch else None,
        "nf": plan.nf,
        "nf_forwarded": routed if bed.routing else None,
        "run_id": str(run.id),
        "placement": asdict(plan.placement), "switch_versions": plan.switch_cls.versions(),
        "port_tx_drops": drops,
        "tuning": bed.tuning, "service_vip": SERVICE_VIP if plan.service else None,
        "tsc_hz": tsc_hz, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpu": {str(c): {k: v for k, v in asdict(u).items() if k != "cpu"}
                for c, u in usage.items()},
        "process_cpu_s": {"clients": [c.cpu_s for c in parsed_c], "servers": server_cpu},
        "cost_per_core": per_core_cost(usage, result, tsc_hz)})
    return result


def port_tx_drops(before: dict[str, LinkCounters],
                  after: dict[str, LinkCounters]) -> dict[str, int]:
    """Frames each host port (by key) could not hand on during a run, where there were any:
    its tx_dropped's growth. A veth whose peer receives through NAPI (kernel_mode napi) drops a
    frame when the peer's 256-frame ring is full and the veth has no qdisc to stop (noqueue, as
    veths are created); TCP retransmits what the client's port dropped (data) and recovers what
    the server's dropped (ACKs). Measured on the bridge: these drops account for nearly every
    retransmission, for iperf3 as for the sockapp (docs/guide/sockets.md)."""
    return {key: after[key].tx_dropped - before[key].tx_dropped for key in sorted(after)
            if key in before and after[key].tx_dropped > before[key].tx_dropped}


def per_core_cost(usage: dict[int, CoreUsage], result: dict[str, Any],
                  tsc_hz: float | None) -> dict[str, dict[str, float | None]]:
    """Each core's share of the cost: its busy seconds per GB moved and its busy cycles per
    transaction (the client's core, the switch's and the server's)."""
    moved, transactions = result["bytes_moved"], result["transactions"]
    return {str(cpu): {
        "cpu_s_per_gb": round(u.busy_s / (moved / 1e9), 4) if moved else None,
        "cycles_per_transaction": (round(u.busy_s * tsc_hz / transactions, 1)
                                   if tsc_hz and transactions else None)}
        for cpu, u in usage.items()}


def merged_histogram(clients: list[ClientResult]) -> list[list[int]]:
    merged: dict[tuple[int, int], int] = {}
    for c in clients:
        for low, high, count in c.histogram:
            merged[(low, high)] = merged.get((low, high), 0) + count
    return [[lo, hi, n] for (lo, hi), n in sorted(merged.items())]


def quantile_us(histogram: list[list[int]], q: float) -> float | None:
    """The q quantile of a merged histogram (bucket midpoint, microseconds)."""
    total = sum(b[2] for b in histogram)
    if not total:
        return None
    rank, seen = q * total, 0
    for low, high, count in histogram:
        seen += count
        if seen >= rank:
            return round((low + high) / 2 / 1000, 3)
    return round((histogram[-1][0] + histogram[-1][1]) / 2 / 1000, 3)


def summarize(plan: SocketPlan, clients: list[ClientResult], servers: list[ServerResult], *,
              elapsed: float, cycles: float | None, busy_s: float) -> dict[str, Any]:
    """The headline figures of one run over every client and server (pure)."""
    load = plan.load
    duration = max((c.duration_s for c in clients), default=0.0) or elapsed
    stream_bytes = (sum(s.bytes_received for s in servers) if load.proto == "udp"
                    else sum(c.bytes_acked for c in clients))
    transactions = sum(c.transactions for c in clients)
    connections = sum(c.connections for c in clients) if load.mode == "crr" else 0
    moved = (stream_bytes if load.mode == "stream"
             else sum(c.bytes_sent + int(c.raw.get("bytes_received", 0)) for c in clients))
    hist = merged_histogram(clients)
    latency = ({k: quantile_us(hist, q) for k, q in (("p50", .5), ("p90", .9), ("p99", .99),
                                                     ("p999", .999))}
               if hist else {})
    if hist:
        latency.update(min=min(c.latency.min or 0 for c in clients if c.latency.count),
                       max=max(c.latency.max or 0 for c in clients if c.latency.count),
                       count=sum(b[2] for b in hist))
    sent = sum(c.bytes_sent for c in clients)
    return {
        "kind": load.mode, "proto": load.proto, "flows": load.flows, "size": load.size,
        "read_size": (load.read_size or MAX_SIZE) if load.mode == "stream" and load.proto == "tcp"
        else None,
        "mtu": plan.mtu, "offloads": plan.offloads, "service": plan.service,
        "pairs": len(clients), "duration_s": round(duration, 4),
        "goodput_gbps": (round(stream_bytes * 8 / duration / 1e9, 4)
                         if load.mode == "stream" and duration else None),
        "udp_loss_ratio": (round(1 - stream_bytes / sent, 6) if load.mode == "stream"
                           and load.proto == "udp" and sent else None),
        # UDP stream: each client's pacing (None: as fast as its sockets took the datagrams),
        # what the clients sent, and the departures a full socket buffer held up
        "rate_bps": load.rate_bps if load.mode == "stream" and load.proto == "udp" else None,
        "sent_gbps": (round(sent * 8 / duration / 1e9, 4) if load.mode == "stream"
                      and load.proto == "udp" and duration else None),
        "send_waits": (sum(int(c.raw.get("send_waits") or 0) for c in clients)
                       if load.mode == "stream" and load.proto == "udp" else None),
        "retransmits": sum(c.retransmits for c in clients) if load.proto == "tcp" else None,
        "transactions": transactions,
        "transactions_per_s": round(transactions / duration, 1) if load.mode != "stream" else None,
        "timeouts": sum(c.timeouts for c in clients),
        "connections_per_s": round(connections / duration, 1) if load.mode == "crr" else None,
        "connect_errors": sum(c.connect_errors for c in clients),
        "latency_us": latency, "histogram": hist, "bytes_moved": moved,
        "latency_kind": "socket transaction round trip" if hist else None,
        "busy_cpu_s": round(busy_s, 4),
        "cpu_s_per_gb": round(busy_s / (moved / 1e9), 4) if moved else None,
        "cycles_per_transaction": (round(cycles / transactions, 1)
                                   if cycles and transactions else None),
        "clients": [c.raw | {"hist": None} for c in clients],
        "servers": [s.raw for s in servers]}
