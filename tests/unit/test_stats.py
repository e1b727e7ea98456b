"""stats.py: summaries, bootstrap intervals, noise warnings, outliers, steal time."""

import math
import random

import pytest

from vswbench.errors import UsageError
from vswbench.measure.stats import Summary
from vswbench.measure.stats import noise_warning
from vswbench.measure.stats import outliers
from vswbench.measure.stats import significant_difference
from vswbench.measure.stats import steal_fraction
from vswbench.measure.stats import summarize


def _noisy(center: float, spread: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(center, spread) for _ in range(n)]


# -- summarize -----------------------------------------------------------------------------------
def test_summary_exact_values_for_small_input():
    s = summarize([4.0, 1.0, 3.0, 2.0])
    assert s.n == 4
    assert s.median == 2.5
    assert s.mean == 2.5
    assert s.min == 1.0 and s.max == 4.0
    assert s.stdev == pytest.approx(math.sqrt(5 / 3))           # sample stdev (n - 1)
    assert s.cv == pytest.approx(math.sqrt(5 / 3) / 2.5)
    assert s.values == (4.0, 1.0, 3.0, 2.0)                     # raw, in the order given
    assert s.ci_level == 0.95


def test_summary_odd_count_and_integers():
    s = summarize([10, 30, 20])
    assert (s.median, s.mean, s.stdev) == (20.0, 20.0, 10.0)
    assert s.cv == pytest.approx(0.5)


def test_single_value():
    s = summarize([7.5])
    assert (s.n, s.median, s.mean, s.min, s.max, s.stdev) == (1, 7.5, 7.5, 7.5, 7.5, 0.0)
    assert s.cv is None
    assert s.ci_low == s.ci_high == 7.5


def test_cv_none_for_zero_mean():
    s = summarize([-1.0, 1.0])
    assert s.mean == 0 and s.cv is None


def test_ci_is_deterministic_and_seeded():
    values = _noisy(100.0, 5.0, 20, seed=3)
    a, b = summarize(values), summarize(values)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    # bootstrap medians are order statistics of the data: another seed may well give the same
    # interval, so only its bounds are checked
    c = summarize(values, seed=2)
    assert min(values) <= c.ci_low <= c.median <= c.ci_high <= max(values)


def test_ci_contains_median_and_narrows_with_more_data():
    small = summarize(_noisy(100.0, 5.0, 10, seed=4))
    large = summarize(_noisy(100.0, 5.0, 400, seed=4))
    for s in (small, large):
        assert s.ci_low <= s.median <= s.ci_high
        assert s.min <= s.ci_low and s.ci_high <= s.max
    assert large.ci_high - large.ci_low < (small.ci_high - small.ci_low) / 2


def test_higher_level_gives_wider_interval():
    values = _noisy(50.0, 3.0, 30, seed=5)
    narrow, wide = summarize(values, ci_level=0.5), summarize(values, ci_level=0.99)
    assert wide.ci_low <= narrow.ci_low and narrow.ci_high <= wide.ci_high


def test_worst_and_best():
    s = summarize([3.0, 1.0, 2.0])
    assert s.worst(higher_is_better=True) == 1.0        # throughput: the lowest
    assert s.best(higher_is_better=True) == 3.0
    assert s.worst(higher_is_better=False) == 3.0       # latency: the highest
    assert s.best(higher_is_better=False) == 1.0


def test_to_json_is_plain():
    data = summarize([1.0, 2.0]).to_json()
    assert set(data) == {"n", "median", "mean", "min", "max", "stdev", "cv", "ci_low", "ci_high",
                         "ci_level", "values"}
    assert data["values"] == [1.0, 2.0]


@pytest.mark.parametrize("values", [[], [1.0, float("nan")], [float("inf")], ["x"]])
def test_summarize_rejects_bad_input(values):
    with pytest.raises(UsageError):
        summarize(values)


@pytest.mark.parametrize("kwargs", [{"ci_level": 0.0}, {"ci_level": 1.0}, {"resamples": 0}])
def test_summarize_rejects_bad_parameters(kwargs):
    with pytest.raises(UsageError):
        summarize([1.0, 2.0], **kwargs)


# -- noise_warning -------------------------------------------------------------------------------
def _summary_with_cv(cv: float, n: int = 10) -> Summary:
    return Summary(n, 100.0, 100.0, 90.0, 110.0, cv * 100.0, cv, 95.0, 105.0, 0.95,
                   tuple([100.0] * n))


def test_noise_warning_silent_below_threshold():
    assert noise_warning("ndr_pps", _summary_with_cv(0.01)) is None
    assert noise_warning("ndr_pps", _summary_with_cv(0.05)) is None      # at the threshold
    assert noise_warning("ndr_pps", summarize([5.0])) is None             # cv undefined
    assert noise_warning("ndr_pps", _summary_with_cv(0.08), threshold=0.1) is None


def test_noise_warning_fires_above_threshold():
    w = noise_warning("ndr_pps", _summary_with_cv(0.123))
    assert w is not None
    assert "ndr_pps" in w and "12.3 %" in w
    for cause in ("interrupts", "frequency scaling", "steal", "too short"):
        assert cause in w
    for remedy in ("isolate", "governor", "longer trials", "more repetitions"):
        assert remedy in w
    assert "too few repetitions" not in w                     # n = 10


def test_noise_warning_names_few_repetitions_and_measured_steal():
    w = noise_warning("latency", _summary_with_cv(0.2, n=3), steal_fraction=0.042)
    assert w is not None
    assert "too few repetitions (3)" in w
    assert "4.2 %" in w
    quiet = noise_warning("latency", _summary_with_cv(0.2), steal_fraction=0.001)
    assert quiet is not None and "0.1 %" not in quiet


def test_noise_warning_from_real_data():
    s = summarize([100.0, 130.0, 80.0, 120.0, 90.0])
    assert noise_warning("x", s) is not None
    assert noise_warning("x", summarize([100.0, 100.5, 99.5, 100.2])) is None


# -- outliers ------------------------------------------------------------------------------------
def test_outliers_tukey_fences():
    values = [10.0, 11.0, 10.5, 9.8, 10.2, 10.1, 30.0, 9.9, 1.0]
    assert outliers(values) == [6, 8]


def test_no_outliers_in_tight_data_or_tiny_samples():
    assert outliers([10.0, 10.1, 9.9, 10.05, 9.95]) == []
    assert outliers([1.0, 100.0]) == []
    assert outliers([]) == []


def test_outliers_rejects_nan():
    with pytest.raises(UsageError):
        outliers([1.0, float("nan"), 2.0])


# -- significant_difference ----------------------------------------------------------------------
def test_detects_ten_percent_shift():
    a = _noisy(100.0, 1.0, 10, seed=10)
    b = _noisy(110.0, 1.1, 10, seed=11)
    low, high, significant = significant_difference(a, b)
    assert significant
    assert 1.0 < low <= high < 1.2
    assert (low + high) / 2 == pytest.approx(1.10, abs=0.02)
    low, high, significant = significant_difference(b, a)        # and downwards
    assert significant and high < 1.0


def test_same_distribution_is_not_significant():
    a = _noisy(100.0, 2.0, 20, seed=20)
    b = _noisy(100.0, 2.0, 20, seed=21)
    low, high, significant = significant_difference(a, b)
    assert not significant
    assert low <= 1.0 <= high
    assert significant_difference(a, a)[2] is False


def test_significance_needs_two_values_each_side():
    low, high, significant = significant_difference([100.0], [200.0])
    assert (low, high, significant) == (2.0, 2.0, False)
    assert significant_difference([100.0, 100.1], [200.0])[2] is False


def test_significant_difference_is_deterministic():
    a, b = _noisy(100.0, 3.0, 8, seed=1), _noisy(103.0, 3.0, 8, seed=2)
    assert significant_difference(a, b) == significant_difference(a, b)


@pytest.mark.parametrize("a,b", [([], [1.0]), ([1.0], []), ([0.0, 1.0], [1.0]),
                                 ([1.0, float("nan")], [1.0])])
def test_significant_difference_rejects_bad_input(a, b):
    with pytest.raises(UsageError):
        significant_difference(a, b)


# -- steal_fraction ------------------------------------------------------------------------------
STAT_BEFORE = """cpu  1000 0 500 8000 100 10 40 50 0 0
cpu0 500 0 250 4000 50 5 20 25 0 0
cpu1 500 0 250 4000 50 5 20 25 0 0
intr 12345
"""
STAT_AFTER = """cpu  1300 0 600 8500 100 20 60 150 30 0
cpu0 650 0 300 4250 50 10 30 75 15 0
cpu1 650 0 300 4250 50 10 30 75 15 0
intr 23456
"""


def test_steal_fraction_from_aggregate_line():
    # deltas: user 300, system 100, idle 500, irq 10, softirq 20, steal 100 -> 1030 jiffies;
    # guest (30) is already inside user and is not counted twice
    assert steal_fraction(STAT_BEFORE, STAT_AFTER) == pytest.approx(100 / 1030)


def test_steal_fraction_none_when_unusable():
    assert steal_fraction(STAT_BEFORE, STAT_BEFORE) is None              # no time passed
    assert steal_fraction("garbage", STAT_AFTER) is None
    assert steal_fraction(STAT_AFTER, STAT_BEFORE) is None               # counters went back
    assert steal_fraction("cpu  1 2 3 4 5 6 7\n", "cpu  2 3 4 5 6 7 8\n") is None  # no steal
    assert steal_fraction("cpu  1 2 x 4 5 6 7 8\n", STAT_AFTER) is None


def test_steal_fraction_zero_on_bare_metal():
    before = "cpu  100 0 100 1000 0 0 0 0 0 0\n"
    after = "cpu  200 0 150 1800 0 0 0 0 0 0\n"
    assert steal_fraction(before, after) == 0.0
