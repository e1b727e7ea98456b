"""One trial: a fixed offered load for a fixed time through a Testbed.

Phases (each a fresh set of engine processes, so every count belongs to exactly one phase):
  warm-up   network functions / receivers / reflectors, then the drivers at the trial rate for
            `warmup` seconds with other stream ids (switch learning, caches); once no frame is in
            flight, all stopped;
  measured  the long-running engines start and report ready (their start record), kernel counters,
            switch port counters and /proc/stat are sampled, the drivers run for `duration`, the
            testbed waits until no frame is in flight, everything is sampled again, the
            long-running engines are stopped (SIGTERM: final record).
"""

from __future__ import annotations

import signal
import time
from contextlib import ExitStack
from contextlib import suppress
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

from vswbench.engine.params import TrialParams
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import EngineResult
from vswbench.engine.process import FinalRecord
from vswbench.engine.records import HistogramBucket
from vswbench.engine.records import LatencySummary
from vswbench.engine.stalls import StallMonitor
from vswbench.engine.stalls import now_ns
from vswbench.errors import VswbenchError
from vswbench.host.cpustat import busy_cycles
from vswbench.host.cpustat import core_usage
from vswbench.host.cpustat import cycles_per_packet
from vswbench.host.cpustat import process_cpu_s
from vswbench.host.cpustat import read_proc_stat
from vswbench.host.irqstat import IrqCounts
from vswbench.host.irqstat import irq_rates
from vswbench.host.irqstat import read_irq_counts
from vswbench.host.netns import LinkCounters
from vswbench.host.netns import TimeoutWaiting
from vswbench.host.netns import wait_until
from vswbench.measure.profiling import profiled
from vswbench.measure.trial_result import CounterCheck as CounterCheck
from vswbench.measure.trial_result import TrialResult as TrialResult
from vswbench.scenario import Role
from vswbench.switches.base import BusyCycles
from vswbench.switches.base import PortCounters
from vswbench.switches.chain.nf import element_counters
from vswbench.switches.chain.nf import nf_hosts
from vswbench.testbed.build import EngineCommand
from vswbench.testbed.build import Testbed
from vswbench.testbed.cores import dut_cpus

READY_TIMEOUT = 15.0
POLL_S = 0.05   # how often a phase looks at its network functions while its drivers run
PORTS_POLLED_TIMEOUT = 5.0  # a switch that enables ports late: the longest its drivers wait
SETTLE_QUIET_S = 0.1  # after the drivers: no port counter changed this long, nothing is in flight
WARMUP_STREAM_BASE = 100


def _cores(usage: dict[int, Any]) -> dict[str, dict[str, float]]:
    return {str(cpu): {k: v for k, v in asdict(u).items() if k != "cpu"} for cpu, u in usage.items()}


def _churn(finals: list[FinalRecord]) -> dict[str, float] | None:
    churning = [f.raw for f in finals if f.raw.get("flow_arrival")]
    if not churning:
        return None
    first = churning[0]
    return {"arrival": float(first["flow_arrival"]), "life": float(first.get("flow_life") or 0),
            "active": float(first.get("churn_active") or 0),
            "flows": float(sum(int(r.get("churn_flows") or 0) for r in churning))}


# -- latency of several receivers --------------------------------------------------------------
def _percentile(buckets: list[HistogramBucket], q: float) -> float | None:
    total = sum(b.count for b in buckets)
    if not total:
        return None
    need, seen = q * total, 0
    for b in sorted(buckets, key=lambda b: b.low_ns):
        seen += b.count
        if seen >= need:
            return b.high_ns / 1000.0
    return buckets[-1].high_ns / 1000.0


def merge_latency(finals: list[FinalRecord]) -> dict[str, float | None]:
    """One receiver: its summary. Several: percentiles from the merged histograms (bucket upper
    bounds), min/max/mean exact, the standard deviation pooled from each receiver's mean and
    standard deviation. p25 and p95 (Emmerich et al. Table 2) always from the histogram (the
    engine's summary has neither)."""
    with_lat = [f for f in finals if f.latency_us is not None and not f.latency_us.empty]
    keys = ("min", "p25", "p50", "p90", "p95", "p99", "p999", "p9999", "max", "mean", "stddev")
    if not with_lat:
        return {k: None for k in keys}
    buckets = [b for f in with_lat for b in f.hist]
    if len(with_lat) == 1:
        lat: LatencySummary = with_lat[0].latency_us  # type: ignore[assignment]
        summary = {k: getattr(lat, k, None) for k in keys}
        for k, q in (("p25", 0.25), ("p95", 0.95)):
            v = _percentile(buckets, q) if buckets else None
            summary[k] = None if v is None else min(max(v, lat.min or v), lat.max or v)
        return summary
    lats = [f.latency_us for f in with_lat if f.latency_us is not None]   # all of them
    counts = [max(1, f.rx_frames) for f in with_lat]
    mean = sum((la.mean or 0) * c for la, c in zip(lats, counts)) / sum(counts)
    low = min(la.min for la in lats if la.min is not None)
    high = max(la.max for la in lats if la.max is not None)

    def within(q: float) -> float | None:  # a bucket's upper bound may pass the exact extremes
        v = _percentile(buckets, q)
        return None if v is None else min(max(v, low), high)

    pooled = sum(((la.stddev or 0) ** 2 + ((la.mean or 0) - mean) ** 2) * c
                 for la, c in zip(lats, counts)) / sum(counts)
    return {"min": low, "p25": within(0.25), "p50": within(0.5), "p90": within(0.9),
            "p95": within(0.95), "p99": within(0.99), "p999": within(0.999),
            "p9999": within(0.9999), "max": high, "mean": mean,
            "stddev": pooled ** 0.5 if all(la.stddev is not None for la in lats) else None}


def merge_delay_variation(finals: list[FinalRecord]) -> tuple[float | None,
                                                               dict[str, float] | None]:
    """RFC 3550 jitter and RFC 3393 IPDV percentiles of the receivers that measured latency:
    one receiver's own; of several, the jitter weighted by frames received and no IPDV (its
    percentiles do not merge from the summaries)."""
    with_lat = [f for f in finals if f.latency_us is not None and not f.latency_us.empty
                and f.jitter_us is not None]
    if not with_lat:
        return None, None
    if len(with_lat) == 1:
        return with_lat[0].jitter_us, with_lat[0].ipdv_us
    counts = [max(1, f.rx_frames) for f in with_lat]
    jitter = sum((f.jitter_us or 0.0) * c for f, c in zip(with_lat, counts)) / sum(counts)
    return jitter, None


# -- phases ------------------------------------------------------------------------------------
@dataclass
class PhaseOutcome:
    results: dict[str, EngineResult]
    commands: dict[str, EngineCommand]
    kernel_before: dict[str, LinkCounters]
    kernel_after: dict[str, LinkCounters]
    switch_before: list[PortCounters]
    switch_after: list[PortCounters]
    cpu_usage: dict[int, Any]
    process_cpu: dict[str, float | None]
    busy_before: BusyCycles | None = None
    busy_after: BusyCycles | None = None
    irq_before: IrqCounts | None = None     # /proc/softirqs and /proc/interrupts
    irq_after: IrqCounts | None = None
    # when the first driver's "start" record arrived (CLOCK_MONOTONIC ns): its traffic began
    traffic_start_ns: int | None = None


def start_long_running(c: EngineCommand, testbed: Testbed, stack: ExitStack) -> EngineProcess:
    """Start a network function, receiver or reflector. A VM network function (c.program: its
    host/vm_nf.py) first reports QEMU's PID, recorded for `vswbench clean`."""
    run = testbed.run
    proc = EngineProcess(c.args, engine=c.program or None, registry=run.registry,
                         state=run.state, label=f"{c.role.value} {c.label}", env=dict(c.env),
                         stop_timeout=c.stop_timeout or 5.0)
    stack.enter_context(proc)
    if c.program:
        vm = proc.wait_for_record("vm", c.ready_timeout or READY_TIMEOUT).data
        if run.state is not None and isinstance(vm.get("qemu_pid"), int):
            run.state.add_process(int(vm["qemu_pid"]), [str(a) for a in vm.get("argv") or []])
    return proc


def ready_timeout(c: EngineCommand) -> float:
    return c.ready_timeout or READY_TIMEOUT


def vm_figures(outcome_results: dict[str, EngineResult]) -> dict[str, Any]:
    """The VM network functions' own view: accelerator, mechanism, label, and per VM the guest
    engine's frames in and out and the guest kernel's port counters."""
    out: dict[str, Any] = {}
    for label, res in outcome_results.items():
        vms = res.of_type("vm")
        if not vms:
            continue
        raw = res.final.raw
        out[label] = {"accel": vms[0].data.get("accel"), "mechanism": vms[0].data.get("mechanism"),
                      "label": vms[0].data.get("label"),
                      "engine_rx": int(raw.get("rx_frames", 0) or 0) + int(raw.get("foreign", 0)
                                                                            or 0),
                      "engine_forwarded": int(raw.get("forwarded", 0) or 0),
                      "guest_ports": raw.get("guest")}
    return out


def _settle(testbed: Testbed, timeout: float = 3.0) -> None:
    """Wait until no host port counter changes for SETTLE_QUIET_S (nothing left in flight). The
    counters only grow: two equal readings that far apart prove that nothing moved between them,
    so a quiet path costs one window and two readings. On a steady trickle (e.g. a backend's own
    frames) it gives up after `timeout`: measure what is there."""
    deadline = time.monotonic() + timeout
    last = testbed.activity()
    while time.monotonic() + SETTLE_QUIET_S <= deadline:
        time.sleep(SETTLE_QUIET_S)
        now = testbed.activity()
        if now == last:
            return
        last = now


def _phase(testbed: Testbed, traffic: TrialParams, *, measure: bool,
           stream_base: int = 1) -> PhaseOutcome:
    switch = testbed.switch
    assert switch is not None
    cmds = {c.label: c for c in testbed.engine_commands(traffic, stream_base=stream_base)}
    results: dict[str, EngineResult] = {}
    with ExitStack() as stack:
        servers: dict[str, EngineProcess] = {}
        for c in cmds.values():
            if c.long_running:
                proc = start_long_running(c, testbed, stack)
                servers[c.label] = proc
                if testbed.starts_in_order:
                    proc.wait_for_record("start", ready_timeout(c))
        for label, proc in servers.items():
            proc.wait_for_record("start", ready_timeout(cmds[label]))
        k0 = testbed.kernel_counters() if measure else {}
        s0, b0 = switch.sample() if measure else ([], None)
        daemons = _daemon_pids(switch)
        p0 = {**{label: process_cpu_s(p.pid) for label, p in servers.items()},
              **{label: process_cpu_s(pid) for label, pid in daemons.items()}}
        c0, i0 = read_proc_stat(), read_irq_counts()
        drivers = _start_drivers([c for c in cmds.values() if not c.long_running], testbed, stack)
        for proc in drivers:
            results[proc.label] = _wait_watching(proc, servers,
                                                 timeout=traffic.duration + 30).check()
        starts = [t for t in (p.traffic_start_ns() for p in drivers) if t is not None]
        _settle(testbed)
        c1, i1 = read_proc_stat(), read_irq_counts()
        p1 = {**{label: process_cpu_s(p.pid) for label, p in servers.items()},
              **{label: process_cpu_s(pid) for label, pid in daemons.items()}}
        for proc in servers.values():   # all at once: their exits (sockets released) overlap
            proc.send_signal(signal.SIGTERM)
        for label, proc in servers.items():
            results[label] = proc.stop().check()
    process_cpu = {label: (None if p0.get(label) is None or p1.get(label) is None
                           else round(p1[label] - p0[label], 4)) for label in p0}  # type: ignore
    for label, res in results.items():
        if not cmds[label].long_running:
            process_cpu[label] = res.final.cpu_s
    s1, b1 = switch.sample() if measure else ([], None)
    return PhaseOutcome(results, cmds, k0, testbed.kernel_counters() if measure else {},
                        s0, s1, core_usage(c0, c1), process_cpu, b0, b1, i0, i1,
                        min(starts, default=None))


def _start_drivers(commands: list[EngineCommand], testbed: Testbed,
                   stack: ExitStack) -> list[EngineProcess]:
    """The phase's drivers, running. Through a switch that enables its ports late, each opens
    its ports and its traffic waits (--go-on-stdin) for wait_ports_polled."""
    switch, run = testbed.switch, testbed.run
    gated = switch is not None and switch.enables_ports_late
    drivers = [stack.enter_context(EngineProcess([*c.args, "--go-on-stdin"] if gated else c.args,
                                                 registry=run.registry, state=run.state,
                                                 label=c.label, env=dict(c.env),
                                                 interactive=gated))
               for c in commands]
    if gated:
        for proc, c in zip(drivers, commands):
            proc.wait_for_record("start", ready_timeout(c))
        wait_ports_polled(testbed)
        for proc in drivers:
            proc.go()
    return drivers


def wait_ports_polled(testbed: Testbed) -> None:
    """Through a switch that polls a port only some time after its peer connected: until it
    polls them all (at most PORTS_POLLED_TIMEOUT: a port still not polled then shows in the
    trial's counters). At once through the others."""
    switch = testbed.switch
    if switch is not None and switch.enables_ports_late:
        with suppress(TimeoutWaiting):
            wait_until(switch.ports_polled, timeout=PORTS_POLLED_TIMEOUT,
                       what="the switch to poll its ports", interval=0.01)


def _wait_watching(driver: EngineProcess, servers: dict[str, EngineProcess],
                   timeout: float) -> EngineResult:
    """The driver's result once it ends by itself (stopped after `timeout`, as wait() does). A
    network function, receiver or reflector that fails meanwhile (its engine or VM killed) fails
    the phase at once with its own error, not after the driver's duration: the phase's stack
    then stops the drivers."""
    deadline = time.monotonic() + timeout
    while driver.running and time.monotonic() < deadline:
        for proc in servers.values():
            if not proc.running and proc.result().returncode != 0:
                proc.stop().check()
        driver.wait_until_ended(min(POLL_S, max(0.0, deadline - time.monotonic())))
    return driver.wait(timeout=max(0.0, deadline - time.monotonic()))


def _daemon_pids(switch: Any) -> dict[str, int]:
    """Processes and threads of the switch whose CPU time each trial reports: its daemons
    ("daemon <name>") and kernel threads doing chain elements' work (cpu_threads(): "nf1", ...;
    never recorded for `vswbench clean`)."""
    pids: dict[str, int] = {}
    getter = getattr(switch, "daemon_pids", None)
    found = getter() if callable(getter) else {}
    if isinstance(found, dict):
        pids.update({f"daemon {k}": int(v) for k, v in found.items()})
    else:
        pids.update({f"daemon {pid}": int(pid) for pid in found})
    threads = getattr(switch, "cpu_threads", None)
    if callable(threads):
        pids.update({str(k): int(v) for k, v in threads().items()})
    return pids


# -- the trial ---------------------------------------------------------------------------------
def counter_checks(outcome: PhaseOutcome) -> list[CounterCheck]:
    """What the kernel counted on each host port against what the engines say they sent and
    received (frames the engine received but did not count as its own: stale/foreign/malformed)."""
    checks: list[CounterCheck] = []
    delta = {k: outcome.kernel_after[k] - outcome.kernel_before[k] for k in outcome.kernel_after}
    if not delta:
        return checks  # DPDK ports: no kernel counters to check against
    for label, cmd in outcome.commands.items():
        final = outcome.results[label].final
        raw = final.raw
        rx_seen = final.rx_frames + final.stale + final.foreign + final.malformed
        ports = cmd.ports
        if cmd.role in (Role.TESTER, Role.SENDER, Role.CLIENT):
            checks.append(CounterCheck(ports[0], "tx_packets", delta[ports[0]].tx_packets,
                                       final.tx_frames))
            if cmd.role != Role.SENDER:
                rx_port = ports[-1]
                checks.append(CounterCheck(rx_port, "rx_packets", delta[rx_port].rx_packets,
                                           rx_seen))
        elif cmd.role == Role.RECEIVER:
            checks.append(CounterCheck(ports[0], "rx_packets", delta[ports[0]].rx_packets, rx_seen))
        else:  # NF, SERVER: what they forwarded left through their ports
            forwarded = int(raw.get("forwarded", 0))
            checks.append(CounterCheck("+".join(ports), "tx_packets",
                                       sum(delta[p].tx_packets for p in ports), forwarded))
    return checks


def _drops(outcome: PhaseOutcome) -> dict[str, int]:
    drops: dict[str, int] = {"generator_tx_errors": 0, "receiver_rx_dropped": 0,
                             "nf_fwd_dropped": 0, "switch_ports": 0, "host_ports_kernel": 0}
    for label, res in outcome.results.items():
        raw = res.final.raw
        stats = raw.get("port_stats") or []
        role = outcome.commands[label].role
        if role in (Role.TESTER, Role.SENDER, Role.CLIENT):
            drops["generator_tx_errors"] += sum(int(s.get("tx_errors", 0)) for s in stats)
        drops["receiver_rx_dropped"] += sum(int(s.get("rx_dropped", 0)) for s in stats)
        drops["nf_fwd_dropped"] += int(raw.get("fwd_dropped", 0) or 0)
    before = {c.port: c for c in outcome.switch_before}
    for c in outcome.switch_after:
        b = before.get(c.port, PortCounters(c.port))
        drops["switch_ports"] += (c.rx_dropped - b.rx_dropped) + (c.tx_dropped - b.tx_dropped)
    for k, after in outcome.kernel_after.items():
        d = after - outcome.kernel_before[k]
        drops["host_ports_kernel"] += d.rx_dropped + d.tx_dropped
    return drops


def run_trial(testbed: Testbed, params: TrialParams, profile: bool = False,
              monitor: StallMonitor | None = None) -> TrialResult:
    """One trial with fresh engine processes: warm-up (its result dropped), then the measured
    phase (profiled by perf with `profile`; its host stalls recorded from `monitor`)."""

    params.validate()
    switch = testbed.switch
    if switch is None:
        raise VswbenchError("run_trial needs a built testbed (use it as a context manager)")
    if params.warmup > 0:   # its frames have arrived: the phase settled before it stopped
        _phase(testbed, params.at(params.rate_pps, params.warmup), measure=False,
               stream_base=WARMUP_STREAM_BASE)
    with profiled(testbed, profile) as attach:
        t0 = now_ns()
        outcome = _phase(testbed, params, measure=True)
        t1 = now_ns()
        result = build_result(testbed, params, outcome)
        attach(result)
    if monitor is not None:
        # The stalls' window opens where the traffic began, not where the engines were started:
        # the classifier counts a stall from the window's start up to the trial's duration (+ a
        # slack), and fresh engines take 0.2 s or more to start (a 0.25 s trial's stalls were
        # then judged from before its traffic to halfway through it, and the loss of a trial
        # whose switch thread waited 0.5 ms for kdamond went unexplained).
        result.stalls = monitor.report(max(t0, outcome.traffic_start_ns or t0), t1)
        result.stalls.add_steal(result.cpu)
    return result


def build_result(testbed: Testbed, spec: TrialParams, outcome: PhaseOutcome) -> TrialResult:
    """The TrialResult of one measured phase (fresh processes or one control-mode trial)."""
    switch = testbed.switch
    assert switch is not None
    drivers = [lab for lab, c in outcome.commands.items() if not c.long_running]
    receivers = [lab for lab, c in outcome.commands.items()
                 if c.role in (Role.TESTER, Role.CLIENT, Role.RECEIVER)]
    finals = {lab: res.final for lab, res in outcome.results.items()}
    tx = sum(finals[lab].tx_frames for lab in drivers)
    rx_unique = sum(int(finals[lab].raw.get("rx_unique", finals[lab].rx_frames))
                    for lab in receivers)
    rx = sum(finals[lab].rx_frames for lab in receivers)
    lost = max(0, tx - rx_unique)
    duration = max((float(finals[lab].raw.get("duration_s") or 0) for lab in drivers),
                   default=spec.duration) or spec.duration
    tsc_hz = next((float(r.start.data["tsc_hz"]) for r in outcome.results.values()
                   if r.start is not None and r.start.data.get("tsc_hz")), 0.0)
    tsc_hz = tsc_hz or float(finals[drivers[0]].raw.get("tsc_hz") or 0.0)
    usage, tester_usage = outcome.cpu_usage, None
    if testbed.scenario.apart:   # tester-dut: the DUT's CPU figures hold only its cores
        dut = dut_cpus(testbed.placement)
        usage = {c: u for c, u in outcome.cpu_usage.items() if c in dut}
        tester_usage = {c: u for c, u in outcome.cpu_usage.items()
                        if c in testbed.placement.tester_cpus}
    cycles = busy_cycles(usage, tsc_hz)
    kinds = {finals[lab].latency_kind for lab in receivers} - {None}
    rx_finals = [finals[lab] for lab in receivers]
    buckets = sorted((b for f in rx_finals for b in f.hist), key=lambda b: b.low_ns)
    delta = {k: outcome.kernel_after[k] - outcome.kernel_before[k] for k in outcome.kernel_after}
    warnings = [w for f in finals.values() for w in f.warnings] + testbed.placement_warnings()
    vms = vm_figures(outcome.results)
    warnings += sorted({str(v["label"]) for v in vms.values() if v.get("label")})
    try:
        dump = switch.config_dump()
    except VswbenchError as exc:
        dump = f"(config dump failed: {exc})"
    jitter_us, ipdv_us = merge_delay_variation(rx_finals)
    return TrialResult(
        switch=testbed.switch_cls.name, scenario=testbed.scenario.name,
        frame_size=spec.frame_size, offered_pps=spec.rate_pps,
        tx_pps=round(tx / duration, 1), achieved_pps=round(rx_unique / duration, 1),
        tx_frames=tx, rx_frames=rx, lost=lost, loss_ratio=lost / tx if tx else 0.0,
        duration_s=round(duration, 4), latency_kind=next(iter(kinds), None),
        latency_us=merge_latency(rx_finals),
        histogram=[[b.low_ns, b.high_ns, b.count] for b in buckets],
        cpu=_cores(usage),
        tester_cpu=None if tester_usage is None else _cores(tester_usage),
        cycles_per_packet=cycles_per_packet(cycles, rx_unique),
        cycles_per_packet_by_process={
            lab: (None if s is None or not rx_unique else round(s * tsc_hz / rx_unique, 1))
            for lab, s in outcome.process_cpu.items()},
        process_cpu_s=outcome.process_cpu, tsc_hz=tsc_hz, drops=_drops(outcome),
        kernel_counters={k: asdict(v) for k, v in delta.items()},
        counter_checks=counter_checks(outcome),
        switch_ports=[asdict(c) for c in outcome.switch_after],
        forwarding_mode=switch.forwarding_mode(), placement=asdict(testbed.placement),
        switch_versions=testbed.switch_cls.versions(), config_dump=dump, spec=asdict(spec),
        engines={lab: {"args": list(outcome.commands[lab].args), "final": f.raw}
                 for lab, f in finals.items()},
        warnings=warnings, vm=vms, churn=_churn([finals[lab] for lab in drivers]),
        mtu=testbed.mtu, mtu_links=dict(testbed.mtu_links),
        switch_useful_cycles_per_packet=(outcome.busy_after.per_packet_since(outcome.busy_before)
                                         if outcome.busy_after else None),
        nf_kind=testbed.nf if nf_hosts(testbed.scenario) else None,
        nf_counters=element_counters(testbed.scenario, testbed.nf, delta,
                                     {k: v.ifname for k, v in testbed.ports.items()},
                                     outcome.switch_before, outcome.switch_after),
        irq_rates=irq_rates(outcome.irq_before, outcome.irq_after),
        tx_skipped=sum(finals[lab].tx_skipped for lab in drivers),
        tester_gaps=sum(finals[lab].tx_gaps for lab in drivers),
        tester_gap_max_us=max((g for lab in drivers if (g := finals[lab].tx_gap_max_us)),
                              default=None),
        jitter_us=jitter_us, ipdv_us=ipdv_us)
