"""Trends over a history (results/history.py): every series grouped by jumpavg, as FD.io CSIT's
trending does, and the newest group's change against the previous one.

A series is one setup (history.SetupKey: switch, scenario, frame size, variant, preset) on one
machine (history.machine_of), its runs oldest first; `any_machine` joins the machines' runs of a
setup into one series (a trend across machines measures the machines too: never by default).
jumpavg (results/changepoints.py) splits the series where its values jump by more than their
own spread explains. Then, per series:

- one group: "within noise", no change;
- the newest group's mean above the previous group's: "progression", below: "regression", by
  the ratio of the two means; the versions that changed between the previous group's last run and
  the newest group's first run are named (kernel, vswbench, the switch's own versions); none
  changed: the machine or something not recorded changed;
- fewer than MIN_RUNS runs: "too few runs" (nothing is judged; its summary says how many
  runs it has of the MIN_RUNS it needs, and their values).

`fail_on` (a fraction, e.g. 0.05) makes a regression of more than that a failure, for CI's exit
status; `recent` limits failures to series whose newest group began within the last N runs (a
regression accepted weeks ago need not fail every nightly).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from vswbench.errors import UsageError
from vswbench.results.changepoints import Group
from vswbench.results.changepoints import groups
from vswbench.results.history import HistoryResult
from vswbench.results.history import HistoryRun
from vswbench.results.history import SetupKey

MIN_RUNS = 3
METRICS = ("ndr", "pdr")


@dataclass(frozen=True)
class SeriesPoint:
    run: HistoryRun
    value: float
    switch_version: str
    excised_trials: int
    generator_bound: bool


@dataclass(frozen=True)
class VersionChange:
    what: str                     # "kernel", "vswbench", "switch"
    before: str
    after: str

    def describe(self) -> str:
        return f"{self.what} {self.before or '?'} -> {self.after or '?'}"


@dataclass(frozen=True)
class Trend:
    setup: SetupKey
    machine: str | None           # None: --any-machine
    machine_name: str
    metric: str
    points: tuple[SeriesPoint, ...]
    groups: tuple[Group, ...]
    verdict: str                  # "progression", "regression", "within noise", "too few runs"
    ratio: float | None           # newest group's mean / previous group's
    changed: tuple[VersionChange, ...]
    failed: bool = False

    @property
    def label(self) -> str:
        return self.setup.label

    def values(self) -> str:
        """The series' values, oldest first: '201,234 pps (run 1, 2026-10-01)'; its generator-
        bound ones marked >=."""
        return ", ".join(f"{'>=' if p.generator_bound else ''}{p.value:,.0f} pps "
                         f"(run {p.run.id}, {p.run.started[:10]})" for p in self.points)

    @property
    def change_at(self) -> int | None:
        """Index of the newest group's first run when it is a change."""
        if self.verdict in ("progression", "regression"):
            return self.groups[-1].start
        return None

    def describe(self) -> str:
        where = "" if self.machine is None else f" on {self.machine_name}"
        return f"{self.label}{where}: {self.summary()}"

    def summary(self) -> str:
        """The verdict in words, without the setup: 'regression -20.1 % (...) from ...'."""
        if self.verdict == "too few runs":
            return (f"not judged: {len(self.points)} of the {MIN_RUNS} runs a trend needs; "
                    f"{self.values()}")
        if self.ratio is None or self.change_at is None:
            return (f"within noise over {len(self.points)} runs (one group, mean "
                    f"{self.groups[-1].mean:,.0f} pps)")
        pct = (self.ratio - 1) * 100
        first = self.points[self.change_at].run
        versions = ("; changed: " + ", ".join(c.describe() for c in self.changed)
                    if self.changed else "; no recorded version changed (the machine, or "
                    "something vswbench does not record)")
        return (f"{self.verdict} {pct:+.1f} % "
                f"({self.groups[-2].mean:,.0f} -> {self.groups[-1].mean:,.0f} pps) from history "
                f"run {first.id} ({first.started}){versions}")


@dataclass(frozen=True)
class TrendReport:
    trends: tuple[Trend, ...]
    metric: str
    fail_on: float | None

    @property
    def failures(self) -> list[Trend]:
        return [t for t in self.trends if t.failed]


def _value(r: HistoryResult, metric: str) -> float | None:
    return r.ndr_pps if metric == "ndr" else r.pdr_pps


def changed_versions(before: SeriesPoint, after: SeriesPoint) -> tuple[VersionChange, ...]:
    pairs = (("kernel", before.run.kernel, after.run.kernel),
             ("vswbench", before.run.vswbench, after.run.vswbench),
             ("switch", before.switch_version, after.switch_version))
    return tuple(VersionChange(w, a, b) for w, a, b in pairs if a != b)


def judge(setup: SetupKey, machine: str | None, name: str, metric: str,
          points: Sequence[SeriesPoint], fail_on: float | None = None,
          recent: int | None = None) -> Trend:
    found = tuple(groups([p.value for p in points]))
    if len(points) < MIN_RUNS:
        return Trend(setup, machine, name, metric, tuple(points), found, "too few runs", None, ())
    if len(found) < 2:
        return Trend(setup, machine, name, metric, tuple(points), found, "within noise", None, ())
    prev, last = found[-2], found[-1]
    ratio = last.mean / prev.mean if prev.mean else None
    verdict = "regression" if last.mean < prev.mean else "progression"
    changed = changed_versions(points[last.start - 1], points[last.start])
    failed = (verdict == "regression" and fail_on is not None and ratio is not None
              and 1 - ratio > fail_on
              and (recent is None or len(points) - last.start <= recent))
    return Trend(setup, machine, name, metric, tuple(points), found, verdict, ratio, changed,
                 failed)


def trends(results: Sequence[HistoryResult], *, metric: str = "ndr",
           any_machine: bool = False, fail_on: float | None = None,
           recent: int | None = None) -> TrendReport:
    """Every series of the history's results (history.History.results, oldest first), judged."""
    if metric not in METRICS:
        raise UsageError(f"--metric {metric!r}: one of {', '.join(METRICS)}")
    if fail_on is not None and not 0 <= fail_on < 1:
        raise UsageError("--fail-on-regression must be a percentage in [0, 100), e.g. 5")
    if recent is not None and recent < 1:
        raise UsageError("--recent must be 1 or more runs")
    series: dict[tuple[SetupKey, str | None], list[SeriesPoint]] = defaultdict(list)
    names: dict[str | None, str] = {None: "any machine"}
    for r in results:
        value = _value(r, metric)
        if value is None:
            continue
        machine = None if any_machine else r.run.machine
        names.setdefault(machine, r.run.machine_name)
        series[(r.setup, machine)].append(SeriesPoint(r.run, value, r.switch_version,
                                                      r.excised_trials, r.generator_bound))
    out = [judge(setup, machine, names[machine], metric, points, fail_on, recent)
           for (setup, machine), points in sorted(series.items(),
                                                  key=lambda kv: (kv[0][0], kv[0][1] or ""))]
    return TrendReport(tuple(out), metric, fail_on)
