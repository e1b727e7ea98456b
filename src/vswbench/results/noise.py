"""How uncertain a single search is, and how much whole runs move: the noise models of results/compare.py.

Two facts measured on this project's 2-vCPU VMs shape them (two `vswbench run --suite quick` runs
four minutes apart, nothing changed between them, 2026-11-22):

1. Within one search, a switch that drops a burst now and then (a vCPU preempted for a few
   hundred microseconds overflows a ring at any load) passes and fails trials over a range of
   loads, not at one edge: testpmd at 64 B failed a trial at 2.10 Mpps and passed one at 4.52
   Mpps in the same search. The NDR the search reports is one point of that range; another
   search lands elsewhere in it. `transition_interval` is the range the trials themselves show:
   from the lowest load any trial failed at to the highest load any trial passed at (with the
   search's own bounds). Two single searches whose ranges overlap are not told apart.
2. Between runs the whole machine moves: in the second run 12 of 13 switches measured 2-66 %
   more (median +12 %), the intervals of (1) did not overlap for 15 of 44 figures, and one
   switch measured 30 % less. A common shift of every point is the machine (its host's load,
   its frequency), not any switch. `common_shift` estimates it as the median log ratio over the
   run's points, and the scatter around it by the median absolute deviation. A point is set apart
   from the rest only when its modified z-score |0.6745 (r - median) / MAD| exceeds 3.5, the
   outlier rule of Iglewicz and Hoaglin (1993). The point's own uncertainty, half the log width
   of each side's transition interval, adds to the scatter in quadrature (Shift.z).

Both make single measurements conservative: they flag what stands out from a run's own noise,
and say so. Repetitions (`repetitions = N` in a spec) replace both with a bootstrap interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SINGLE_SEARCH_NOISE = 0.10  # ten fast searches of the bridge: CV 3.8 %; 1.96 x sqrt(2) x 3.8 %
# Per preset, how far two single searches of one switch may differ by noise alone. The quick
# preset's quarter-second trials and 5 % width spread far more than fast's: over three quick
# runs of this VM one switch's NDR moved 1.2-1.5x between runs (median of 14 kernel
# switch-sizes 1.49x with host-stall trials repeated, bench/reproducibility); 30 % keeps a
# single pair of quick searches from being decided on a gap the next run reverses (the rank test
# over repetitions, or a 1.5x gap, decides such pairs instead).
# brief: not measured apart; quick's, whose trials it shares (its groups are ranked by rounds)
PRESET_NOISE = {"fast": SINGLE_SEARCH_NOISE, "quick": 0.30, "brief": 0.30}


def search_noise(preset: str | None) -> float:
    """The single-search noise band of a preset (fast's for the others: longer trials)."""
    return PRESET_NOISE.get(preset or "fast", SINGLE_SEARCH_NOISE)

MIN_POINTS_FOR_SHIFT = 6     # fewer figures say too little about a run's scatter
OUTLIER_Z = 3.5              # Iglewicz & Hoaglin's modified z-score limit
MAD_TO_SIGMA = 1.4826        # MAD x this = sigma for normal data (scipy's scale="normal")


def transition_interval(result: Mapping[str, Any], goal: str) -> tuple[float, float] | None:
    """[low, high] in pps where the search's trials for `goal` ("NDR", "PDR") were mixed: the
    lowest load that failed the goal's loss ratio and the highest that passed it, widened to the
    goal's own [lower, upper] bound. Unsent frames count as lost, as in the search. None when
    the result carries no goals or trials (older stores)."""
    spec = next((g for g in result.get("goals") or [] if g.get("name") == goal), None)
    trials = result.get("trials") or []
    if spec is None or not trials:
        return None
    lower = spec.get("lower_bound_pps")
    upper = spec.get("upper_bound_pps") or lower
    if not isinstance(lower, (int, float)):
        return None
    ratio = float(spec.get("loss_ratio") or 0.0)
    failed: list[float] = []
    passed: list[float] = []
    for t in trials:
        count = t.get("intended_count") or 0
        lost = (t.get("lost") or 0) + (t.get("unsent") or 0)
        load = t.get("intended_pps")
        if not isinstance(load, (int, float)) or count <= 0:
            continue
        (failed if lost > ratio * count else passed).append(float(load))
    low = min([float(lower), *failed]) if failed else float(lower)
    high = max([float(upper), *passed]) if passed else float(upper)
    return low, high


def half_log_width(interval: tuple[float, float]) -> float:
    low, high = interval
    return math.log(high / low) / 2 if low > 0 and high >= low else 0.0


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


@dataclass(frozen=True)
class Shift:
    """The common move of a metric between two runs, over `points` single figures."""
    metric: str
    points: int
    ratio: float        # exp(median log ratio): 1.12 = run B measured 12 % more overall
    scale: float        # MAD x 1.4826 of the log ratios: their scatter around the median

    def z(self, ratio: float, *ranges: tuple[float, float] | None) -> float:
        """Modified z-score of one point's ratio against the run's common shift. The point's own
        uncertainty adds in quadrature to the run's scatter: half the log width of each search's
        transition interval (a search whose trials were mixed from 1.8 to 3.0 Mpps knows its
        figure to about +-25 %, whatever the other points did)."""
        if ratio <= 0:
            return math.inf
        own = sum(half_log_width(r) ** 2 for r in ranges if r is not None)
        spread = math.sqrt(self.scale ** 2 + own)
        return (math.log(ratio) - math.log(self.ratio)) / spread if spread else math.inf

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "points": self.points, "ratio": round(self.ratio, 5),
                "scatter": round(self.scale, 5)}

    def describe(self) -> str:
        return (f"{self.metric}: run B measured {(self.ratio - 1) * 100:+.1f} % overall (median "
                f"over {self.points} points), scatter around it {self.scale * 100:.1f} % (MAD)")


def median_abs_deviation(xs: Sequence[float]) -> float:
    """The median absolute deviation scaled to a normal sigma (scipy.stats'
    median_abs_deviation with scale="normal", without loading scipy for it: the same floats)."""
    med = statistics.median(xs)
    return statistics.median(abs(x - med) for x in xs) / _NORMAL_Q3


_NORMAL_Q3 = statistics.NormalDist().inv_cdf(0.75)   # 0.6744897501960817: scipy's scale


def common_shift(metric: str, ratios: Sequence[float], noise: float) -> Shift | None:
    """Median and robust scatter of the log ratios, or None with too few points. The scatter is
    never taken below the noise band / 3.5, so a run whose points all agree still needs a point
    to leave the noise band to stand out."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    if len(logs) < MIN_POINTS_FOR_SHIFT:
        return None
    med = statistics.median(logs)
    mad = median_abs_deviation(logs)
    scale = max(mad, math.log1p(noise) / OUTLIER_Z)
    return Shift(metric, len(logs), math.exp(med), scale)


__all__ = ["MIN_POINTS_FOR_SHIFT", "OUTLIER_Z", "PRESET_NOISE", "SINGLE_SEARCH_NOISE", "search_noise",
           "Shift", "common_shift", "half_log_width", "overlap",
           "transition_interval"]
