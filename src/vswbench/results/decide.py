"""Is one switch faster than the next? A pair of setups decided at 95 % confidence, or left open.

Two ways decide a pair, both stated with the verdict:

- the rank test over repetitions (each a fresh testbed): the exact one-sided Mann-Whitney U test
  of scipy.stats (`mannwhitneyu(..., alternative="greater", method="exact")`) at p <= ALPHA. With
  every repetition of one above every repetition of the other that needs 3 against 3 (p = 0.05);
  2 against 2 can never decide (p = 0.17);
- the noise ranges of the searches (results/noise.py transition_interval: the loads over which
  a search's trials were mixed): when the hull of every repetition's range of one lies wholly
  above the other's, no repetition overlapped, and the pair is decided as `vswbench compare`
  decides two single searches.

Anything else is open: the campaign runner's decide phase repeats both (randomised, interleaved:
RMIT) while its budget lasts, and a pair still open at the end is a tie whose reason says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05                       # 95 % confidence
Interval = tuple[float, float]


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
    how: str                         # "rank test", "noise ranges apart" or "open"
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
        if self.how == "rank test":
            why = f" (rank test p = {self.p_value:.3f})"
        elif self.how == "noise ranges apart":
            why = " (their searches' noise ranges do not overlap)"
        else:
            return (f"{self.upper.name} and {self.lower.name} tie{ratio and f' ({ratio[4:]} apart)'}"
                    f"{reps}: {self.open_reason()}")
        return f"{self.upper.name} leads {self.lower.name}{ratio}{reps}{why}"

    def open_reason(self) -> str:
        n, m = len(self.upper.ndrs), len(self.lower.ndrs)
        p = "" if self.p_value is None else f", rank test p = {self.p_value:.2f} > {ALPHA:g}"
        ranges = ""
        if self.upper.interval and self.lower.interval:
            ranges = (f"noise ranges {_mpps(self.upper.interval)} and "
                      f"{_mpps(self.lower.interval)} Mpps overlap, ")
        return f"{ranges}{n} and {m} repetitions{p}; not decided at 95 % confidence"


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
    return PairDecision(upper, lower, False, "open", p, wins, paired)


def adjacent(contenders: Sequence[Contender]) -> list[PairDecision]:
    """The decisions between neighbours in the order of median NDR (highest first)."""
    ordered = sorted((c for c in contenders if c.ndrs), key=lambda c: (-c.median, c.name))
    return [decide(x, y) for x, y in zip(ordered, ordered[1:])]
