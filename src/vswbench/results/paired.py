"""Paired rounds: which of two switches carries more, decided by samples taken side by side in time.

On a VM whose host stalls a vCPU at a rate that drifts several-fold within minutes, absolute
rates measured minutes apart differ by 1.2-2x, while switches measured in alternation, second by
second, keep their order (the randomised interleaved trials of Abedi & Brecht, ICPE 2017; the
paired comparisons of Bulej et al.'s Duet benchmarking, ICPE 2020). So a campaign's rounds
(campaign/rounds_phase.py) take one short sample of every switch of a group (one scenario, frame
size, variant and stack) per round, in a fresh random order each round, and a pair is decided by
its per-round ratios, never by figures measured apart:

- the sample (`Sample`) is the received rate with the tester at its ceiling (CSIT's MRR, maximum
  receive rate): the switch's own limit where it dropped frames, a lower bound where it did not
  (the tester, not the switch, stopped it: `tester_bound`);
- a pair's test is the exact two-sided Wilcoxon signed-rank test of scipy.stats over the log of
  the per-round ratios, at p <= ALPHA; with every round one way that needs 6 rounds (p = 0.031);
- its interval is a percentile bootstrap (BOOTSTRAP_RESAMPLES, fixed seed: the same store gives
  the same page) of the geometric mean of those ratios; a pair is decided only where the test
  rejects and the interval excludes 1;
- a switch whose samples were mostly lossless is "at least" its rate: it is never ranked below a
  switch it may beat (`rank`), and a pair whose lower side is one is open.

A switch's stated range (`SwitchRounds.interval`) is the span of its own samples over the rounds
(spread through the phase, never one search's bracket), widened by RANGE_WIDEN on each side,
the factor checked against re-runs (bench/reproducibility's coverage).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

ALPHA = 0.05                       # 95 % confidence
MIN_ROUNDS = 6                     # the fewest rounds that can decide a pair (2 / 2**6 < ALPHA)
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20171001          # fixed: one store, one page
# A sample that lost at most this share of what the tester sent was not stopped by the switch:
# every engine frame it was offered arrived (a few stragglers at the trial's end aside)...
TESTER_BOUND_LOSS = 0.001
# ... if the tester also sent at (this share of) its calibrated ceiling; one that lost nothing
# well below its ceiling was held back by the path (a DPDK port's full ring, a socket's
# backpressure): what arrived is then the path's limit, not the tester's.
TESTER_CEILING_SHARE = 0.9
# Two switches whose ratio's 95 % interval lies within 1/(1 + m) .. 1 + m are decided *equal
# within m* (an equivalence test, TOST's idea at the stricter 95 % interval): not an order, yet an
# answer the data give (bridge, router and ovs-afxdp at 1518 B: 1.00x, 95 % CI 0.96-1.06).
EQUIVALENCE_MARGIN = 0.10
# The span of a switch's samples over one run's rounds, widened by this share on each side, is
# the range stated with its headline: between-run drift of the host is wider than one run's
# rounds show (issue 43: runs minutes apart differ 1.2-2x); checked by bench/reproducibility.
RANGE_WIDEN = 0.10
Interval = tuple[float, float]


@dataclass(frozen=True)
class Sample:
    """One switch's sample in one round: the tester at its ceiling for a short fixed time."""
    switch: str
    round: int                     # 0-based
    position: int                  # its place in the round's random order
    duration_s: float
    sent: int                      # frames the tester put on the wire
    received: int                  # engine frames that arrived
    stall_ms: float = 0.0          # host stalls the monitor recorded in the sample's window
    host_stall: str | None = None  # the trial's stall verdict (measure/hoststall.py), if any
    ceiling_pps: float | None = None   # the tester's calibrated ceiling (None: not calibrated)

    @property
    def received_pps(self) -> float:
        return self.received / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def sent_pps(self) -> float:
        return self.sent / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def loss_ratio(self) -> float:
        return (self.sent - self.received) / self.sent if self.sent > 0 else 0.0

    @property
    def tester_bound(self) -> bool:
        """Nothing dropped and the tester at its ceiling: the switch carried all the tester
        could send, so its own limit is higher."""
        if self.sent <= 0 or self.loss_ratio > TESTER_BOUND_LOSS:
            return False
        return self.ceiling_pps is None or self.sent_pps >= TESTER_CEILING_SHARE * self.ceiling_pps

    def to_json(self) -> dict[str, object]:
        return {"round": self.round, "position": self.position, "duration_s": self.duration_s,
                "sent": self.sent, "received": self.received, "stall_ms": self.stall_ms,
                "host_stall": self.host_stall, "ceiling_pps": self.ceiling_pps}

    @classmethod
    def from_json(cls, switch: str, d: dict[str, object]) -> Sample:
        stall, ceiling = d.get("host_stall"), d.get("ceiling_pps")
        return cls(switch, int(_num(d.get("round"))), int(_num(d.get("position"))),
                   float(_num(d.get("duration_s"))), int(_num(d.get("sent"))),
                   int(_num(d.get("received"))), float(_num(d.get("stall_ms"))),
                   None if stall is None else str(stall),
                   _num(ceiling) if isinstance(ceiling, (int, float)) else None)


def _num(v: object) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


@dataclass(frozen=True)
class SwitchRounds:
    """One switch's samples over a group's rounds."""
    switch: str
    samples: tuple[Sample, ...]

    @property
    def rates(self) -> tuple[float, ...]:
        return tuple(s.received_pps for s in self.samples if s.received > 0)

    @property
    def median_pps(self) -> float | None:
        return statistics.median(self.rates) if self.rates else None

    @property
    def interval(self) -> Interval | None:
        """The span of its samples over the rounds, widened by RANGE_WIDEN on each side."""
        if not self.rates:
            return None
        return min(self.rates) * (1 - RANGE_WIDEN), max(self.rates) * (1 + RANGE_WIDEN)

    @property
    def at_least(self) -> bool:
        """Most of its samples were lossless: its figure is the tester's limit, not its own."""
        bound = sum(s.tester_bound for s in self.samples)
        return bool(self.samples) and bound * 2 > len(self.samples)

    def by_round(self) -> dict[int, Sample]:
        return {s.round: s for s in self.samples if s.received > 0}


@dataclass(frozen=True)
class PairedDecision:
    """Two switches over the rounds both were sampled in: `upper` has the higher median ratio."""
    upper: str
    lower: str
    rounds: int                    # rounds with a sample of both
    wins: int                      # rounds in which upper carried more
    ratio: float | None            # geometric mean of upper/lower over those rounds
    ci: Interval | None            # its 95 % bootstrap interval
    p_value: float | None          # Wilcoxon signed-rank, two-sided (None: too few rounds)
    decided: bool
    reason: str = ""               # why it is open (empty when decided)
    lower_at_least: bool = field(default=False)
    equivalent: bool = False       # not ordered, but equal within EQUIVALENCE_MARGIN

    @property
    def settled(self) -> bool:
        """Decided one way, or decided equal within the margin: more rounds are not needed."""
        return self.decided or self.equivalent

    def evidence(self) -> str:
        """'6 of 6 rounds, 1.12x (95 % CI 1.03-1.25)'."""
        ratio = "" if self.ratio is None else f", {self.ratio:.2f}x"
        ci = "" if self.ci is None else f" (95 % CI {self.ci[0]:.2f}-{self.ci[1]:.2f})"
        return f"{self.wins} of {self.rounds} rounds{ratio}{ci}"

    def describe(self) -> str:
        """'router carries more than bridge: 6 of 6 rounds, 1.12x (95 % CI 1.03-1.25)', or
        'router and bridge tie: 4 of 6 rounds, 1.02x (95 % CI 0.97-1.08); <reason>'."""
        if self.decided:
            return f"{self.upper} carries more than {self.lower}: {self.evidence()}"
        if self.equivalent:
            return (f"{self.upper} and {self.lower} are equal within "
                    f"{EQUIVALENCE_MARGIN * 100:g} %: {self.evidence()}")
        return f"{self.upper} and {self.lower} tie: {self.evidence()}; {self.reason}"


def _bootstrap(logs: Sequence[float]) -> Interval:
    import numpy as np

    rng = np.random.default_rng(BOOTSTRAP_SEED)
    arr = np.asarray(logs, dtype=float)
    idx = rng.integers(0, len(arr), size=(BOOTSTRAP_RESAMPLES, len(arr)))
    means = arr[idx].mean(axis=1)
    lo, hi = np.quantile(means, [ALPHA / 2, 1 - ALPHA / 2])
    return math.exp(float(lo)), math.exp(float(hi))


def _wilcoxon(logs: Sequence[float]) -> float | None:
    nonzero = [x for x in logs if x != 0.0]
    if len(nonzero) < 2:
        return None
    from scipy.stats import wilcoxon

    return float(wilcoxon(nonzero, alternative="two-sided").pvalue)


def decide_pair(a: SwitchRounds, b: SwitchRounds) -> PairedDecision:
    """Which of a and b carries more, over the rounds both were sampled in."""
    ra, rb = a.by_round(), b.by_round()
    common = sorted(set(ra) & set(rb))
    logs = [math.log(ra[r].received_pps / rb[r].received_pps) for r in common]
    mean = statistics.fmean(logs) if logs else 0.0
    upper, lower = (a, b) if mean >= 0 else (b, a)
    if upper is b:
        logs = [-x for x in logs]
    wins = sum(x > 0 for x in logs)
    if not logs:
        return PairedDecision(upper.switch, lower.switch, 0, 0, None, None, None, False,
                              "no round sampled both", lower.at_least)
    ratio = math.exp(abs(mean))
    ci = _bootstrap(logs) if len(logs) > 1 else None
    p = _wilcoxon(logs)
    reasons = []
    if lower.at_least:
        reasons.append(f"{lower.switch}'s samples lost no frame: its figure is the tester's "
                       "limit, so it may carry more")
    if len(common) < MIN_ROUNDS:
        reasons.append(f"{len(common)} rounds, {MIN_ROUNDS} needed to decide at "
                       f"{(1 - ALPHA) * 100:g} %")
    elif p is None or p > ALPHA:
        reasons.append("signed-rank test p = " + ("n/a" if p is None else f"{p:.2f}")
                       + f" > {ALPHA:g}")
    elif ci is not None and ci[0] <= 1.0:
        reasons.append("the ratio's 95 % interval includes 1")
    equal = (bool(reasons) and not lower.at_least and len(common) >= MIN_ROUNDS
             and ci is not None and ci[0] >= 1 / (1 + EQUIVALENCE_MARGIN)
             and ci[1] <= 1 + EQUIVALENCE_MARGIN)
    return PairedDecision(upper.switch, lower.switch, len(common), wins, ratio, ci, p,
                          not reasons, "; ".join(reasons), lower.at_least, equal)


def mean_log_ratio(a: SwitchRounds, b: SwitchRounds) -> float:
    """The mean over their common rounds of log(a / b): > 0 where a carried more."""
    ra, rb = a.by_round(), b.by_round()
    logs = [math.log(ra[r].received_pps / rb[r].received_pps) for r in set(ra) & set(rb)]
    return statistics.fmean(logs) if logs else 0.0


def paired_order(group: Iterable[SwitchRounds]) -> list[SwitchRounds]:
    """Highest first: by median rate, then neighbours swapped where their per-round ratios say
    the lower one carried more (the order within rounds, not that of figures apart)."""
    ordered = sorted((g for g in group if g.median_pps), key=lambda g: (-(g.median_pps or 0),
                                                                        g.switch))
    for _ in range(len(ordered)):
        swapped = False
        for i in range(len(ordered) - 1):
            if mean_log_ratio(ordered[i], ordered[i + 1]) < 0:
                ordered[i], ordered[i + 1] = ordered[i + 1], ordered[i]
                swapped = True
        if not swapped:
            break
    return ordered


@dataclass(frozen=True)
class RankedSwitch:
    rounds: SwitchRounds
    rank: int | None               # None: at least its figure, not decided against the one above
    tied: bool


def rank(group: Iterable[SwitchRounds]) -> tuple[list[RankedSwitch], list[PairedDecision]]:
    """Competition ranking by median received rate, every adjacent pair decided by the rounds:
    a switch joins the group of the switch above it unless their pair is decided. A switch at
    least its figure (tester-bound) that the switch above it does not beat decidedly is taken
    out of the ranking (rank None): it may beat any of them. Returns the ranked switches and
    the decisions between neighbours, in order."""
    ordered = paired_order(group)
    out: list[RankedSwitch] = []
    decisions: list[PairedDecision] = []
    above: SwitchRounds | None = None
    position, group_rank, group_size = 0, 0, 0
    for g in ordered:
        if above is None:
            position, group_rank, group_size = 1, 1, 1
            out.append(RankedSwitch(g, 1, False))
            above = g
            continue
        d = decide_pair(above, g)
        decisions.append(d)
        if g.at_least and not d.decided:
            out.append(RankedSwitch(g, None, False))
            continue
        position += 1
        if d.decided:
            group_rank, group_size = position, 1
        else:
            group_size += 1
        out.append(RankedSwitch(g, group_rank, not d.decided))
        above = g
    # the first of a tie group is tied too
    tied_ranks = {r.rank for r in out if r.tied}
    return [RankedSwitch(r.rounds, r.rank, r.rank in tied_ranks and r.rank is not None)
            for r in out], decisions


def all_decided(group: Iterable[SwitchRounds]) -> bool:
    """Is every adjacent pair of the group decided (the rounds may stop)?"""
    _, decisions = rank(group)
    return all(d.settled or d.lower_at_least for d in decisions)


# -- read from a store ------------------------------------------------------------------------
ROUNDS_KIND = "rounds"             # campaign/rounds_phase.py stores one point per switch
GroupOf = tuple[str, "int | str", str]     # scenario, size, variant (without the preset)


def variant_key(variant: str) -> str:
    """A setup's variant without its preset: a search's and its rounds' are then one."""
    return " ".join(t for t in variant.split() if not t.startswith("preset="))


def stored_rounds(points: Iterable[Any]) -> dict[tuple[str, int | str, str], dict[str,
                                                                                    SwitchRounds]]:
    """Every done rounds point of a store (results.points.StoredResults.points), by scenario,
    frame size and variant (variant_key), then switch."""
    from vswbench.results.points import setup_of

    out: dict[tuple[str, int | str, str], dict[str, SwitchRounds]] = {}
    for p in points:
        if p.kind != ROUNDS_KIND or p.status != "done" or not p.result:
            continue
        setup = setup_of(p)
        key = (setup.scenario, setup.size, variant_key(setup.variant))
        out.setdefault(key, {})[setup.switch] = SwitchRounds(setup.switch, samples_of(p))
    return out


def samples_of(p: Any) -> tuple[Sample, ...]:
    """The samples of a stored rounds point (results.store.StoredPoint), in round order."""
    if p is None or not p.result:
        return ()
    switch = str(p.params.get("switch", ""))
    return tuple(sorted((Sample.from_json(switch, d) for d in p.result.get("samples") or []
                         if isinstance(d, dict)), key=lambda x: x.round))
