"""Trial sessions: many trials through one built testbed, at loads a search or sweep chooses.

`ControlSession` keeps every engine running between trials: the network functions and reflectors
run for the whole session, the tester is one engine in control mode (trials as JSON lines on its
stdin, one final record each, a new epoch per trial so late frames of an earlier trial are counted
as stale, never as this trial's). Between two trials only the kernel, switch and CPU counters are
sampled: the overhead per trial is measured and reported (`SessionTrial.overhead_s`).

`RestartSession` runs each trial with fresh engine processes (trial.run_trial); it serves the
scenarios whose receivers are separate engines (p2p-pair, pairs:N), at about a second per trial.

A trial's frame count is exact in control mode: the tester sends `round(rate x duration)` frames
paced at `rate`, and stops at duration + RATE_SLACK_S; what it could not send by then is reported
as unsent (the tester reached its ceiling, or the path pushed back).
"""

from __future__ import annotations

import os
import time
from abc import ABC
from abc import abstractmethod
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from vswbench.engine.params import TrialParams
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import EngineResult
from vswbench.engine.records import RecordError
from vswbench.engine.records import parse_final
from vswbench.engine.stalls import StallMonitor
from vswbench.engine.stalls import TrialStalls
from vswbench.engine.stalls import now_ns
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.cpustat import core_usage
from vswbench.host.cpustat import process_cpu_s
from vswbench.host.cpustat import read_proc_stat
from vswbench.host.irqstat import read_irq_counts
from vswbench.jsonvalues import count
from vswbench.jsonvalues import flag
from vswbench.jsonvalues import number
from vswbench.measure.hoststall import classify
from vswbench.measure.hoststall import open_monitor
from vswbench.measure.profiling import profiled
from vswbench.measure.trial import READY_TIMEOUT
from vswbench.measure.trial import PhaseOutcome
from vswbench.measure.trial import TrialResult
from vswbench.measure.trial import _daemon_pids
from vswbench.measure.trial import build_result
from vswbench.measure.trial import ready_timeout
from vswbench.measure.trial import run_trial
from vswbench.measure.trial import start_long_running
from vswbench.measure.trial import wait_ports_polled
from vswbench.measure.trial_result import CounterCheck
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.testbed.build import EngineCommand
from vswbench.testbed.build import Testbed

SESSION_SERVER_SECONDS = 7 * 86400.0   # long-running engines: until the session stops them
# A paced trial may end up to RATE_SLACK_S late: the same time for a 1 s and a 60 s trial. Over
# veth the path pushes back on the sender instead of dropping (its socket holds every frame until
# the receiver frees it), so a switch that stalls for a moment makes the tester late, not lossy;
# lateness beyond this slack is counted as frames not sent (lost). An absolute slack treats short
# and long trials alike, as a tester's buffer would (a relative one would let a 60 s trial absorb
# a 60 ms stall that fails a 1 s trial).
RATE_SLACK_S = 0.005
DEFAULT_DRAIN = 0.05                   # wait for frames in flight after a lossy trial (seconds)
# ... but no longer once none arrived for this long: a lossy trial's drain took the whole 50 ms
# (a fifth of a quarter-second trial) although its frames had arrived or gone within 1-5 ms here.
DEFAULT_DRAIN_QUIET = 0.01
UNSENT_TOLERANCE = 2       # frames short that are pacing granularity (a control session's trial)
# a stored brief says whether the counters agreed, not which did not: a disagreement reads back
# as this one check (SessionTrial.from_json)
UNDETAILED_DISAGREEMENT = CounterCheck("(not stored)", "counters_agree", 0, 1)


@dataclass
class SessionTrial:
    """One trial of a session: its result plus what the search needs to judge it."""
    result: TrialResult
    intended_load: float        # pps asked for (0 = as fast as possible)
    intended_duration: float
    intended_count: int         # frames that should have been sent
    wall_s: float               # wall clock of the whole trial, counters included
    unsent_tolerance: int = UNSENT_TOLERANCE   # frames short that are pacing, not a failure
    rejected: bool = False      # a host-stall trial whose stall-explained loss the search ignored
    excised: bool = False       # ... counted, its loss taken out (policy excise), not repeated
    window_ns: tuple[int, int] = (0, 0)   # CLOCK_MONOTONIC start and end (the stall records' clock)

    @property
    def host_stall(self) -> str | None:
        return getattr(self.result, "host_stall", None)

    @property
    def offered_count(self) -> int:
        return self.result.tx_frames

    @property
    def forwarded_count(self) -> int:
        return self.offered_count - self.result.lost

    @property
    def counted_forwarded_count(self) -> int:
        """What the search counts as forwarded: every offered frame for an excised trial (its
        loss is the stall's, hoststall.py), else what arrived."""
        return self.offered_count if self.excised else self.forwarded_count

    @property
    def unsent_count(self) -> int:
        """Frames the generator could not send (0 when it kept up within the slack); departures
        it skipped in its own gaps (a stall of the tester's CPU) are not counted: they were never
        due to the switch, and the trial says how many (`skipped`)."""
        short = self.intended_count - self.offered_count - self.result.tx_skipped
        return short if short > self.unsent_tolerance else 0

    @property
    def generator_limited(self) -> bool:
        return self.unsent_count > 0

    @property
    def overhead_s(self) -> float:
        return max(0.0, self.wall_s - self.intended_duration)

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {"intended_pps": self.intended_load, "intended_s": self.intended_duration,
                "intended_count": self.intended_count, "tx_frames": r.tx_frames,
                "rx_frames": r.rx_frames, "lost": r.lost, "unsent": self.unsent_count,
                "loss_ratio": r.loss_ratio, "tx_pps": r.tx_pps, "achieved_pps": r.achieved_pps,
                "latency_us": r.latency_us, "jitter_us": getattr(r, "jitter_us", None),
                "ipdv_us": getattr(r, "ipdv_us", None),
                "cycles_per_packet": r.cycles_per_packet,
                "useful_cycles_per_packet": r.switch_useful_cycles_per_packet,
                "counters_agree": r.counters_agree, "overhead_s": self._stored_overhead_s(),
                "wall_s": round(self.wall_s, 4),
                "irq_rates": getattr(r, "irq_rates", {}),
                "host_stall": self.host_stall, "rejected": self.rejected,
                "excised": self.excised, "tx_skipped": r.tx_skipped,
                "tester_gaps": r.tester_gaps, "tester_gap_max_us": r.tester_gap_max_us,
                "stalls": _stall_brief(getattr(r, "stalls", None))}

    def _stored_overhead_s(self) -> float:
        """The overhead as stored: the stored (rounded) wall clock less the intended duration, so
        that a brief read back (from_json) gives the same overhead again."""
        return round(max(0.0, round(self.wall_s, 4) - self.intended_duration), 4)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionTrial:
        """A stored brief (to_json's) read back, leniently as TrialResult.from_json reads it: a
        key missing or not of its type reads as the default. The brief holds the result's
        headline only (the other fields have their defaults); whether the counters agreed, not
        which did not (a disagreement reads as UNDETAILED_DISAGREEMENT); the unsent frames, not
        the tolerance that decided them (the one read back gives the stored count again)."""
        result = TrialResult.from_json(data)
        result.switch_useful_cycles_per_packet = number(data.get("useful_cycles_per_packet"))
        if flag(data.get("counters_agree")) is False:
            result.counter_checks = [UNDETAILED_DISAGREEMENT]
        intended = count(data.get("intended_count")) or 0
        short = intended - result.tx_frames - result.tx_skipped
        return cls(result, number(data.get("intended_pps")) or 0.0,
                   number(data.get("intended_s")) or 0.0, intended,
                   number(data.get("wall_s")) or 0.0,
                   unsent_tolerance_for(short, count(data.get("unsent")) or 0),
                   bool(flag(data.get("rejected"))), bool(flag(data.get("excised"))))


def unsent_tolerance_for(short: int, unsent: int) -> int:
    """A tolerance under which `short` frames short count as `unsent` again: below them when
    they counted, at least them (and the default) when they did not."""
    if unsent > 0:
        return max(0, min(UNSENT_TOLERANCE, short - 1))
    return max(UNSENT_TOLERANCE, short)


def _stall_brief(stalls: TrialStalls | None) -> dict[str, Any] | None:
    """A search trial's stalls as stored (TrialStalls.brief; read back by from_json)."""
    return None if stalls is None else stalls.brief()


class TrialSession(ABC):
    """Context manager over a built testbed: measure(rate, duration) as often as needed."""

    kind: str = "?"

    def __init__(self, testbed: Testbed, params: TrialParams, *, drain: float = DEFAULT_DRAIN,
                 drain_quiet: float = DEFAULT_DRAIN_QUIET, monitor_stalls: bool = True) -> None:
        if testbed.switch is None:
            raise VswbenchError("a trial session needs a built testbed")
        # VSWBENCH_STALL_MONITOR=off: no stall monitor (bench/stall_monitor compares its cost)
        self.monitor_stalls = monitor_stalls and os.environ.get("VSWBENCH_STALL_MONITOR") != "off"
        self.monitor: StallMonitor | None = None
        # host-stall trials the running search may still repeat (search.py; None: no limit)
        self.stall_repeats_left: int | None = None
        self.stall_policy = "repeat"   # search() sets it (hoststall.stall_policy) for its span
        self.testbed = testbed
        self.params = params
        self.drain = drain
        self.drain_quiet = drain_quiet   # 0: always the whole drain (RFC 2544's wait)
        self.trials: list[SessionTrial] = []

    def __enter__(self) -> TrialSession:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(graceful=exc_type is None)

    def close(self, *, graceful: bool = True) -> None:
        self._stop_monitor()

    def _start_monitor(self, pids: list[int]) -> None:
        """The stall monitor over the path's CPUs, watching these processes' threads too."""
        if self.monitor_stalls and self.monitor is None:
            self.monitor = open_monitor(self.testbed, pids)

    def _stop_monitor(self) -> None:
        if self.monitor is not None:
            self.monitor.stop()

    def warm_up(self, rate_pps: float, seconds: float) -> None:
        """Traffic before the measured trials (switch learning, caches); its result is dropped."""
        if seconds > 0 and rate_pps > 0:
            self._run(rate_pps, seconds, None)

    def measure(self, rate_pps: float, duration: float, *, count: int | None = None,
                profile: bool = False) -> SessionTrial:
        """One trial; with `profile` perf samples the testbed's cores while it runs (from just
        before the trial's first counter sample to just after its last)."""
        if rate_pps < 0 or duration < 0 or (count is None and duration <= 0):
            raise UsageError(f"trial at {rate_pps} pps for {duration} s: give a positive "
                             "duration or an exact frame count (rate 0 = as fast as possible)")
        with profiled(self.testbed, profile) as attach:
            t0 = now_ns()
            trial = self._run(rate_pps, duration, count)
            t1 = now_ns()
            attach(trial.result)
        trial.window_ns = (t0, t1)
        if self.monitor is not None:
            if trial.result.stalls is None:   # (a restart session's trial has its own window)
                trial.result.stalls = self.monitor.report(t0, t1)
                trial.result.stalls.add_steal(trial.result.cpu)
            classify(trial.result, self.testbed.switch_cls.ingress_ring_frames)
        if trial.result.profile is not None and self.kind == "restart":
            trial.result.profile["warnings"].append(
                "restart session: the profile also covers the trial's engine start and warm-up")
        self.trials.append(trial)
        return trial

    @abstractmethod
    def _run(self, rate_pps: float, duration: float, count: int | None) -> SessionTrial: ...

    def overhead_summary(self) -> dict[str, float | int | str]:
        overheads = sorted(t.overhead_s for t in self.trials)
        if not overheads:
            return {"session": self.kind, "trials": 0}
        return {"session": self.kind, "trials": len(overheads),
                "mean_s": round(sum(overheads) / len(overheads), 4),
                "median_s": round(overheads[len(overheads) // 2], 4),
                "max_s": round(overheads[-1], 4)}


def control_capable(scenario: Scenario) -> bool:
    """One driver that also receives (p2p, pvp, chain:N, rr): it can run in control mode."""
    drivers = [h for h in scenario.hosts if h.role in (Role.TESTER, Role.SENDER, Role.CLIENT)]
    receivers = [h for h in scenario.hosts if h.role == Role.RECEIVER]
    return len(drivers) == 1 and drivers[0].role != Role.SENDER and not receivers


def open_session(testbed: Testbed, params: TrialParams, *, drain: float = DEFAULT_DRAIN,
                 drain_quiet: float = DEFAULT_DRAIN_QUIET, restart: bool = False,
                 monitor_stalls: bool = True) -> TrialSession:
    if not restart and control_capable(testbed.scenario):
        return ControlSession(testbed, params, drain=drain, drain_quiet=drain_quiet,
                              monitor_stalls=monitor_stalls)
    return RestartSession(testbed, params, drain=drain, drain_quiet=drain_quiet,
                          monitor_stalls=monitor_stalls)


class RestartSession(TrialSession):
    """Fresh engine processes per trial (trial.run_trial)."""

    kind = "restart"

    def __enter__(self) -> RestartSession:
        self._start_monitor([])   # the engines start afresh per trial: their threads unwatched
        return self

    def _run(self, rate_pps: float, duration: float, count: int | None) -> SessionTrial:
        if count is not None or rate_pps <= 0:
            raise UsageError(f"scenario {self.testbed.scenario.name}: exact frame counts "
                             "and maximum-rate trials (back-to-back, calibration) need a "
                             "scenario whose tester also receives (p2p, pvp, chain:N)")
        t0 = time.monotonic()
        result = run_trial(self.testbed, self.params.at(rate_pps, duration), monitor=self.monitor)
        # a duration-bound run ends on time, a few frames either side of rate x duration
        return SessionTrial(result, rate_pps, duration, round(rate_pps * duration),
                            time.monotonic() - t0,
                            max(UNSENT_TOLERANCE, round(rate_pps * RATE_SLACK_S)))


class ControlSession(TrialSession):
    """Engines started once; the tester takes trials in control mode."""

    kind = "control"

    def __init__(self, testbed: Testbed, params: TrialParams, *, drain: float = DEFAULT_DRAIN,
                 drain_quiet: float = DEFAULT_DRAIN_QUIET, monitor_stalls: bool = True) -> None:
        super().__init__(testbed, params, drain=drain, drain_quiet=drain_quiet,
                         monitor_stalls=monitor_stalls)
        if not control_capable(testbed.scenario):
            raise UsageError(f"scenario {testbed.scenario.name}: control mode needs one tester "
                             "that sends and receives")
        self._stack = ExitStack()
        self.servers: dict[str, EngineProcess] = {}
        self.driver: EngineProcess | None = None
        self.driver_cmd: EngineCommand | None = None
        self.commands: dict[str, EngineCommand] = {}

    def __enter__(self) -> ControlSession:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def _start(self) -> None:
        tb, run = self.testbed, self.testbed.run
        # the tester starts at a placeholder load: every trial's command sets its own
        traffic = self.params.at(1000.0, 1.0)
        for c in tb.engine_commands(traffic, server_duration=SESSION_SERVER_SECONDS):
            self.commands[c.label] = c
            if c.long_running:
                proc = start_long_running(c, tb, self._stack)
                self.servers[c.label] = proc
                if tb.starts_in_order:
                    proc.wait_for_record("start", ready_timeout(c))
            else:
                self.driver_cmd = c
        for label, proc in self.servers.items():
            proc.wait_for_record("start", ready_timeout(self.commands[label]))
        assert self.driver_cmd is not None
        args = ("control", *self.driver_cmd.args[1:])
        driver = EngineProcess(args, registry=run.registry, state=run.state,
                               label=f"control {self.driver_cmd.label}", interactive=True,
                               env=dict(self.driver_cmd.env))
        self.driver = self._stack.enter_context(driver)
        self.driver.wait_for_record("ready", READY_TIMEOUT)
        wait_ports_polled(tb)   # ovs-dpdk: 0.5-1 s after the first connection to its ports
        self._start_monitor([self.driver.pid, *(p.pid for p in self.servers.values())])
        self._stack.callback(self._stop_monitor)

    def close(self, *, graceful: bool = True) -> None:
        """Normal end: ask the tester to quit. On an error or Ctrl-C it may be in the middle of a
        trial and would not read its stdin until the trial ends: stop it right away (SIGTERM)."""
        if graceful and self.driver is not None and self.driver.running:
            self.driver.quit()
        self._stack.close()
        self._stop_monitor()

    def _command(self, rate_pps: float, duration: float,
                 count: int | None) -> tuple[dict[str, Any], int, float]:
        if count is None and rate_pps > 0:
            count = max(1, round(rate_pps * duration))
            cap = duration + RATE_SLACK_S
        else:
            cap = duration if duration > 0 else 0.0
        cmd = self.params.at(rate_pps, duration).control_command(
            count=count, cap_s=cap, drain=self.drain, drain_quiet=self.drain_quiet)
        return cmd, count or 0, cap

    def _run(self, rate_pps: float, duration: float, count: int | None) -> SessionTrial:
        assert self.driver is not None and self.driver_cmd is not None
        tb, switch = self.testbed, self.testbed.switch
        assert switch is not None
        t0 = time.monotonic()
        cmd, intended_count, cap = self._command(rate_pps, duration, count)
        k0, (s0, b0) = tb.kernel_counters(), switch.sample()
        daemons = _daemon_pids(switch)
        pids = {**{lab: p.pid for lab, p in self.servers.items()}, **daemons}
        p0 = {lab: process_cpu_s(pid) for lab, pid in pids.items()}
        driver_cpu0 = process_cpu_s(self.driver.pid)
        c0, i0 = read_proc_stat(), read_irq_counts()
        after = self.driver.record_count()
        self.driver.send_command(cmd)
        answer = self.driver.wait_for_answer(after, timeout=(cap or duration) + 30 + self.drain)
        if answer.type == "error":
            raise VswbenchError(f"the control engine refused a trial: {answer.data.get('msg')}")
        try:
            parse_final(answer)
        except RecordError as exc:
            raise VswbenchError(f"bad final record from the control engine: {exc}") from exc
        c1, i1 = read_proc_stat(), read_irq_counts()
        driver_cpu1 = process_cpu_s(self.driver.pid)
        p1 = {lab: process_cpu_s(pid) for lab, pid in pids.items()}
        k1, (s1, b1) = tb.kernel_counters(), switch.sample()
        process_cpu = {lab: (None if p0[lab] is None or p1[lab] is None
                             else round(p1[lab] - p0[lab], 4)) for lab in p0}  # type: ignore
        label = self.driver_cmd.label
        process_cpu[label] = (None if driver_cpu0 is None or driver_cpu1 is None
                              else round(driver_cpu1 - driver_cpu0, 4))
        start = self.driver.result().start
        records = [r for r in (start, answer) if r is not None]
        result = EngineResult(list(self.driver.argv), None, records, "")
        outcome = PhaseOutcome({label: result}, {label: self.driver_cmd}, k0, k1, s0, s1,
                               core_usage(c0, c1), process_cpu, b0, b1, i0, i1)
        trial = build_result(tb, self.params.at(rate_pps, duration or cap), outcome)
        return SessionTrial(trial, rate_pps, duration, intended_count, time.monotonic() - t0)
