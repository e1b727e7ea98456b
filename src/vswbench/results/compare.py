"""`vswbench compare A B [C ...]`: the same campaign points across runs, and whether they changed.

Points are matched by their key (campaign.Point.key: the same parameters give the same key on
every run and machine). For two runs, per point and metric: the ratio B/A and a verdict:

- with repetitions on both sides (`statistics` in the search result): a bootstrap confidence
  interval of the ratio of medians (stats.significant_difference); significant when 1 is outside;
- with single searches (results/noise.py): a change is significant when the ranges of loads over
  which each search's trials were mixed (failed at the low end, passed at the high end) do not
  overlap, the ratio leaves the noise band (default: the searches' preset's, noise.PRESET_NOISE; fast's
  10 %: ten fast searches of the bridge here had a CV of 3.8 %, so two single searches differ
  within 1.96 x sqrt(2) x 3.8 % = 10.5 %; quick's 30 %), and, with
  6 or more points, the point stands out (modified z-score > 3.5) from the common shift of all
  points between the runs: a whole VM measured 12 % faster four minutes later, which is the
  machine, not a switch. The shift is printed;
- when both runs' throughput is generator-bound, the figures are the tester's ceiling (measured
  anew by each machine's calibration), not the switch's: never significant;
- PDR is judged exactly as NDR: its own goal's trial ranges (transition_interval "PDR"), else
  its own goal's bounds, the noise band and the common shift;
- latency percentiles (p50, p99): with repetitions on both sides (the setup's latency points,
  one per repetition) the bootstrap interval as above; single figures by the latency noise band
  (LATENCY_NOISE, 30 %: a p99 of one second of a VM's traffic moves by tens of per cent from run
  to run, so a change is real only beyond that). A figure whose latency trial lost enough frames
  to make the percentile unreliable (results/loss.py: percentiles above 1 - loss ratio) is
  shown, never judged. No common shift: a whole run's latency doubling is what a gate is for;
- cycles per packet carry no measure of their own spread: judged only with repetitions;
- MRR (`mrr`, a campaign with paired rounds: results/paired.py): each round's sample of the switch
  over the group's baseline's (veth, memif) in the same round, so that the host's mood, which
  moves every rate of a run 1.2-2x between runs minutes apart, cancels; the bootstrap interval of
  the ratio of the two runs' medians of those, significant when 1 is outside. This is the gate
  that catches a 10-20 % drop a single search's noise band (30 % for quick) lets through.

Over three or more runs, the series of each metric is split into groups by CSIT's `jumpavg`
(minimum description length, results/changepoints.py); a new group at the end is a regression
or progression.

`--fail-if ndr:-5%` (NDR fell by more than 5 %, significantly), `mrr:-5%`, `pdr:-5%` or `p99:+10%` (p99
latency rose by more than 10 % and beyond its noise) make the command exit 1, so CI can gate on
it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import cast

from vswbench.errors import UsageError
from vswbench.measure.stats import significant_difference
from vswbench.results.changepoints import series_groups
from vswbench.results.noise import OUTLIER_Z
from vswbench.results.noise import SINGLE_SEARCH_NOISE
from vswbench.results.noise import Shift
from vswbench.results.noise import common_shift
from vswbench.results.noise import overlap
from vswbench.results.noise import search_noise
from vswbench.results.noise import transition_interval
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import stored_rounds
from vswbench.results.paired import variant_key
from vswbench.results.points import Latency
from vswbench.results.points import Setup
from vswbench.results.points import load
from vswbench.results.setups import SetupSearches
from vswbench.results.setups import search_setups
from vswbench.results.sockets import socket_of

METRICS = {  # name -> (compared_row column, higher is better)
    "ndr": ("ndr_pps", True), "pdr": ("pdr_pps", True),
    # paired rounds (results/paired.py): the median MRR, judged on each round's sample over
    # the group's baseline's in the same round (the host's drift cancels within a run)
    "mrr": ("mrr_pps", True),
    "p50": ("latency_p50_us", False), "p99": ("latency_p99_us", False),
    "cycles": ("cycles_per_packet", False),
    # the socket kinds (results/sockets.py): one measurement each, ratios shown, not judged
    "goodput": ("goodput_gbps", True), "tps": ("transactions_per_s", True),
    "cps": ("connections_per_s", True),
}
DEFAULT_NOISE = SINGLE_SEARCH_NOISE
LATENCY_NOISE = 0.30        # single latency percentiles: the band a change must leave
LATENCY_METRICS = {"p50": "p50", "p99": "p99"}


@dataclass(frozen=True)
class Threshold:
    metric: str
    change: float          # signed relative change that fails, e.g. -0.05 or +0.10

    def violated_by(self, ratio: float) -> bool:
        return ratio - 1 < self.change if self.change < 0 else ratio - 1 > self.change


def parse_threshold(text: str) -> Threshold:
    m = re.fullmatch(r"\s*([a-z0-9]+)\s*:\s*([+-])\s*(\d+(?:\.\d+)?)\s*%\s*", text, re.ASCII)
    if not m or m.group(1) not in METRICS:
        raise UsageError(f"--fail-if {text!r}: expected METRIC:+N% or METRIC:-N% with METRIC one "
                         f"of {', '.join(METRICS)}, e.g. ndr:-5% or p99:+10%")
    sign = -1.0 if m.group(2) == "-" else 1.0
    if sign < 0 and float(m.group(3)) >= 100:
        raise UsageError(f"--fail-if {text!r}: a value cannot fall by 100 % or more; give a drop "
                         "below 100 %, e.g. ndr:-5%")
    return Threshold(m.group(1), sign * float(m.group(3)) / 100)


@dataclass
class Change:
    key: str
    label: str
    metric: str
    a: float
    b: float
    significant: bool
    how: str                              # "bootstrap CI", "bounds + noise band", ...
    ci: tuple[float, float] | None = None
    series_groups: int | None = None      # jumpavg groups over all runs (3+ runs)
    ranges: tuple[tuple[float, float] | None, ...] = ()   # single searches: transition intervals

    @property
    def ratio(self) -> float:
        return self.b / self.a if self.a else float("inf")

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "metric": self.metric, "a": self.a,
                "b": self.b, "ratio": round(self.ratio, 5), "significant": self.significant,
                "how": self.how, "ci": self.ci, "series_groups": self.series_groups}


@dataclass
class Comparison:
    runs: list[str]
    changes: list[Change]
    unmatched: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    shifts: list[Shift] = field(default_factory=list)

    @property
    def significant(self) -> list[Change]:
        """The significant changes, the largest first (by |log B/A|): what the summary names."""
        return sorted((c for c in self.changes if c.significant),
                      key=lambda c: -abs(math.log(c.ratio)) if 0 < c.ratio < math.inf
                      else -math.inf)

    def summary_lines(self) -> list[str]:
        """'N comparisons, K significant' and then each significant change on a line of its
        own, the largest first, so that a halved NDR is read in the summary, not at row 90."""
        head = (f"{len(self.changes)} comparisons, {len(self.significant)} significant"
                + (f"; {len(self.unmatched)} points in only one run" if self.unmatched else ""))
        rows = [f"  {c.label} {c.metric}: {c.a:,.1f} -> {c.b:,.1f} ({c.ratio:.3f}x, "
                f"{(c.ratio - 1) * 100:+.1f} %; {c.how})" for c in self.significant]
        return [head + (":" if rows else ""), *rows]

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "changes": [c.to_json() for c in self.changes],
                "unmatched": self.unmatched, "failures": self.failures,
                "shifts": [s.to_json() for s in self.shifts]}


@dataclass
class PointValues:
    label: str
    row: dict[str, Any]
    result: dict[str, Any]
    repetitions: tuple[dict[str, Any], ...] = ()   # a campaign's repetitions: every result
    latencies: tuple[Latency, ...] = ()            # the setup's latency figures, one a repetition
    latency: Latency | None = None                 # the figure compared (its loss, unreliable)
    # its rounds' samples over its group's baseline's in the same round (empty: no rounds, or
    # no baseline sampled with it), and the baseline's name
    mrr_relative: tuple[float, ...] = ()
    mrr_baseline: str = ""


def compared_row(s: SetupSearches) -> dict[str, Any]:
    """The numbers compared for one setup, exactly as the report's ranking shows them
    (results.setups): the medians of NDR, PDR and cycles per packet near the NDR over the
    repetitions, the median repetition's bounds, latency at 90 % of the NDR."""
    h, lat = s.chosen.headline, s.latency
    return {"ndr_pps": s.ndr_pps, "pdr_pps": s.pdr_pps, "lower_bound_pps": h.lower_bound_pps,
            "upper_bound_pps": h.upper_bound_pps, "generator_bound": h.generator_bound,
            "cycles_per_packet": s.cycles_per_packet,
            "latency_p50_us": None if lat is None else lat.p50_us,
            "latency_p99_us": None if lat is None else lat.p99_us}


def load_points(path: Path) -> dict[str, PointValues]:
    """Key -> the compared values of every setup with a done search (results.setups: one setup
    whatever its repetitions, with the latency of its latency points folded in). A campaign's
    repetitions (fresh testbeds) are keyed by the first repetition's key, all of their results
    kept for judging."""
    data = load(path)
    raw = {p.key: p.result or {} for p in data.done("search")}
    lat_points: dict[Setup, list[Latency]] = {}
    for r in data.records("latency"):
        if r.headline.latency is not None:
            lat_points.setdefault(r.setup, []).append(r.headline.latency)
    out: dict[str, PointValues] = {}
    rounds = stored_rounds(data.points)
    for s in search_setups(data.records()):
        reps = sorted(s.repetitions, key=lambda r: r.repetition)
        label = reps[0].label
        if len(reps) > 1:
            label = f"{label.split(' #')[0]} ({len(reps)} repetitions)"
        group = rounds.get((s.setup.scenario, s.setup.size, variant_key(s.setup.variant)), {})
        row = compared_row(s)
        mine = group.get(s.setup.switch)
        row["mrr_pps"] = None if mine is None else mine.median_pps
        relative, base = _relative(mine, group)
        out[reps[0].key] = PointValues(label, row, raw[s.chosen.key],
                                       tuple(raw[r.key] for r in reps),
                                       tuple(lat_points.get(s.setup, ())), s.latency,
                                       relative, base)
    for p in data.points:
        sock = socket_of(p)
        if sock is not None and p.result is not None:
            row = {"goodput_gbps": sock.goodput_gbps, "transactions_per_s":
                   sock.transactions_per_s, "connections_per_s": sock.connections_per_s}
            out[p.key] = PointValues(p.label, row, p.result, (p.result,))
    return out


def _relative(mine: SwitchRounds | None, group: dict[str, SwitchRounds]
              ) -> tuple[tuple[float, ...], str]:
    """Each round's sample of `mine` over the group's baseline's (no switch: veth, memif) in
    the same round; ((), "") without rounds or baseline."""
    from vswbench.switches.catalog import all_switches

    bases = [sr for name, sr in group.items()
             if getattr(all_switches().get(name), "direct", False)]
    if mine is None or not bases or bases[0] is mine:
        return (), ""
    base = bases[0].by_round()
    return (tuple(x.received_pps / base[r].received_pps for r, x in mine.by_round().items()
                  if r in base and base[r].received_pps > 0), bases[0].switch)


def _judge_mrr(a: PointValues, b: PointValues, va: float, vb: float) -> Change:
    """MRR: the bootstrap interval of the ratio of the two runs' medians of the per-round
    samples relative to the baseline's (paired within each run: the host's mood cancels)."""
    ra, rb = a.mrr_relative, b.mrr_relative
    if len(ra) >= 2 and len(rb) >= 2 and a.mrr_baseline == b.mrr_baseline:
        lo, hi, sig = significant_difference(list(ra), list(rb))
        return Change("", a.label, "mrr", va, vb, sig,
                      f"bootstrap CI of the ratio of medians of its rounds over "
                      f"{a.mrr_baseline}'s in the same round ({len(ra)} and {len(rb)} rounds)",
                      (round(lo, 5), round(hi, 5)))
    return Change("", a.label, "mrr", va, vb, False,
                  "no baseline sampled in both runs' rounds: not judged")


def _interval(values: PointValues, goal: str) -> tuple[float, float] | None:
    """The loads over which the point's searches were mixed: one search's transition interval,
    or the hull of its repetitions' (instantiations of a testbed differ: ovs-dpdk at 1518 B gave
    NDRs of 1.38 to 2.99 Mpps over six, with its own cycles per packet moving with them)."""
    found = [transition_interval(r, goal) for r in values.repetitions or (values.result,)]
    ranges = [i for i in found if i is not None]
    if len(ranges) < len(found):
        return None
    return min(low for low, _ in ranges), max(high for _, high in ranges)


def _values(result: dict[str, Any], column: str) -> list[float]:
    stats = (result.get("statistics") or {}).get(column)
    return [float(v) for v in stats.get("values", [])] if isinstance(stats, dict) else []


def _pdr_bounds(values: PointValues) -> tuple[Any, Any]:
    goal = next((g for g in values.result.get("goals") or [] if isinstance(g, dict)
                 and g.get("name") == "PDR"), {})
    return goal.get("lower_bound_pps"), goal.get("upper_bound_pps")


def _judge_latency(metric: str, a: PointValues, b: PointValues, va: float,
                   vb: float) -> Change:
    name = LATENCY_METRICS[metric]
    for side, values in (("A", a), ("B", b)):
        lat = values.latency
        if lat is not None and name in lat.unreliable:
            return Change("", a.label, metric, va, vb, False,
                          f"{metric} of {side} unreliable: its latency trial lost "
                          f"{(lat.loss_ratio or 0) * 100:.3g} % of its frames (not judged)")
    reps_a = [v for v in (getattr(x, f"{name}_us") for x in a.latencies) if v is not None]
    reps_b = [v for v in (getattr(x, f"{name}_us") for x in b.latencies) if v is not None]
    if len(reps_a) >= 2 and len(reps_b) >= 2 and min(reps_a) > 0:
        lo, hi, sig = significant_difference(reps_a, reps_b)
        return Change("", a.label, metric, va, vb, sig, "bootstrap CI of the ratio of medians "
                      f"over {len(reps_a)} and {len(reps_b)} latency points",
                      (round(lo, 5), round(hi, 5)))
    outside = abs(vb / va - 1) > LATENCY_NOISE
    return Change("", a.label, metric, va, vb, outside,
                  f"{LATENCY_NOISE * 100:g} % latency noise band (single latency trial"
                  f"{'s' if len(reps_a) + len(reps_b) > 2 else ''})")


def judge(metric: str, a: PointValues, b: PointValues, noise: float) -> Change | None:
    column, _ = METRICS[metric]
    va, vb = a.row.get(column), b.row.get(column)
    if not isinstance(va, (int, float)) or not isinstance(vb, (int, float)) or not va:
        return None
    if metric in LATENCY_METRICS:
        return _judge_latency(metric, a, b, float(va), float(vb))
    if metric == "mrr":
        return _judge_mrr(a, b, float(va), float(vb))
    reps_a, reps_b = _values(a.result, column), _values(b.result, column)
    if len(reps_a) >= 2 and len(reps_b) >= 2:
        lo, hi, sig = significant_difference(reps_a, reps_b)
        return Change("", a.label, metric, float(va), float(vb), sig and abs(vb / va - 1) > 0,
                      "bootstrap CI of the ratio of medians", (round(lo, 5), round(hi, 5)))
    outside_noise = abs(vb / va - 1) > noise
    if metric in ("ndr", "pdr") and a.row.get("generator_bound") and b.row.get("generator_bound"):
        return Change("", a.label, metric, float(va), float(vb), False,
                      "generator-bound in both runs (the tester's ceiling)")
    if metric not in ("ndr", "pdr"):
        return Change("", a.label, metric, float(va), float(vb), False,
                      "single measurement: not judged without repetitions")
    goal = metric.upper()
    ia, ib = _interval(a, goal), _interval(b, goal)
    if ia is not None and ib is not None:
        apart = not overlap(ia, ib)
        how = (f"trial ranges {_mpps(ia)} and {_mpps(ib)} Mpps " +
               ("apart" if apart else "overlap") + f", {noise * 100:g} % noise band")
        return Change("", a.label, metric, float(va), float(vb), outside_noise and apart, how,
                      ranges=(ia, ib))
    if metric == "ndr":
        bounds = [a.row.get("lower_bound_pps"), a.row.get("upper_bound_pps"),
                  b.row.get("lower_bound_pps"), b.row.get("upper_bound_pps")]
    else:
        bounds = [*_pdr_bounds(a), *_pdr_bounds(b)]
    if all(isinstance(x, (int, float)) for x in bounds):
        la, ua, lb, ub = cast("list[float]", bounds)
        apart = not overlap((la, ua), (lb, ub))
        return Change("", a.label, metric, float(va), float(vb), outside_noise and apart,
                      f"search bounds + {noise * 100:g} % noise band", ranges=((la, ua), (lb, ub)))
    return Change("", a.label, metric, float(va), float(vb), outside_noise,
                  f"{noise * 100:g} % noise band (single measurement)")


def _mpps(interval: tuple[float, float]) -> str:
    return f"[{interval[0] / 1e6:.3g}, {interval[1] / 1e6:.3g}]"


def _against_shift(changes: list[Change], noise: float) -> list[Shift]:
    """Single-search throughput changes are judged against the run's common shift: a point is
    significant only if it also stands out from how every point moved (results/noise.py)."""
    shifts = []
    for metric in ("ndr", "pdr"):
        single = [c for c in changes if c.metric == metric and c.ci is None
                  and not c.how.startswith("generator-bound")]
        shift = common_shift(metric, [c.ratio for c in single], noise)
        if shift is None:
            continue
        shifts.append(shift)
        for c in single:
            z = shift.z(c.ratio, *c.ranges)
            c.how += f", z {z:+.1f} vs the run's shift"
            if c.significant and abs(z) <= OUTLIER_Z:
                c.significant = False
    return shifts


def point_noise(a: PointValues, b: PointValues, noise: float | None) -> float:
    """The noise band a change of this point must leave: the one given, else the wider of the
    two searches' presets' bands (results/noise.py PRESET_NOISE: fast 10 %, quick 30 %)."""
    if noise is not None:
        return noise
    return max(search_noise(a.result.get("preset")), search_noise(b.result.get("preset")))


def compare(paths: Sequence[Path], *, noise: float | None = None,
            thresholds: Sequence[Threshold] = ()) -> Comparison:
    if len(paths) < 2:
        raise UsageError("compare needs at least two results directories")
    if noise is not None and not 0 <= noise < 1:
        raise UsageError("--noise must be a fraction in [0, 1), e.g. 0.05")
    runs = [load_points(p) for p in paths]
    first, last = runs[0], runs[-1]
    comparison = Comparison([str(p) for p in paths], [])
    comparison.unmatched = sorted(set(first) ^ set(last))
    for key in sorted(set(first) & set(last)):
        for metric in METRICS:
            change = judge(metric, first[key], last[key], point_noise(first[key], last[key], noise))
            if change is None:
                continue
            change.key = key
            column = METRICS[metric][0]
            series = [r[key].row.get(column) for r in runs if key in r]
            if len(runs) >= 3 and all(isinstance(v, (int, float)) for v in series):
                change.series_groups = series_groups(series)  # type: ignore[arg-type]
            comparison.changes.append(change)
    bands = [point_noise(first[k], last[k], noise) for k in set(first) & set(last)]
    comparison.shifts = _against_shift(comparison.changes, max(bands, default=DEFAULT_NOISE))
    for change in comparison.changes:
        for t in thresholds:
            if t.metric == change.metric and change.significant and t.violated_by(change.ratio):
                comparison.failures.append(
                    f"{change.label}: {change.metric} {change.a:,.1f} -> {change.b:,.1f} "
                    f"({(change.ratio - 1) * 100:+.1f} %), beyond {t.change * 100:+g} % "
                    f"({change.how})")
    return comparison
