"""Host stalls: the engine's stall monitor (`vswbench-engine stallmon`, engine/README.md) seen
from Python, and what one trial saw of it.

A stall is an interval in which a CPU of the path did not run the path's work, measured without
looking at the switch's loss:
  vcpu  the CPU's own timer (a perf cpu-clock event every 500 us) fired late while the CPU was
        busy: the CPU itself was not running (the hypervisor stopped the vCPU, or interrupts off)
        from its last sign of running (that timer, a context switch, a NAPI poll) until then;
  runq  a watched thread (the switch's NAPI threads, its daemons, the engines) was runnable but
        another task held its CPU;
  steal the hypervisor's own account of the vCPU's stolen time (the run queue's steal clock)
        grew by at least the threshold between two readings: it was kept from running that long,
        whether or not its timer fell due meanwhile;
  napi  the CPU's NAPI polling stopped with frames waiting (a poll used its whole budget, and the
        next one ended, with no context switch between, later than its frames take at the CPU's
        usual pace): it ran interrupts or other softirqs meanwhile, or was stopped.

`StallMonitor` runs the monitor for a whole session; `StallMonitor.report(t0, t1, cpus)` is what
one trial saw: the stalls that overlap its window on each CPU of its path, as a `TrialStalls`.
`TrialStalls.explaining(rate, ring)` finds a stall long enough to explain a loss: while a CPU of
the path stops for `len` seconds, `len x rate` frames arrive at a queue that holds `ring`.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from vswbench.engine.process import EngineError
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import EngineRecord
from vswbench.errors import VswbenchError

STALL_PERIOD_US = 500        # the per-CPU timer's period: 100 us cost the CPU 16 %, 500 us about 1 %
STALL_THRESHOLD_US = 100     # shorter stalls are not reported
EVENTS_KEPT = 40             # the longest stalls of a trial kept in its record
START_TIMEOUT = 10.0
FLUSH_TIMEOUT = 2.0          # the monitor answers a flush request within its next ring read


@dataclass(frozen=True)
class Stall:
    cpu: int
    kind: str                # "vcpu", "runq", "steal" or "napi"
    start_ns: int            # CLOCK_MONOTONIC (Python's time.monotonic_ns)
    len_us: float
    comm: str = ""           # runq: the thread kept waiting; vcpu: the task running at the end
    held_by: str = ""        # runq: the task that held the CPU

    @property
    def end_ns(self) -> int:
        return self.start_ns + int(self.len_us * 1000)


def flushed_upto(record: EngineRecord) -> int:
    """A `flushed` record's upto_ns (0 if it has none: it covers nothing)."""
    try:
        return int(record.data["upto_ns"])
    except (KeyError, TypeError, ValueError):
        return 0


def parse_stall(record: EngineRecord | dict[str, Any]) -> Stall:
    data = record.data if isinstance(record, EngineRecord) else record
    try:
        return Stall(int(data["cpu"]), str(data["kind"]), int(data["start_ns"]),
                     float(data["len_us"]), str(data.get("comm") or ""),
                     str(data.get("held_by") or ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise VswbenchError(f"bad stall record from the stall monitor: {data!r}") from exc


@dataclass
class CpuStalls:
    """One CPU's stalls during one trial."""
    stalls: int = 0
    longest_us: float = 0.0
    total_us: float = 0.0
    # the kernel's steal time of this CPU over the trial (/proc/stat, in 10 ms steps): a
    # cross-check of the monitor's `vcpu` stalls that the hypervisor accounts (None: unknown)
    steal_ms: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> CpuStalls:
        """A stored CPU's stalls (to_json's, or a search trial's brief); a field not a number
        reads as 0 (steal_ms: None)."""
        raw = data if isinstance(data, dict) else {}
        steal = raw.get("steal_ms")
        return cls(_number0(raw.get("stalls")), _number0(raw.get("longest_us")),
                   _number0(raw.get("total_us")),
                   steal if isinstance(steal, (int, float)) and not isinstance(steal, bool)
                   else None)

    def add(self, s: Stall) -> None:
        self.stalls += 1
        self.longest_us = max(self.longest_us, s.len_us)
        self.total_us = round(self.total_us + s.len_us, 3)


@dataclass
class TrialStalls:
    """What the stall monitor saw during one trial, per CPU of the path. `monitored` is False when
    no monitor ran (then nothing is known, which is not the same as no stall)."""
    monitored: bool
    window_s: float = 0.0
    cpus: dict[str, CpuStalls] = field(default_factory=dict)
    # the longest stalls: [cpu, kind, offset from the trial's start (ms), length (us), comm, held_by]
    events: list[list[Any]] = field(default_factory=list)
    reason: str = ""          # why not monitored

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialStalls:
        """The stalls of a stored trial: to_json's, or a search trial's `brief` (stored only
        when monitored, without the events)."""
        events, cpus = data.get("events"), data.get("cpus")
        return cls(bool(data.get("monitored", True)), _number0(data.get("window_s")),
                   {str(c): CpuStalls.from_json(v)
                    for c, v in (cpus if isinstance(cpus, dict) else {}).items()},
                   events if isinstance(events, list) else [], str(data.get("reason") or ""))

    def brief(self) -> dict[str, Any] | None:
        """A search trial's stalls as stored: totals, the window, per CPU of the path; None
        when not monitored."""
        if not self.monitored:
            return None
        return {"count": self.count, "longest_us": self.longest_us, "window_s": self.window_s,
                "cpus": {cpu: {"stalls": c.stalls, "longest_us": c.longest_us,
                               "total_us": c.total_us, "steal_ms": c.steal_ms}
                         for cpu, c in self.cpus.items()}}

    def add_steal(self, cpu_usage: dict[str, dict[str, float]]) -> None:
        """Steal time per CPU from the trial's /proc/stat fractions (TrialResult.cpu)."""
        for cpu, c in self.cpus.items():
            u = cpu_usage.get(cpu)
            if not u or "steal" not in u:
                continue
            busy = u.get("busy") or 0.0
            interval = u.get("busy_s", 0.0) / busy if busy > 0 else self.window_s
            c.steal_ms = round(u["steal"] * interval * 1000, 1)

    @property
    def longest_us(self) -> float:
        return max((c.longest_us for c in self.cpus.values()), default=0.0)

    @property
    def count(self) -> int:
        return sum(c.stalls for c in self.cpus.values())

    def frames_over_ring(self, rate_pps: float, ring_frames: int,
                         until_ms: float = float("inf"), skip_cpus: Sequence[int] = ()) -> float:
        """Frames the stalls that began before `until_ms` (from the window's start: the end of
        the traffic) can cost: each stretch of stalled time (overlapping stalls, on any CPU of
        the path but `skip_cpus`, merged: a stopped CPU and the thread it kept waiting are one
        event) x rate, beyond the ring."""
        return sum(max(0.0, (end - start) * 1e-3 * rate_pps - ring_frames)
                   for start, end in self._merged(until_ms, skip_cpus))

    def stalled_ms(self, until_ms: float = float("inf"), skip_cpus: Sequence[int] = ()) -> float:
        """How long the path (its CPUs but `skip_cpus`) was stalled before `until_ms`, overlapping
        stalls counted once."""
        return sum(end - start for start, end in self._merged(until_ms, skip_cpus))

    def _merged(self, until_ms: float, skip_cpus: Sequence[int]) -> list[list[float]]:
        spans = sorted((e[2], e[2] + e[3] / 1000) for e in self.events
                       if e[2] < until_ms and e[0] not in skip_cpus)
        merged: list[list[float]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return merged

    def explaining(self, rate_pps: float, ring_frames: int, until_ms: float = float("inf"),
                   skip_cpus: Sequence[int] = ()) -> list[Any] | None:
        """The longest stall, begun before `until_ms` on a CPU not in `skip_cpus`, whose length x
        rate exceeds the ring."""
        if rate_pps <= 0:
            return None
        for event in self.events:  # longest first
            if (event[2] < until_ms and event[0] not in skip_cpus
                    and event[3] * 1e-6 * rate_pps > ring_frames):
                return event
        return None


def _number0(value: Any) -> Any:
    """A stored number as it is (int or float), else 0."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def summarize(stalls: Iterable[Stall], t0_ns: int, t1_ns: int, cpus: Sequence[int]) -> TrialStalls:
    """The stalls that overlap [t0, t1] on the given CPUs."""
    report = TrialStalls(True, round((t1_ns - t0_ns) / 1e9, 4),
                         {str(c): CpuStalls() for c in sorted(set(cpus))})
    hits = [s for s in stalls if s.start_ns < t1_ns and s.end_ns > t0_ns and str(s.cpu) in report.cpus]
    for s in hits:
        report.cpus[str(s.cpu)].add(s)
    hits.sort(key=lambda s: -s.len_us)
    report.events = [[s.cpu, s.kind, round((s.start_ns - t0_ns) / 1e6, 3), round(s.len_us, 1),
                      s.comm, s.held_by] for s in hits[:EVENTS_KEPT]]
    return report


def unmonitored(reason: str) -> TrialStalls:
    return TrialStalls(False, reason=reason)


class StallMonitor:
    """`vswbench-engine stallmon` over the path's CPUs for a session (use as a context manager).
    If the monitor cannot run here (not root, engine built without BPF), `reason` says why and
    every report is `unmonitored`."""

    def __init__(self, cpus: Sequence[int], *, watch_pids: Sequence[int] = (),
                 watch_comms: Sequence[str] = (), registry: Any = None, state: Any = None,
                 period_us: int = STALL_PERIOD_US, threshold_us: int = STALL_THRESHOLD_US) -> None:
        self.cpus = sorted(set(cpus))
        args = ["stallmon", "--cpus", ",".join(map(str, self.cpus)), "--period-us", str(period_us),
                "--threshold-us", str(threshold_us)]
        for pid in sorted(set(watch_pids))[:256]:
            args += ["--watch-pid", str(pid)]
        for comm in list(dict.fromkeys(watch_comms))[:4]:
            args += ["--watch-comm", comm[:15]]
        self.args = args
        self._registry, self._state = registry, state
        self.proc: EngineProcess | None = None
        self.reason = ""
        self.final: dict[str, Any] | None = None
        self._stalls: list[Stall] = []       # parsed so far (each trial reads only the new ones)
        self._seen = 0                       # records of the monitor already looked at

    def __enter__(self) -> StallMonitor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> StallMonitor:
        if not self.cpus:
            self.reason = "no CPU of the path known"
            return self
        proc = EngineProcess(self.args, registry=self._registry, state=self._state,
                             label="stallmon")
        try:
            proc.start()
            proc.wait_for_record("start", START_TIMEOUT)
        except EngineError as exc:
            if proc.proc is not None:
                proc.stop()
            self.reason = f"stall monitor not running: {str(exc).splitlines()[0]}"
            return self
        self.proc = proc
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.running

    def stalls(self) -> list[Stall]:
        """Every stall the monitor has printed so far (records parsed once, as they come)."""
        if self.proc is None:
            return []
        records = self.proc.result().records
        self._stalls += [parse_stall(r) for r in records[self._seen:] if r.type == "stall"]
        self._seen = len(records)
        return list(self._stalls)

    def report(self, t0_ns: int, t1_ns: int, cpus: Sequence[int] | None = None) -> TrialStalls:
        if self.proc is None:
            return unmonitored(self.reason or "stall monitor not started")
        if not self.proc.running:
            return unmonitored("the stall monitor ended early: "
                               + self.proc.result().stderr.strip()[:200])
        if not self._flushed(t1_ns):
            return unmonitored(f"the stall monitor did not print its stalls up to the trial's "
                               f"end within {FLUSH_TIMEOUT:g} s")
        return summarize(self.stalls(), t0_ns, t1_ns, self.cpus if cpus is None else cpus)

    def _flushed(self, t1_ns: int) -> bool:
        """Ask the monitor for the stalls it holds (it reads its ring in batches, not per stall,
        so as not to wake on the tester's core: SIGUSR1) and wait until it printed every stall
        that ended before `t1_ns`."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGUSR1)
        try:
            self.proc.wait_for_record("flushed", FLUSH_TIMEOUT,
                                      where=lambda r: flushed_upto(r) >= t1_ns)
        except EngineError:
            return False
        return True

    def stop(self) -> None:
        if self.proc is not None and self.proc.proc is not None and self.final is None:
            result = self.proc.stop()
            finals = result.of_type("final")
            self.final = finals[-1].data if finals else None


def now_ns() -> int:
    """The clock of stall records (CLOCK_MONOTONIC)."""
    return time.monotonic_ns()
