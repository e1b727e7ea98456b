"""Does B differ from A? The verdict of `vswbench ab` (campaign/ab.py measures, this judges).

An A/B store holds two campaigns, `ab-A` and `ab-B`, one search per side per round, the sides
run in a randomised interleaved order (RMIT: Abedi and Brecht, ICPE 2017), each search on a fresh
testbed, its host-stall trials excised as every search's are (measure/hoststall.py). Their NDRs
(read through points.py: the headline's `ndr_pps`) are judged with the rank test of the decided
verdicts (results/decide.py), here two-sided, since the question is "different", not "faster":

- the exact Mann-Whitney U test of scipy.stats (`mannwhitneyu(..., alternative="two-sided",
  method="exact")`) at p <= decide.ALPHA: B differs from A. With every B above every A that needs
  4 rounds (p = 0.029); 3 rounds can never decide (p = 0.10), and the verdict says so;
- by how much: the Hodges-Lehmann estimate of the ratio B/A, the median of the n x m ratios
  b_j / a_i (of their logarithms), with its confidence interval at 1 - ALPHA obtained by
  inverting the same test: the shifts of log B the test does not reject (scipy's exact p-value
  evaluated between consecutive ordered log ratios). It excludes 1 exactly when the test decides;
- both sides at the tester's ceiling (generator-bound): the figures are the tester's, never a
  difference of the switch (as compare says).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vswbench.errors import UsageError
from vswbench.results.decide import ALPHA
from vswbench.results.paired import MIN_ROUNDS as PAIRED_MIN
from vswbench.results.paired import ROUNDS_KIND
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import decide_pair
from vswbench.results.paired import samples_of
from vswbench.results.points import load

SIDES = ("A", "B")
CAMPAIGNS = {side: f"ab-{side}" for side in SIDES}
MIN_ROUNDS = 4                    # the fewest rounds a two-sided exact test at 5 % can decide
STALL_SHARE = 0.5                 # more of a side's trials excised than this: warned


@dataclass(frozen=True)
class SideRuns:
    side: str
    label: str                    # the setup as the searches recorded it
    ndrs: tuple[float, ...]       # in the order they were measured
    excised_trials: int           # host-stall trials the searches excised
    generator_bound: int          # searches that ended at the tester's ceiling
    trials: int = 0               # the searches' trials in all

    @property
    def median(self) -> float:
        return statistics.median(self.ndrs) if self.ndrs else 0.0


@dataclass(frozen=True)
class ABVerdict:
    a: SideRuns
    b: SideRuns
    differs: bool
    p_value: float | None         # two-sided exact Mann-Whitney
    ratio: float | None           # Hodges-Lehmann estimate of B / A
    ci: tuple[float | None, float | None]    # of the ratio; None: unbounded at this count
    reason: str                   # why not judged, or ""
    method: str = "searches"      # "rounds": paired MRR samples (signed-rank, bootstrap CI)
    wins: int = 0                 # rounds: rounds in which B carried more than A

    def warnings(self) -> list[str]:
        """A side whose searches excised most of their trials as host stalls measured the
        machine's stalls more than the switch (seen on a 2-vCPU VM shared by other jobs: an
        nftables ACL of 2,000 rules forwarding 29 kpps of 200 kpps offered in a trial, yet its
        searches reaching 1.3-1.5 Mpps with every trial excised)."""
        out = []
        for s in (self.a, self.b):
            if s.trials and s.excised_trials > STALL_SHARE * s.trials:
                out.append(f"side {s.side}: {s.excised_trials} of its {s.trials} search trials "
                           "were excised as host stalls: its NDRs measure this machine's stalls "
                           "more than the switch; measure on a quiet machine (or with "
                           "VSWBENCH_STALL_POLICY=repeat)")
        return out

    @property
    def change(self) -> float | None:
        return None if self.ratio is None else self.ratio - 1

    def describe(self) -> str:
        n, m = len(self.a.ndrs), len(self.b.ndrs)
        if self.reason:
            return f"not judged: {self.reason}"
        if self.method == "rounds":
            return self._describe_rounds()
        assert self.ratio is not None and self.p_value is not None
        low, high = (f"{(v - 1) * 100:+.1f} %" if v is not None else "unbounded"
                     for v in self.ci)
        size = (f"B/A {self.ratio:.3f} ({(self.ratio - 1) * 100:+.1f} %), "
                f"{(1 - ALPHA) * 100:g} % CI [{low}, {high}] (Hodges-Lehmann)")
        test = f"Mann-Whitney p = {self.p_value:.3f} over {n} and {m} searches"
        if self.differs:
            way = "faster" if self.ratio > 1 else "slower"
            return f"B differs from A: B is {way}, {size}; {test}"
        hint = (f"; {n} and {m} searches with an NDR can never decide at {ALPHA:g} (it takes "
                f"{MIN_ROUNDS} a side: more --rounds)" if min(n, m) < MIN_ROUNDS else "")
        return f"no difference: {size}; {test} > {ALPHA:g}{hint}"


    def _describe_rounds(self) -> str:
        assert self.ratio is not None
        n = min(len(self.a.ndrs), len(self.b.ndrs))
        low, high = (f"{(v - 1) * 100:+.1f} %" if v is not None else "unbounded"
                     for v in self.ci)
        size = (f"B/A {self.ratio:.3f} ({(self.ratio - 1) * 100:+.1f} %), "
                f"{(1 - ALPHA) * 100:g} % CI [{low}, {high}] (bootstrap over {n} paired rounds)")
        p = "n/a" if self.p_value is None else f"{self.p_value:.3g}"
        test = f"Wilcoxon signed-rank p = {p}, B higher in {self.wins} of {n} rounds"
        if self.differs:
            way = "faster" if self.ratio > 1 else "slower"
            return f"B differs from A: B is {way}, {size}; {test}"
        hint = (f"; {n} rounds can never decide at {ALPHA:g} (it takes {PAIRED_MIN}: more "
                "--rounds)" if n < PAIRED_MIN else "")
        return f"no difference: {size}; {test}{hint}"


def _p_value(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(b, a, alternative="two-sided", method="exact").pvalue)


def hodges_lehmann(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA
                   ) -> tuple[float, tuple[float | None, float | None]]:
    """The Hodges-Lehmann ratio B/A and its 1 - alpha interval by inverting the exact two-sided
    Mann-Whitney test (None at an end the test cannot bound with these counts)."""
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    diffs = sorted(y - x for y in lb for x in la)
    estimate = math.exp(statistics.median(diffs))
    accepted = []
    levels = sorted(set(diffs))
    cuts = [levels[0] - 1.0, *((p + q) / 2 for p, q in zip(levels, levels[1:])),
            levels[-1] + 1.0]
    for j, d in enumerate(cuts):        # d lies above the j lowest distinct differences
        if _p_value(la, [y - d for y in lb]) > alpha:
            accepted.append(j)
    if not accepted:                    # cannot happen for a test that accepts its own estimate
        return estimate, (None, None)
    first, last = min(accepted), max(accepted)
    low = None if first == 0 else math.exp(levels[first - 1])
    high = None if last == len(levels) else math.exp(levels[last])
    return estimate, (low, high)


def judge(a: SideRuns, b: SideRuns) -> ABVerdict:
    if len(a.ndrs) < 2 or len(b.ndrs) < 2:
        return ABVerdict(a, b, False, None, None, (None, None),
                         "fewer than two searches with an NDR on a side")
    if min(a.ndrs + b.ndrs) <= 0:
        return ABVerdict(a, b, False, None, None, (None, None), "an NDR of zero")
    ratio, ci = hodges_lehmann(a.ndrs, b.ndrs)
    p = _p_value(a.ndrs, b.ndrs)
    if a.generator_bound == len(a.ndrs) and b.generator_bound == len(b.ndrs):
        return ABVerdict(a, b, False, p, ratio, ci, "both sides generator-bound in every search "
                         "(the tester's ceiling, not the switch's)")
    return ABVerdict(a, b, p <= ALPHA, p, ratio, ci, "")


def sides_of(store: str | Path) -> tuple[SideRuns, SideRuns]:
    """The two sides of an A/B store: every finished search of campaign ab-A and ab-B."""
    data = load(store)
    found = []
    for side in SIDES:
        recs = [r for r in data.records("search") if r.campaign == CAMPAIGNS[side]]
        ndrs = tuple(r.headline.ndr_pps for r in recs if r.headline.ndr_pps is not None)
        if not recs:
            raise UsageError(f"{data.store_path} holds no search of side {side} (campaign "
                             f"{CAMPAIGNS[side]}): give the --out directory of `vswbench ab`")
        found.append(SideRuns(side, recs[0].setup.label, ndrs,
                              sum(r.headline.trials_rejected or 0 for r in recs),
                              sum(bool(r.headline.generator_bound) for r in recs),
                              sum(r.headline.trial_count or 0 for r in recs)))
    return found[0], found[1]


def paired_sides_of(store: str | Path) -> tuple[SwitchRounds, SwitchRounds] | None:
    """The two sides' rounds of an A/B store measured in paired rounds (None: searches)."""
    data = load(store)
    found: dict[str, SwitchRounds] = {}
    for p in data.points:
        side = next((x for x in SIDES if p.campaign == CAMPAIGNS[x]), None)
        if side is not None and p.kind == ROUNDS_KIND and p.status == "done":
            found[side] = SwitchRounds(side, samples_of(p))
    if set(found) != set(SIDES):
        return None
    return found["A"], found["B"]


def judge_paired(a: SwitchRounds, b: SwitchRounds, label: str = "") -> ABVerdict:
    """B against A over their paired rounds: the signed-rank test on log(B/A) per round and the
    bootstrap interval of the ratio (results/paired.py decide_pair, as the campaign's rounds)."""
    def side(r: SwitchRounds) -> SideRuns:
        return SideRuns(r.switch, label, r.rates, 0, sum(x.tester_bound for x in r.samples),
                        len(r.samples))
    d = decide_pair(b, a)
    if d.ratio is None or d.rounds < 2:
        return ABVerdict(side(a), side(b), False, None, None, (None, None),
                         "fewer than two rounds sampled both sides", "rounds")
    b_up = d.upper == b.switch
    ratio = d.ratio if b_up else 1 / d.ratio
    ci: tuple[float | None, float | None] = (None, None)
    if d.ci is not None:
        ci = d.ci if b_up else (1 / d.ci[1], 1 / d.ci[0])
    wins = d.wins if b_up else d.rounds - d.wins
    if a.at_least and b.at_least:
        return ABVerdict(side(a), side(b), False, d.p_value, ratio, ci,
                         "both sides lost nothing in most rounds (the tester's limit, not the "
                         "switch's)", "rounds", wins)
    differs = (d.p_value is not None and d.p_value <= ALPHA and d.rounds >= PAIRED_MIN
               and ci[0] is not None and ci[1] is not None and not ci[0] <= 1.0 <= ci[1])
    return ABVerdict(side(a), side(b), differs, d.p_value, ratio, ci, "", "rounds", wins)
