"""Statistics over repetitions of one measurement (a search, a trial, a back-to-back burst search).

A benchmark repeated N times gives N numbers; this module says what they are together:

  - the centre (median, mean) and spread (min, max, sample standard deviation, coefficient of
    variation), and RFC 8204's worst-of-N / best-of-N (section 3.3 of RFC 8204 asks for the worst
    of the repetitions as the conservative result);
  - a bootstrap percentile confidence interval of the median (resampling with replacement, like
    hyperfine's and criterion's reports): no assumption of normality, which benchmark data rarely
    meets (it is skewed: interference only ever makes a run slower);
  - Tukey's fences for outliers (1.5 x IQR outside the quartiles), to warn as hyperfine does;
  - a bootstrap test of "is B different from A" on the ratio of the medians;
  - a plain-language warning when the repetitions disagree too much to be trusted, with the likely
    causes on a Linux host (interference, frequency scaling, VM steal time, short trials);
  - the fraction of CPU time stolen by the hypervisor between two /proc/stat samples.

The bootstrap intervals are scipy.stats.bootstrap's (percentile method, each sample resampled
independently), the quartiles numpy's (linear interpolation, Hyndman and Fan type 7). Everything
is deterministic: the bootstrap draws from `numpy.random.default_rng(seed)`, so the same values
give the same interval on every run (and in the tests).
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vswbench.errors import UsageError

FEW_REPETITIONS = 5          # below this, "run more repetitions" is named as a cause of noise
STEAL_WORTH_NAMING = 0.01    # measured steal above 1 % of CPU time is named in the warning
TUKEY_K = 1.5


@dataclass(frozen=True)
class Summary:
    """N repetitions of one metric, summarized.

    `stdev` is the sample standard deviation (N - 1 in the denominator), 0 for a single value.
    `cv` is stdev / |mean|: None when it means nothing (one value, or a mean of zero).
    `ci_low`..`ci_high` is the bootstrap percentile confidence interval of the median at
    `ci_level` (0.95 = 95 %); for one value it is that value.
    """
    n: int
    median: float
    mean: float
    min: float
    max: float
    stdev: float
    cv: float | None
    ci_low: float
    ci_high: float
    ci_level: float
    values: tuple[float, ...]

    def worst(self, higher_is_better: bool) -> float:
        """RFC 8204 worst-of-N: the minimum of a throughput, the maximum of a latency."""
        return self.min if higher_is_better else self.max

    def best(self, higher_is_better: bool) -> float:
        """Best-of-N: the maximum of a throughput, the minimum of a latency."""
        return self.max if higher_is_better else self.min

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median": self.median, "mean": self.mean, "min": self.min,
                "max": self.max, "stdev": self.stdev, "cv": self.cv, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "ci_level": self.ci_level, "values": list(self.values)}


def _checked(values: Sequence[float], what: str = "values") -> list[float]:
    """Floats from `values`; UsageError for NaN or an infinity (they poison every statistic)."""
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise UsageError(f"{what}: {v!r} is not a number") from None
        if math.isnan(f) or math.isinf(f):
            raise UsageError(f"{what}: {f} is not a finite number (a failed measurement?)")
        out.append(f)
    return out


def _check_level(level: float, resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise UsageError(f"confidence level {level}: must be between 0 and 1 (e.g. 0.95)")
    if resamples < 1:
        raise UsageError(f"{resamples} bootstrap resamples: need at least 1")


def _bootstrap(samples: tuple[list[float], ...], statistic: Any, level: float, resamples: int,
               seed: int) -> tuple[float, float]:
    """scipy.stats.bootstrap's percentile interval of `statistic` over independent resamples of
    each sample (a sample whose values are all equal gives a degenerate interval, not a NaN).
    A single value resamples to itself: it is given to scipy twice (scipy wants two)."""
    # numpy and scipy load when used: 0.1 s and 0.6 s that no start-up should pay
    # (tests/unit/test_startup.py)
    import numpy as np
    from scipy import stats as sps

    samples = tuple(x * 2 if len(x) == 1 else x for x in samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # "degenerate" bootstrap distributions: all equal
        res = sps.bootstrap(tuple(np.asarray(x) for x in samples), statistic, n_resamples=resamples,
                            confidence_level=level, method="percentile", vectorized=True,
                            rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):             # every resample gave the same value
        value = float(statistic(*(np.asarray(x) for x in samples), axis=-1))
        return value, value
    return low, high


def _median(x: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.median(x, axis=axis)


def _ratio_of_medians(a: Any, b: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.median(b, axis=axis) / np.median(a, axis=axis)


def summarize(values: Sequence[float], *, ci_level: float = 0.95, resamples: int = 2000,
              seed: int = 1) -> Summary:
    """Summary of repeated measurements (see Summary). UsageError for no values or NaN."""
    data = _checked(values)
    if not data:
        raise UsageError("no values to summarize (did every repetition fail?)")
    _check_level(ci_level, resamples)
    n = len(data)
    median = statistics.median(data)
    mean = statistics.fmean(data)
    stdev = statistics.stdev(data) if n >= 2 else 0.0
    cv = stdev / abs(mean) if n >= 2 and mean != 0 else None
    if n == 1:
        ci_low = ci_high = data[0]
    else:
        ci_low, ci_high = _bootstrap((data,), _median, ci_level, resamples, seed)
    return Summary(n, median, mean, min(data), max(data), stdev, cv, ci_low, ci_high, ci_level,
                   tuple(data))


def noise_warning(metric: str, s: Summary, *, threshold: float = 0.05,
                  steal_fraction: float | None = None) -> str | None:
    """One sentence when the repetitions of `metric` vary more than `threshold` (coefficient of
    variation, 0.05 = 5 %): the likely causes and what to do. None when they agree (or when the
    CV is undefined: a single repetition, a mean of zero).

    `steal_fraction` is the measured share of CPU time the hypervisor gave to other guests during
    the repetitions (see `steal_fraction()`); above 1 % it is named first, with its value.
    """
    if threshold < 0:
        raise UsageError(f"noise threshold {threshold}: must not be negative")
    if s.cv is None or s.cv <= threshold:
        return None
    causes = []
    if steal_fraction is not None and steal_fraction > STEAL_WORTH_NAMING:
        causes.append(f"VM steal time ({steal_fraction * 100:.1f} % of CPU time was measured "
                      "as stolen by the hypervisor)")
    causes.append("other processes or interrupts on the tester or switch cores")
    causes.append("CPU frequency scaling or turbo")
    if steal_fraction is None or steal_fraction <= STEAL_WORTH_NAMING:
        causes.append("VM steal time if this is a virtual machine")
    causes.append("trials too short to average out short disturbances")
    if s.n < FEW_REPETITIONS:
        causes.append(f"too few repetitions ({s.n}) to tell noise from a trend")
    listed = f"{', '.join(causes[:-1])} or {causes[-1]}"
    return (f"{metric} varies by {s.cv * 100:.1f} % between {s.n} repetitions (coefficient of "
            f"variation, above the {threshold * 100:g} % threshold), likely from {listed}: "
            "isolate the cores used (isolcpus or cpusets, IRQ affinity away from them), fix the "
            "CPU governor to performance with turbo off, use longer trials and more "
            "repetitions.")


def outliers(values: Sequence[float]) -> list[int]:
    """Indices of the values outside Tukey's fences: below Q1 - 1.5 IQR or above Q3 + 1.5 IQR
    (quartiles by linear interpolation). Fewer than 3 values have no outliers."""
    data = _checked(values)
    if len(data) < 3:
        return []
    import numpy as np

    q1, q3 = (float(q) for q in np.percentile(data, [25, 75]))
    iqr = q3 - q1
    low, high = q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr
    return [i for i, v in enumerate(data) if v < low or v > high]


def significant_difference(a: Sequence[float], b: Sequence[float], *, level: float = 0.95,
                           resamples: int = 2000, seed: int = 1) -> tuple[float, float, bool]:
    """Is B different from A? The bootstrap percentile interval of median(B) / median(A), each
    side resampled independently, and whether 1.0 lies outside it.

    Returns (ci_low, ci_high, significant). With fewer than 2 values on either side the interval
    is computed but never called significant (one value says nothing of the spread). A's values
    (the baseline, the denominator) must be positive: a ratio to zero or across signs means
    nothing.
    """
    xa, xb = _checked(a, "baseline values"), _checked(b, "compared values")
    if not xa or not xb:
        raise UsageError("significant_difference needs values on both sides")
    if min(xa) <= 0:
        raise UsageError("significant_difference: the baseline values must all be positive "
                         "(the ratio of medians divides by them)")
    _check_level(level, resamples)
    low, high = _bootstrap((xa, xb), _ratio_of_medians, level, resamples, seed)
    significant = len(xa) >= 2 and len(xb) >= 2 and not low <= 1.0 <= high
    return low, high, significant


def _aggregate_cpu(text: str) -> list[int] | None:
    """The first 8 counters of the aggregate `cpu ` line of /proc/stat (user nice system idle
    iowait irq softirq steal), None if absent or malformed (kernels before 2.6.11 lack steal)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            try:
                values = [int(v) for v in parts[1:9]]
            except ValueError:
                return None
            return values if len(values) == 8 else None
    return None


def steal_fraction(before: str, after: str) -> float | None:
    """Fraction (0..1) of the CPU time elapsed between two /proc/stat texts that was steal (the
    hypervisor ran something else while this guest wanted the CPU).

    Elapsed time is the sum of user, nice, system, idle, iowait, irq, softirq and steal over all
    CPUs; guest and guest_nice are left out because the kernel already counts them in user and
    nice. None if either text is unparsable, the counters went backwards, or no time passed.
    """
    a, b = _aggregate_cpu(before), _aggregate_cpu(after)
    if a is None or b is None:
        return None
    deltas = [y - x for x, y in zip(a, b)]
    if any(d < 0 for d in deltas):
        return None
    total = sum(deltas)
    if total <= 0:
        return None
    return deltas[7] / total
