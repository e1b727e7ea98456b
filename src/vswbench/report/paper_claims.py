"""A paper spec's claims and reference values evaluated on the measured points of its store.

Every verdict is computed here from stored results, never read from the spec: a claim holds,
does not hold, or cannot be tested here (the spec says why the machine lacks what it needs, or
no finished point measured one of its terms, or the tester's ceiling stopped both sides of a
comparison). The grammar of terms and checks is campaign/paper.py's.

- A term's value is the median over the matching points (repetitions pooled) of its metric.
- `delay_X` is X of the matching points minus X of the baseline switch's points that match the
  same keys with switch=baseline (veth unless `baseline=` says otherwise): Sattar and Matrawy
  isolate the switch's own delay, here the path without the switch is subtracted.
- A trend (`rises|falls with KEY`) compares the term at the smallest and the largest value of
  KEY measured (every value in between is shown); with `margin` m, rising needs
  last > first * (1 + m).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from vswbench import scenario as scenarios
from vswbench.campaign.paper import LOADS
from vswbench.campaign.paper import Check
from vswbench.campaign.paper import Claim
from vswbench.campaign.paper import PaperInfo
from vswbench.campaign.paper import Term
from vswbench.engine.records import LatencySummary
from vswbench.jsonvalues import number
from vswbench.results.params import KNOB_DEFAULTS
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults
from vswbench.results.points import load_at
from vswbench.results.points import size_order
from vswbench.results.record import LoadPoint
from vswbench.units import parse_rate
from vswbench.units import wire_gbps

HOLDS, FAILS, UNTESTABLE = "holds", "does not hold", "cannot be tested here"
PCT = {"p50": "p50", "p90": "p90", "p99": "p99", "p999": "p999", "mean": "mean", "max": "max",
       "min": "min"}
LOAD_KINDS = ("sweep", "latency")     # points with a list of loads (offered, achieved, lost)
UNITS = {"tput": "pps", "peak": "pps", "lossless": "pps", "overload": "pps", "gbps": "Gbit/s",
         "tail": "x", "cycles": "cycles/packet"}


@dataclass(frozen=True)
class Value:
    """A term's measured value (None: not measured, `why` says what is missing)."""
    value: float | None                   # the median over repetitions
    points: int = 0
    generator_bound: bool = False
    why: str = ""
    values: tuple[float, ...] = ()        # one per repetition (factor applied)

    @property
    def span(self) -> tuple[float, float] | None:
        """(lowest, highest) over the repetitions; None for a single value."""
        return (min(self.values), max(self.values)) if len(self.values) > 1 else None

    def text(self, metric: str | None) -> str:
        if self.value is None:
            return "not measured"
        unit = UNITS.get(metric or "", "us") if metric else ""
        body = _fmt(self.value, unit)
        if self.span:
            body += (f" (median of {len(self.values)}: {_fmt(self.span[0], unit, False)} to "
                     f"{_fmt(self.span[1], unit, False)})")
        return body + (" (tester's ceiling)" if self.generator_bound else "")


def _fmt(v: float, unit: str, with_unit: bool = True) -> str:
    if unit == "pps":
        text, unit = f"{v / 1e3:,.1f}", "kpps"
    elif unit == "us":
        text = f"{v:,.1f}"
    else:
        text = f"{v:,.3g}"
    return f"{text} {unit}".strip() if with_unit else text


@dataclass(frozen=True)
class ClaimVerdict:
    law: str
    source: str
    check: str
    verdict: str                      # HOLDS | FAILS | UNTESTABLE
    detail: str


@dataclass(frozen=True)
class ReferenceRow:
    quantity: str
    theirs: str                       # "1.88 Mpps"
    source: str
    ours: str                         # "" when the spec names no measured term
    theirs_normalised: str = ""
    ours_normalised: str = ""
    basis: str = ""                   # what both are divided by


# -- matching points ---------------------------------------------------------------------------
def _matches(p: PointRecord, key: str, want: str) -> bool:
    if key in ("fraction", "load", "baseline"):
        return True                    # chosen inside a point, or for the baseline
    if key in ("clones", "nf"):
        got = p.params.option(key)
        return got is not None and got == want
    if key == "kind":
        return p.kind == want
    if key == "scenario":
        return str(p.params.value("scenario")) == _scenario_name(want)
    got = p.params.value(key, KNOB_DEFAULTS.get(key))    # a knob left out: its default
    if got is None:
        return False
    if key == "rate":
        try:
            return abs(float(got) - parse_rate(want)) <= 1e-6 * max(1.0, float(got))
        except Exception:                      # noqa: BLE001 - an unparsable rate matches nothing
            return False
    return str(got) == want


def _scenario_name(text: str) -> str:
    """chain:1 is stored as pvp (scenario.parse names it so)."""
    try:
        return scenarios.parse(text).name
    except Exception:                          # noqa: BLE001 - an unknown name matches itself
        return text


def matching(data: StoredResults, select: Sequence[tuple[str, str]]) -> list[PointRecord]:
    return [p for p in data.records() if all(_matches(p, k, v) for k, v in select)]


# -- load curves: a sweep's or a latency point's loads, or trials of one setup at several rates
CURVE_METRICS = ("peak", "lossless", "overload")


def _pick(loads: Sequence[LoadPoint], which: str) -> LoadPoint | None:
    loads = sorted(loads, key=lambda x: float(x.offered_pps or 0))
    if not loads:
        return None
    if which == "lowest":
        return loads[0]
    if which == "overload":
        return loads[-1]
    clean = [x for x in loads if x.lost == 0 or x.loss_ratio == 0]
    return clean[-1] if clean else None


def _curves(points: Sequence[PointRecord]
            ) -> dict[tuple[Any, ...], dict[int, list[LoadPoint]]]:
    """Loads (offered, achieved, lost, latency) per curve and repetition: every sweep or
    latency point is one; trials of one setup at different rates are one (each offered its
    campaign rate)."""
    curves: dict[tuple[Any, ...], dict[int, list[LoadPoint]]] = {}
    for p in points:
        m, rep = p.measured, p.params.repetition
        rate = number(p.params.rate)
        if p.kind in LOAD_KINDS:
            key = (p.kind, p.params.pairs(("repetition",)))
            curves.setdefault(key, {}).setdefault(rep, []).extend(
                x for x in m.loads or () if x.offered_pps)
        elif p.kind == "trial" and rate and m.as_trial is not None:
            key = ("trial", p.params.pairs(("repetition", "rate")))
            curves.setdefault(key, {}).setdefault(rep, []).append(
                replace(m.as_trial, offered_pps=rate))
    return curves


def _curve_value(loads: Sequence[LoadPoint], metric: str,
                 select: dict[str, str]) -> float | None:
    if metric == "peak":
        return max((a for a in (x.achieved_pps for x in loads) if a is not None), default=None)
    which = {"lossless": "lossless", "overload": "overload"}.get(metric,
                                                              select.get("load", "lossless"))
    e = _pick(loads, which)
    if e is None:
        return None
    if metric == "lossless":
        return e.offered_pps
    if metric == "overload":
        return e.achieved_pps
    return _from_latency(e.latency, metric)


def _from_latency(lat: LatencySummary | None, metric: str) -> float | None:
    if lat is None:
        return None
    if metric == "tail":
        p50, p99 = lat.p50, lat.p99
        return p99 / p50 if p50 and p99 is not None else None
    field = PCT.get(metric.removeprefix("delay_"))
    return getattr(lat, field) if field else None


# -- one point's metric ------------------------------------------------------------------------
def point_value(p: PointRecord, metric: str, select: dict[str, str]) -> float | None:
    m = p.measured
    if metric in ("tput", "gbps"):
        tp = p.throughput()
        if tp is None:
            return None
        return tp[1] if metric == "tput" else wire_gbps(tp[1], p.params.value("size", 64))
    if metric == "cycles":
        return m.cycles_per_packet
    if p.kind == "trial":
        return _from_latency(m.as_trial.latency if m.as_trial is not None else None, metric)
    if p.kind == "latency":
        e = load_at(m.loads, float(select.get("fraction", "90")) / 100.0)
        return _from_latency(e.latency if e else None, metric)
    return None


# -- terms -------------------------------------------------------------------------------------
def evaluate(term: Term, data: StoredResults) -> Value:
    if term.metric is None:
        return Value(term.number)
    if term.metric.startswith("delay_"):
        return _delay(term, data)
    select = dict(term.select)
    if term.metric in CURVE_METRICS or "load" in select:
        return _curve_term(term, data)
    measured = [(p, v) for p in matching(data, term.select)
                for v in [point_value(p, term.metric, select)] if v is not None]
    setups = {(p.kind, p.params.pairs(("repetition",))) for p, _ in measured}
    if len(setups) > 1:
        return Value(None, why=f"{len(setups)} different setups match {term.text()}: name more "
                     "keys (kind, size, rate, ...) so that one setup is meant")
    values = [(v, p.measured.generator_bound) for p, v in measured]
    if not values:
        return Value(None, why=f"no finished point measured {term.text()}"
                     + _failures(data, term.select))
    return Value(term.factor * statistics.median(v for v, _ in values), len(values),
                 any(b for _, b in values), values=tuple(term.factor * v for v, _ in values))


def _curve_term(term: Term, data: StoredResults) -> Value:
    assert term.metric is not None
    curves = _curves(matching(data, term.select))
    if len(curves) > 1:
        return Value(None, why=f"{len(curves)} different load curves match {term.text()}: name "
                     "more keys so that one setup is meant")
    if not curves:
        return Value(None, why=f"no finished sweep, latency point or trials at several rates "
                     f"measured {term.text()}" + _failures(data, term.select))
    (reps,) = curves.values()
    found = [v for v in (_curve_value(loads, term.metric, dict(term.select))
                         for loads in reps.values()) if v is not None]
    n = sum(len(loads) for loads in reps.values())
    if not found:
        what = "no load without loss" if "lossless" in (term.metric, dict(term.select).get(
            "load")) else "no value"
        return Value(None, why=f"{term.text()}: {what} among its {n} loads")
    return Value(term.factor * statistics.median(found), n,
                 values=tuple(term.factor * v for v in found))


def _delay(term: Term, data: StoredResults) -> Value:
    base_name = dict(term.select).get("baseline", "veth")
    plain = replace(term, metric=(term.metric or "").removeprefix("delay_"), factor=1.0,
                    select=tuple((k, v) for k, v in term.select if k != "baseline"))
    base = replace(plain, select=tuple((k, v) for k, v in plain.select if k != "switch")
                   + (("switch", base_name),))
    mine, theirs = evaluate(plain, data), evaluate(base, data)
    if mine.value is None or theirs.value is None:
        return Value(None, why=mine.why or theirs.why)
    return Value(term.factor * (mine.value - theirs.value), mine.points + theirs.points,
                 values=tuple(term.factor * (v - theirs.value) for v in mine.values))


def _failures(data: StoredResults, select: Sequence[tuple[str, str]]) -> str:
    failed = [p for p in data.all_records() if p.status != "done"
              and all(_matches(p, k, v) for k, v in select)]
    if not failed:
        return ""
    why = (failed[0].error or failed[0].status).splitlines()[0][:160]
    return f" ({len(failed)} point(s) {failed[0].status}: {why})"


# -- trends ------------------------------------------------------------------------------------
def _x_values(term: Term, key: str, data: StoredResults) -> list[str]:
    base = [(k, v) for k, v in term.select if k != key]
    pts = matching(data, base)
    if term.metric and term.metric.startswith("delay_"):
        sw = dict(term.select).get("switch")
        pts = [p for p in pts if sw is None or p.params.value("switch") == sw]
    if key == "load":
        return list(LOADS)
    xs = {x for p in pts for x in _xs_of(p, key)}
    order: Callable[[str], Any] = (lambda s: size_order(int(s) if s.isdigit() else s)) \
        if key == "size" else (lambda s: float(s))
    return sorted(xs, key=order)


def _xs_of(p: PointRecord, key: str) -> set[str]:
    """The values of trend axis `key` one point holds (a latency point: each fraction)."""
    if key == "fraction":
        return {f"{e.fraction_of_ndr * 100:g}" for e in p.measured.loads or ()
                if e.fraction_of_ndr is not None and p.kind == "latency"}
    if key in ("chain", "pairs"):
        scen = str(p.params.value("scenario", ""))
        if scen.startswith(key + ":"):
            return {scen.split(":", 1)[1]}
        return {"1"} if key == "chain" and scen == _scenario_name("chain:1") else set()
    if key == "clones":
        clones = p.params.option("clones")
        return set() if clones is None else {clones}
    if key == "rate":
        return set() if p.params.rate is None else {f"{float(p.params.rate):g}"}
    return {str(p.params.value(key, 1))}


def _trend(check: Check, claim: Claim, data: StoredResults) -> tuple[str, str]:
    key = check.key or ""
    xs = _x_values(check.left, key, data)
    series = []
    for x in xs:
        k, v = ("scenario", f"{key}:{x}") if key in ("chain", "pairs") else (key, x)
        t = replace(check.left, select=tuple((a, b) for a, b in check.left.select if a != k)
                    + ((k, v),))
        series.append((x, evaluate(t, data)))
    measured = [(x, v) for x, v in series if v.value is not None]
    shown = ", ".join(f"{key}={x}: {v.text(check.left.metric)}" for x, v in series)
    if len(measured) < 2:
        return UNTESTABLE, (f"fewer than two values of {key} measured for "
                            f"{check.left.text()}" + (f" ({shown})" if shown else ""))
    first, last = measured[0][1], measured[-1][1]
    op = ">" if check.trend == "rises" else "<"
    verdict = _decide(last, op, first, claim.margin)
    return verdict, shown + (f": {OVERLAP}" if verdict == UNTESTABLE else "")


def _compare(check: Check, claim: Claim, data: StoredResults) -> tuple[str, str]:
    assert check.right is not None and check.op is not None
    a, b = evaluate(check.left, data), evaluate(check.right, data)
    shown = (f"{check.left.text()} = {a.text(check.left.metric)}; "
             f"{check.right.text()} = {b.text(check.right.metric)}")
    if a.value is None or b.value is None:
        return UNTESTABLE, a.why or b.why
    if a.generator_bound and b.generator_bound:
        return UNTESTABLE, shown + ": both sides stopped at the tester's ceiling"
    verdict = _decide(a, check.op, b, claim.margin)
    if verdict == UNTESTABLE:
        shown += f": {OVERLAP}"
    return verdict, shown


OVERLAP = ("the repetitions' ranges overlap: the difference is within this machine's noise, "
           "neither side is shown larger")


def _holds(a: float, op: str, b: float, m: float) -> bool:
    return {">": a > b * (1 + m), ">=": a >= b * (1 - m), "<": a < b * (1 - m),
            "<=": a <= b * (1 + m)}[op]


def _decide(a: Value, op: str, b: Value, margin: float) -> str:
    """On the medians; with repetitions, only when every repetition agrees: the claim holds if
    it holds between a's worst and b's worst value, fails if it fails between their best, and
    cannot be told otherwise (the ranges overlap)."""
    assert a.value is not None and b.value is not None
    if a.span is None and b.span is None:
        return HOLDS if _holds(a.value, op, b.value, margin) else FAILS
    a_lo, a_hi = a.span or (a.value, a.value)
    b_lo, b_hi = b.span or (b.value, b.value)
    worst, best = ((a_lo, b_hi), (a_hi, b_lo)) if op in (">", ">=") else ((a_hi, b_lo),
                                                                          (a_lo, b_hi))
    if _holds(worst[0], op, worst[1], margin):
        return HOLDS
    if not _holds(best[0], op, best[1], margin):
        return FAILS
    return UNTESTABLE


def judge(claim: Claim, data: StoredResults) -> ClaimVerdict:
    if claim.check is None:
        return ClaimVerdict(claim.law, claim.source, "", UNTESTABLE, claim.untestable or "")
    if claim.check.trend:
        verdict, detail = _trend(claim.check, claim, data)
    else:
        verdict, detail = _compare(claim.check, claim, data)
    return ClaimVerdict(claim.law, claim.source, claim.check_text, verdict, detail)


def overall(verdicts: Sequence[ClaimVerdict]) -> str:
    """One word for a figure: every testable claim holds -> holds; any fails -> does not hold
    (with the count); nothing testable -> cannot be tested here."""
    tested = [v for v in verdicts if v.verdict != UNTESTABLE]
    if not tested:
        return UNTESTABLE
    failed = sum(v.verdict == FAILS for v in tested)
    if not failed:
        return HOLDS + (f" ({len(tested)} of {len(verdicts)} claims testable here)"
                        if len(tested) < len(verdicts) else "")
    return f"{FAILS} ({failed} of {len(tested)} tested claims)"


# -- reference values --------------------------------------------------------------------------
def references(paper: PaperInfo, data: StoredResults) -> list[ReferenceRow]:
    by_id = {r.id: r for r in paper.references}
    rows = []
    for r in paper.references:
        ours_v = evaluate(r.ours, data) if r.ours else None
        ours = ours_v.text(r.ours.metric) if ours_v is not None and r.ours else ""
        row = ReferenceRow(r.quantity, f"{r.value:g} {r.unit}", r.source, ours)
        base = by_id.get(r.relative_to or "")
        if base is not None and base.value:
            theirs_n = f"{r.value / base.value:.2f} x"
            ours_n = ""
            base_v = evaluate(base.ours, data) if base.ours else None
            if ours_v and ours_v.value is not None and base_v and base_v.value:
                ours_n = f"{ours_v.value / base_v.value:.2f} x"
            row = replace(row, theirs_normalised=theirs_n, ours_normalised=ours_n or "n/a",
                          basis=base.quantity)
        rows.append(row)
    return rows
