"""A campaign with a budget (quick), run group by group: each group's testbeds built once, its
points measured on them, then its switches paired in rounds (campaign/rounds_phase.py).

A group is one scenario, frame size, variant and stack. Its testbeds come up together
(measure/rounds.py `Bench`; the switches that poll while idle frozen between their turns); each
switch's points (search, then latency at a fraction of its NDR) run on its own testbed, as the
plain runner runs them; then the rounds take what is left of the group's share of the budget:
the time to the deadline, less the estimated first pass of the groups still to come, split over
the groups left by their number of switches. Socket points (no frame groups) run first, as the
plain runner runs them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from vswbench.campaign.estimate import testbed_key
from vswbench.campaign.execute import availability_problem
from vswbench.campaign.execute import execute_point
from vswbench.campaign.execute import plan_for
from vswbench.campaign.execute import switch_stats
from vswbench.campaign.execute import unsupported_problem
from vswbench.campaign.point import Point
from vswbench.campaign.rounds_phase import ROUND_OVERHEAD_S
from vswbench.campaign.rounds_phase import grouped
from vswbench.campaign.rounds_phase import role_of
from vswbench.campaign.rounds_phase import rounds_point
from vswbench.campaign.rounds_phase import run_rounds
from vswbench.campaign.values import SOCKET_KINDS
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.measure.rounds import SAMPLE_SECONDS
from vswbench.measure.rounds import Bench
from vswbench.measure.rounds import Member
from vswbench.results.paired import MIN_ROUNDS
from vswbench.results.paired import Sample
from vswbench.results.paired import samples_of
from vswbench.results.store import ResultStore
from vswbench.results.store import now
from vswbench.safefile import WriteFailed


class Runner(Protocol):
    """What of campaign/runner.py's CampaignRunner this needs."""
    run_id: Any
    search_seconds: dict[str, list[float]]
    _estimates: dict[str, float]

    @property
    def campaign(self) -> str: ...

    def _record(self, store: ResultStore, run_id: str, p: Point, result: dict[str, Any] | None,
                status: str, error: str | None, started: str | None) -> None: ...

    def _advance(self, prog: Any, p: Point, message: str) -> None: ...

    def _run_points(self, store: ResultStore, run_id: str, todo: list[Point],
                    prog: Any) -> tuple[int, int, int]: ...

    def _say(self, prog: Any, message: str) -> None: ...


@dataclass
class Counts:
    done: int = 0
    skipped: int = 0
    failed: int = 0

    def add(self, status: str) -> None:
        self.done += status == "done"
        self.skipped += status == "skipped"
        self.failed += status == "failed"


def run_grouped(runner: Runner, store: ResultStore, run_id: str, all_points: list[Point],
                todo: list[Point], prog: Any, deadline: float) -> tuple[int, int, int]:
    counts = Counts()
    sockets = [p for p in todo if p.kind in SOCKET_KINDS]
    if sockets:
        d, s, f = runner._run_points(store, run_id, sockets, prog)
        counts.done, counts.skipped, counts.failed = d, s, f
    todo_keys = {p.key for p in todo}
    groups = grouped(p for p in all_points if p.kind not in SOCKET_KINDS)
    rng = random.Random(run_id)
    pace = Pace()
    for i, group in enumerate(groups):
        prog.rounds_left_s = sum(fewest_rounds_s(g) for g in groups[i:])   # the ETA's share
        later = [p for g in groups[i + 1:] for p in g if p.key in todo_keys]
        later_members = sum(len({testbed_key(p) for p in g}) for g in groups[i + 1:])
        members_left = sum(len({testbed_key(p) for p in g}) for g in groups[i:])

        def share(n: int, lp: list[Point] = later, lm: int = later_members,
                  m: int = members_left) -> float:
            return max(0.0, (deadline - time.monotonic()
                             - pace.estimate(lp, lm, runner._estimates)) * n / m)
        _run_group(runner, store, run_id, group, todo_keys, prog, counts, rng,
                   share=share, deadline=deadline, pace=pace)
    prog.rounds_left_s = 0.0
    return counts.done, counts.skipped, counts.failed


@dataclass
class Pace:
    """What this run's groups took so far: a point of each kind, a testbed built and torn down;
    the groups still to come are estimated from it (the estimates of campaign/estimate.py until
    a group has measured it), so each group's rounds get their share of what is really left."""
    point_s: dict[str, list[float]] = field(default_factory=dict)
    testbed_s: list[float] = field(default_factory=list)     # per testbed: build and teardown

    def estimate(self, points: list[Point], members: int, estimates: dict[str, float]) -> float:
        total = 0.0
        for p in points:
            seen = self.point_s.get(p.kind)
            total += statistics.fmean(seen) if seen else estimates.get(p.key, 0.0)
        if self.testbed_s:
            total += members * statistics.fmean(self.testbed_s)
        return total


def fewest_rounds_s(group: list[Point]) -> float:
    """The estimated time of a group's fewest rounds (MIN_ROUNDS, taken whatever the budget):
    the progress bar's estimate counts it, the rounds themselves never read it."""
    members = len({testbed_key(p) for p in group})
    return MIN_ROUNDS * members * (SAMPLE_SECONDS + ROUND_OVERHEAD_S) if members >= 2 else 0.0


def _run_group(runner: Runner, store: ResultStore, run_id: str, group: list[Point],
               todo_keys: set[str], prog: Any, counts: Counts, rng: random.Random,
               share: Callable[[int], float], deadline: float, pace: Pace | None = None
               ) -> None:
    pace = pace or Pace()
    at = _Group(runner, store, run_id, prog, counts, group)
    todo = [p for p in group if p.key in todo_keys]
    runnable = _runnable(at, todo)
    if not runnable:
        return
    stored = {s.key: s for s in store.points(runner.campaign)}
    previous = {s: list(samples_of(stored.get(rounds_point(h, SAMPLE_SECONDS).key)))
                for s, h in runnable.items()}
    if not any(p.switch in runnable for p in todo) and all(previous.values()):
        return                                   # resumed: measured and paired before
    members = [Member(s, plan_for(h), bool((r := role_of(s)) and r.idle_polls))
               for s, h in runnable.items()]
    built = time.monotonic()
    with Bench(members) as bench:
        pace.testbed_s.append((time.monotonic() - built) / max(1, len(members)))
        for switch, why in bench.failed.items():
            at.mark([p for p in todo if p.switch == switch], "failed", f"testbed: {why}", why)
        for p in todo:
            if p.switch in bench.contexts:
                began = time.monotonic()
                status = _measure_point(runner, store, run_id, bench, p, prog)
                pace.point_s.setdefault(p.kind, []).append(time.monotonic() - began)
                counts.add(status)
        if len(bench.contexts) < 2:
            return
        _pair_in_rounds(at, bench, runnable, previous, rng,
                        min(deadline, time.monotonic() + share(len(bench.contexts))))
        torn = time.monotonic()
    pace.testbed_s[-1] += (time.monotonic() - torn) / max(1, len(members))


@dataclass
class _Group:
    """Where a group's points are recorded and counted, and its points."""
    runner: Runner
    store: ResultStore
    run_id: str
    prog: Any
    counts: Counts
    group: list[Point]

    def mark(self, points: list[Point], status: str, reason: str, why: str) -> None:
        """Points not measured (skipped, failed), each recorded with the reason."""
        for p in points:
            self.runner._record(self.store, self.run_id, p, None, status, reason, None)
            self.counts.add(status)
            self.runner._advance(self.prog, p, f"{status} {p.label}: {why}")


def _runnable(at: _Group, todo: list[Point]) -> dict[str, Point]:
    """Each switch of the group that can run here, with its first point; the points of the
    others recorded as skipped, with the reason."""
    heads: dict[str, Point] = {}
    for p in at.group:
        heads.setdefault(p.switch, p)
    runnable: dict[str, Point] = {}
    for switch, head in heads.items():
        problem = availability_problem(switch) or unsupported_problem(head)
        if problem is None:
            runnable[switch] = head
        else:
            at.mark([p for p in todo if p.switch == switch], "skipped", problem, problem)
    return runnable


def _pair_in_rounds(at: _Group, bench: Bench, runnable: dict[str, Point],
                    previous: dict[str, list[Sample]], rng: random.Random,
                    group_deadline: float) -> None:
    """The group's switches paired in rounds until the deadline; every round stored, the last
    one each switch's record."""
    last: dict[str, dict[str, Any]] = {}

    def record(p: Point, result: dict[str, Any]) -> None:
        """Every round into the store (an interrupted run keeps it); the last one is the
        point's record (results.jsonl, the progress line) when the rounds end."""
        at.store.record_point(at.run_id, rounds_point(p, bench.duration), result, "done")
        last[p.switch] = result

    label = group_key_label(at.group)
    outcome = run_rounds(bench, {s: runnable[s] for s in bench.contexts}, previous,
                         record, group_deadline, rng,
                         progress=lambda m: at.runner._say(at.prog, f"{label} {m}"))
    for switch, result in last.items():
        at.runner._record(at.store, at.run_id, rounds_point(runnable[switch], bench.duration),
                          {**result, "outcome": outcome.reason}, "done", None, None)
    at.runner._say(at.prog, f"{label}: {outcome.rounds} rounds, {outcome.reason}")


def group_key_label(group: list[Point]) -> str:
    p = group[0]
    role = role_of(p.switch)
    size = "imix" if p.size == "imix" else f"{p.size} B"
    return f"{p.scenario} {size} {role.stack if role else ''}".strip()


def _measure_point(runner: Runner, store: ResultStore, run_id: str, bench: Bench,
                   p: Point, prog: Any) -> str:
    started = now()
    began = time.monotonic()
    try:
        with bench.use(p.switch) as ctx:
            result = execute_point(ctx, p, store, runner.campaign)
            stats = switch_stats(ctx)
        if p.kind == "search":
            runner.search_seconds.setdefault(p.switch, []).append(time.monotonic() - began)
        out = {**result, "switch_stats": stats} if stats else result
        status, error = "done", None
    except (UsageError, WriteFailed):
        raise
    except VswbenchError as exc:
        out, status, error = None, "failed", str(exc)
    runner._record(store, run_id, p, out, status, error, started)
    runner._advance(prog, p, f"{status} {p.label}" + (f": {error}" if error else ""))
    return status
