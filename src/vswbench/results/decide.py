"""Is one switch faster than the next? A pair of setups decided at 95 % confidence, or left open.

Three ways decide a pair, each stated with the verdict:

- the rank test over repetitions (each a fresh testbed): the exact one-sided Mann-Whitney U test
  of scipy.stats (`mannwhitneyu(..., alternative="greater", method="exact")`) at p <= ALPHA. With
  every repetition of one above every repetition of the other that needs 3 against 3 (p = 0.05);
  2 against 2 can never decide (p = 0.17);
- the noise ranges (`noise_range`: the search's final bracket, the NDR goal's lower and upper
  bound, widened over repetitions to the interquartile range of their NDRs, then by half the
  single-search noise band on each side): when one lies wholly above the other;
- the size of the gap: medians TIE_MAX_RATIO (1.5x) or more apart are never one tie. Never the
  lowest load at which any trial lost frames: one sporadic lossy trial at a low load (a host
  stall) would stretch a range into a tie with everything.

Anything else is open: the campaign runner's decide phase repeats both (randomised, interleaved:
RMIT) while its budget lasts, and a pair still open at the end is a tie whose reason says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from vswbench.results.noise import SINGLE_SEARCH_NOISE

ALPHA = 0.05                       # 95 % confidence
TIE_MAX_RATIO = 1.5                # medians this far apart are decided by the gap itself
Interval = tuple[float, float]


def _quartiles(values: Sequence[float]) -> Interval:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0], ordered[0]
    q = statistics.quantiles(ordered, n=4, method="inclusive")
    return q[0], q[2]


def noise_range(ndrs: Sequence[float], bracket: Interval | None,
                noise: float = SINGLE_SEARCH_NOISE) -> Interval | None:
    """A setup's range: its repetitions' interquartile range joined with the median
    repetition's final bracket (lower, upper bound), widened by half the single-search noise band
    (its preset's: noise.search_noise) on each side; None without an NDR."""
    if not ndrs:
        return None
    low, high = _quartiles(ndrs)
    if bracket is not None:
        low, high = min(low, bracket[0]), max(high, bracket[1])
    half = noise / 2
    return low * (1 - half), high * (1 + half)


@dataclass(frozen=True)
class Contender:
    """One setup's searches: an NDR per repetition and the hull of their noise ranges."""
    name: str
    ndrs: tuple[float, ...]
    interval: Interval | None

    @property
    def median(self) -> float:
        return statistics.median(self.ndrs) if self.ndrs else 0.0


@dataclass(frozen=True)
class PairDecision:
    upper: Contender                 # the higher median NDR
    lower: Contender
    decided: bool
    how: str                         # "rank test", "noise ranges apart", "gap" or "open"
    p_value: float | None            # of the rank test (None: fewer than two repetitions each)
    wins: int                        # repetition pairs (i-th of each) in which upper was higher
    paired: int                      # repetition pairs compared

    @property
    def ratio(self) -> float | None:
        return self.upper.median / self.lower.median if self.lower.median > 0 else None

    def describe(self) -> str:
        """'xdp leads tc-bpf by 1.70x, 4 of 4 repetitions (rank test p = 0.014)'."""
        ratio = "" if self.ratio is None else f" by {self.ratio:.2f}x"
        reps = f", {self.wins} of {self.paired} repetitions" if self.paired > 1 else ""
        if not self.decided:
            return (f"{self.upper.name} and {self.lower.name} tie{ratio and f' ({ratio[4:]} apart)'}"
                    f"{reps}: {self.open_reason()}")
        return f"{self.upper.name} leads {self.lower.name}{ratio} ({self.how_text()})"

    def how_text(self) -> str:
        """How it was decided, for a verdict line: 'rank test p = 0.014, 4 of 4 repetitions'."""
        reps = f", {self.wins} of {self.paired} repetitions" if self.paired > 1 else ""
        if self.how == "rank test":
            return f"rank test p = {self.p_value:.3f}{reps}"
        if self.how == "noise ranges apart":
            return f"noise ranges apart{reps}"
        if self.how == "gap":
            return f"{self.ratio:.2f}x apart{reps}"
        return self.open_reason()

    def open_reason(self, short: bool = False) -> str:
        """Why the pair is not decided: overlapping ranges, the repetitions, the rank test."""
        n, m = len(self.upper.ndrs), len(self.lower.ndrs)
        p = "" if self.p_value is None else f", rank test p = {self.p_value:.2f} > {ALPHA:g}"
        ranges = ""
        if self.upper.interval and self.lower.interval:
            ranges = (f"noise ranges {_mpps(self.upper.interval)} and "
                      f"{_mpps(self.lower.interval)} Mpps overlap, ")
        reps = (f"{n} repetition{'s' if n > 1 else ''} each" if n == m else
                f"{n} and {m} repetitions")
        tail = "" if short else "; not decided at 95 % confidence"
        return f"{ranges}{reps}{p}{tail}"


def _mpps(i: Interval) -> str:
    return f"{i[0] / 1e6:.3g}-{i[1] / 1e6:.3g}"


def rank_test(upper: Sequence[float], lower: Sequence[float]) -> float | None:
    """One-sided exact Mann-Whitney U p-value that `upper` is stochastically greater."""
    if len(upper) < 2 or len(lower) < 2:
        return None
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(upper, lower, alternative="greater", method="exact").pvalue)


def decide(a: Contender, b: Contender) -> PairDecision:
    upper, lower = (a, b) if a.median >= b.median else (b, a)
    paired = min(len(upper.ndrs), len(lower.ndrs))
    wins = sum(u > lo for u, lo in zip(upper.ndrs, lower.ndrs))
    p = rank_test(upper.ndrs, lower.ndrs)
    if p is not None and p <= ALPHA:
        return PairDecision(upper, lower, True, "rank test", p, wins, paired)
    if upper.interval and lower.interval and upper.interval[0] > lower.interval[1]:
        return PairDecision(upper, lower, True, "noise ranges apart", p, wins, paired)
    if lower.median > 0 and upper.median / lower.median >= TIE_MAX_RATIO:
        return PairDecision(upper, lower, True, "gap", p, wins, paired)
    return PairDecision(upper, lower, False, "open", p, wins, paired)


def adjacent(contenders: Sequence[Contender]) -> list[PairDecision]:
    """The decisions between neighbours in the order of median NDR (highest first)."""
    ordered = sorted((c for c in contenders if c.ndrs), key=lambda c: (-c.median, c.name))
    return [decide(x, y) for x, y in zip(ordered, ordered[1:])]
