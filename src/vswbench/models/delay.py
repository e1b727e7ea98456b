"""The empirical packet-processing delay model of Sattar and Matrawy (section IV).

The paper counts how often each processing time occurs, divides by the number of samples N
(relative frequencies f = PT / N, its eq. 1) and accumulates them into an empirical CDF, one per
condition (data rate, packet size, switch). A simulator then draws delays from that ECDF. This
module does the same from vswbench's latency measurements:

- Input: the engine's latency histogram (engine/src/hist.c), kept with every trial as
  [low_ns, high_ns, count] buckets, or raw samples binned the same way. The histogram is
  log-linear: every value below 256 ns has its own bucket (1 ns wide); above, each power of two is
  split into 128 buckets, so a bucket is at most 1/128 (0.78 %) of its lower edge wide (about
  0.2 us at 25 us, 8 us at 1 ms). No engine change is needed: that is finer than the repeatability
  of any latency measured on these machines.
- Model: a bucket [low, high] of integer nanoseconds covers the interval [low, high + 1 ns), and
  its packets are spread uniformly over it. The CDF is therefore piecewise linear: exact at every
  bucket edge (there it equals the sample ECDF), linear inside a bucket, flat in the gaps between
  non-empty buckets. It is continuous and strictly increasing on its support, so its inverse (the
  quantile function) is well defined and inverse-transform sampling X = Q(U), U ~ U(0, 1) draws
  exactly from it.
- Kolmogorov-Smirnov distance: between two models, the sup of |F1 - F2| over the union of their
  bucket edges (both are linear between those, so the sup is attained there: the value is exact);
  between a model and n samples, the usual one-sample statistic against the piecewise-linear CDF.

The bound of the round-trip test (`dkw_bound`): n samples drawn from a model by inverse transform
are exact draws from its piecewise-linear CDF F, so by the Dvoretzky-Kiefer-Wolfowitz inequality
with Massart's constant, P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2). With
eps = sqrt(ln(2 / alpha) / (2 n)) and alpha = 0.001, the KS distance of the samples to the model
exceeds eps with probability at most 0.1 %; no discretisation term is needed because the samples
are compared with the same piecewise-linear CDF they were drawn from (n = 10 000: eps = 0.0195).

Between two measured conditions, `ks_critical` gives the two-sample critical value
c(alpha) sqrt((n + m) / (n m)) with c(alpha) = sqrt(-ln(alpha / 2) / 2). It is a guide, not a
test: latency samples of one trial are not independent (bursts, preemption), and a model's KS
distance is the sample statistic taken at the bucket edges only (a lower bound on it).

Export: `to_json` (versioned schema "vswbench.delay-model" 1: the condition, bucket edges in
microseconds, counts, relative frequencies and the ECDF) reloads with `from_json`, which checks
everything and names the first problem in a UsageError; `to_csv` writes quantiles (min, 0.1 % ..
99.9 %, max) for simulators that take a quantile table.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import fields
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from vswbench.errors import UsageError
from vswbench.saferead import read_text

SCHEMA = "vswbench.delay-model"
SCHEMA_VERSION = 1
ALPHA = 0.001                        # the significance level of the bounds below
HIST_SUB_BITS = 7                    # engine/src/hist.h: 128 buckets per power of two
EXACT_BELOW_NS = 256                 # values below this have their own 1-ns bucket
# The CSV's quantile grid: min, 0.1 %, 0.5 %, every percent, 99.5 %, 99.9 %, max.
QUANTILES = (0.0, 0.001, 0.005, *(k / 100 for k in range(1, 100)), 0.995, 0.999, 1.0)
SOURCES = ("engine histogram", "raw samples")


def dkw_bound(n: int, alpha: float = ALPHA) -> float:
    """sqrt(ln(2 / alpha) / (2 n)): the KS distance of n exact draws from a CDF to that CDF
    exceeds this with probability at most alpha (DKW inequality, Massart's constant)."""
    if n < 1 or not 0 < alpha < 1:
        raise UsageError(f"DKW bound of {n} samples at alpha {alpha}: need n >= 1, 0 < alpha < 1")
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def ks_critical(n: int, m: int, alpha: float = ALPHA) -> float:
    """The two-sample KS critical value c(alpha) sqrt((n + m) / (n m)) (large-sample form)."""
    if n < 1 or m < 1 or not 0 < alpha < 1:
        raise UsageError(f"KS critical value for {n} and {m} samples at alpha {alpha}: need "
                         "both counts >= 1, 0 < alpha < 1")
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def engine_buckets_ns(values_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the engine's bucket of each integer nanosecond value (hist.c index math)."""
    v = np.asarray(values_ns, dtype=np.int64)
    _, exp = np.frexp(np.maximum(v, 1).astype(np.float64))   # v = m 2^exp, m in [0.5, 1)
    e = np.where(v < EXACT_BELOW_NS, 0, exp.astype(np.int64) - 1 - HIST_SUB_BITS)
    low = (v >> e) << e
    return low, low + (np.int64(1) << e) - 1


@dataclass(frozen=True)
class DelayCondition:
    """What a delay model was measured under: the paper's variables (switch, frame size, rate)
    plus what else vswbench varies. `repetition` None means repetitions pooled (`repetitions`
    of them); `kind` is the point kind the histogram came from (latency, sweep, trial, samples)."""
    switch: str
    scenario: str
    frame_size: int | str
    variant: str = ""
    kind: str = "latency"
    offered_pps: float | None = None
    fraction_of_ndr: float | None = None
    repetition: int | None = None
    repetitions: int = 1

    @property
    def label(self) -> str:
        size = f"{self.frame_size} B" if isinstance(self.frame_size, int) else str(self.frame_size)
        if self.fraction_of_ndr is not None:
            at = f" at {self.fraction_of_ndr * 100:g} % NDR"
        elif self.offered_pps is not None:
            at = f" at {_pps(self.offered_pps)}pps"
        else:
            at = ""
        rep = f" #{self.repetition + 1}" if self.repetition is not None else ""
        return " ".join(x for x in (self.switch, self.scenario, size, self.variant) if x) + at + rep

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _pps(value: float) -> str:
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.4g}{suffix}"
    return f"{value:.4g}"


@dataclass(frozen=True)
class DelayModel:
    """The empirical delay distribution of one condition: non-empty bins [low_us, high_us) with
    their packet counts (sorted, not overlapping). Relative frequencies, ECDF, quantiles and
    samples all follow from these; construction checks them (UsageError naming the problem)."""
    condition: DelayCondition
    low_us: tuple[float, ...]
    high_us: tuple[float, ...]
    counts: tuple[int, ...]
    source: str = "engine histogram"

    def __post_init__(self) -> None:
        problem = _bins_problem(self.low_us, self.high_us, self.counts)
        if problem:
            raise UsageError(f"delay model of {self.condition.label}: {problem}")

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_histogram(cls, buckets: Iterable[Sequence[float]],
                       condition: DelayCondition) -> DelayModel:
        """From the engine's [low_ns, high_ns, count] buckets (several histograms may be
        concatenated: equal buckets are added up, empty ones dropped)."""
        merged: dict[tuple[float, float], int] = {}
        for b in buckets:
            if len(b) != 3:
                raise UsageError(f"histogram bucket {list(b)!r}: expected [low_ns, high_ns, count]")
            low, high, count = float(b[0]), float(b[1]), int(b[2])
            if count < 0 or not (math.isfinite(low) and math.isfinite(high)) or high < low:
                raise UsageError(f"histogram bucket {list(b)!r}: need 0 <= count, low <= high")
            if count:
                merged[(low, high)] = merged.get((low, high), 0) + count
        if not merged:
            raise UsageError(f"no latency samples for {condition.label}: the histogram is empty")
        keys = sorted(merged)
        return cls(condition, tuple(lo / 1000.0 for lo, _ in keys),
                   tuple((hi + 1) / 1000.0 for _, hi in keys),
                   tuple(merged[k] for k in keys), "engine histogram")

    @classmethod
    def from_samples(cls, samples_us: Iterable[float], condition: DelayCondition) -> DelayModel:
        """From raw per-packet latencies in microseconds, rounded to integer nanoseconds and
        binned as the engine bins them: the same samples give the same model either way."""
        us = np.asarray(list(samples_us), dtype=np.float64)
        if us.size == 0:
            raise UsageError(f"no latency samples for {condition.label}")
        if not np.all(np.isfinite(us)) or np.any(us < 0):
            raise UsageError(f"latency samples of {condition.label}: all must be finite and >= 0")
        low, high = engine_buckets_ns(np.rint(us * 1000.0))
        keys, counts = np.unique(np.stack([low, high], axis=1), axis=0, return_counts=True)
        model = cls.from_histogram([(lo, hi, c) for (lo, hi), c in zip(keys.tolist(),
                                                                       counts.tolist())],
                                   condition)
        return DelayModel(condition, model.low_us, model.high_us, model.counts, "raw samples")

    # -- the distribution ----------------------------------------------------------------------
    @property
    def samples(self) -> int:
        return sum(self.counts)

    @cached_property
    def _lo(self) -> np.ndarray:
        return np.asarray(self.low_us, dtype=np.float64)

    @cached_property
    def _hi(self) -> np.ndarray:
        return np.asarray(self.high_us, dtype=np.float64)

    @cached_property
    def _cum(self) -> np.ndarray:
        """Cumulative fraction at each bin's lower edge, then 1.0 (length bins + 1)."""
        c = np.concatenate(([0], np.cumsum(np.asarray(self.counts, dtype=np.int64))))
        return np.asarray(c / c[-1], dtype=np.float64)

    @property
    def relative_frequencies(self) -> tuple[float, ...]:
        """f = PT / N per bin (the paper's eq. 1)."""
        n = self.samples
        return tuple(c / n for c in self.counts)

    @property
    def ecdf(self) -> tuple[float, ...]:
        """Cumulative relative frequency at each bin's upper edge (the last is 1)."""
        return tuple(float(x) for x in self._cum[1:])

    def cdf(self, x_us: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """The piecewise-linear CDF at x (microseconds)."""
        x = np.atleast_1d(np.asarray(x_us, dtype=np.float64))
        i = np.searchsorted(self._lo, x, side="right") - 1
        j = np.clip(i, 0, len(self.counts) - 1)
        inside = np.clip((x - self._lo[j]) / (self._hi[j] - self._lo[j]), 0.0, 1.0)
        f = self._cum[j] + (self._cum[j + 1] - self._cum[j]) * inside
        return np.where(i < 0, 0.0, f)

    def quantile(self, p: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """The inverse of the CDF: Q(0) is the lowest edge, Q(1) the highest (microseconds)."""
        q = np.atleast_1d(np.asarray(p, dtype=np.float64))
        if np.any(~np.isfinite(q)) or np.any(q < 0) or np.any(q > 1):
            raise UsageError("quantile probabilities must be within [0, 1]")
        i = np.minimum(np.searchsorted(self._cum[1:], q, side="left"), len(self.counts) - 1)
        inside = np.clip((q - self._cum[i]) / (self._cum[i + 1] - self._cum[i]), 0.0, 1.0)
        return np.asarray(self._lo[i] + inside * (self._hi[i] - self._lo[i]), dtype=np.float64)

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """n delays (us) by inverse transform: Q(U), U uniform; linear within a bin."""
        if n < 0:
            raise UsageError(f"cannot draw {n} samples")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return self.quantile(gen.random(n))

    def ks_samples(self, samples_us: Sequence[float] | np.ndarray) -> float:
        """One-sample KS distance sup |F_n - F| of samples to this model's CDF."""
        x = np.sort(np.asarray(samples_us, dtype=np.float64))
        if x.size == 0:
            raise UsageError("KS distance of no samples")
        f = self.cdf(x)
        k = np.arange(1, x.size + 1) / x.size
        return float(max(np.max(k - f), np.max(f - (k - 1 / x.size))))

    def ks(self, other: DelayModel) -> float:
        """KS distance between two models: exact, the CDFs being linear between their edges."""
        edges = np.union1d(np.concatenate([self._lo, self._hi]),
                           np.concatenate([other._lo, other._hi]))
        return float(np.max(np.abs(self.cdf(edges) - other.cdf(edges))))

    # -- export --------------------------------------------------------------------------------
    def quantile_table(self, probabilities: Sequence[float] = QUANTILES
                       ) -> list[tuple[float, float]]:
        return list(zip(probabilities, self.quantile(probabilities).tolist()))

    def to_csv(self, probabilities: Sequence[float] = QUANTILES) -> str:
        """probability,latency_us rows (0 is the minimum of the support, 1 the maximum)."""
        rows = ["probability,latency_us"]
        rows += [f"{p:g},{x:.4f}" for p, x in self.quantile_table(probabilities)]
        return "\n".join(rows) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "version": SCHEMA_VERSION,
                "model": "empirical delay (Sattar and Matrawy): relative frequencies and ECDF",
                "condition": self.condition.to_json(), "label": self.condition.label,
                "unit": "us", "interpolation": "linear within a bin", "source": self.source,
                "samples": self.samples,
                "bins": {"low_us": list(self.low_us), "high_us": list(self.high_us),
                         "count": list(self.counts),
                         "relative_frequency": list(self.relative_frequencies),
                         "ecdf": list(self.ecdf)}}

    @classmethod
    def from_json(cls, data: Any, source: str = "delay model JSON") -> DelayModel:
        """The inverse of to_json; any problem is a UsageError naming it and `source`."""
        return _parse(data, source)


# -- validation --------------------------------------------------------------------------------
def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _bins_problem(low: Sequence[Any], high: Sequence[Any], counts: Sequence[Any]) -> str | None:
    if not (len(low) == len(high) == len(counts)):
        return (f"bins.low_us, bins.high_us and bins.count must have the same length (they have "
                f"{len(low)}, {len(high)} and {len(counts)})")
    if not counts:
        return "no bins: a delay model needs at least one sample"
    for i, (lo, hi, c) in enumerate(zip(low, high, counts)):
        if not (_is_num(lo) and _is_num(hi)) or not 0 <= lo < hi:
            return f"bin {i}: edges [{lo!r}, {hi!r}) must be numbers with 0 <= low < high"
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            return f"bin {i}: count {c!r} must be a positive integer (empty bins are left out)"
        if i and lo < high[i - 1]:
            return (f"bin {i}: starts at {lo!r} us, before bin {i - 1} ends ({high[i - 1]!r} us): "
                    "bins must be sorted and must not overlap")
    return None


def _field(data: dict[str, Any], key: str, where: str, kinds: tuple[type, ...]) -> Any:
    if key not in data:
        raise UsageError(f"{where}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise UsageError(f"{where}: field {key!r} is {value!r}, expected {names}")
    return value


def _condition(raw: Any, where: str) -> DelayCondition:
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: 'condition' must be an object")
    known = {f.name for f in fields(DelayCondition)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise UsageError(f"{where}: unknown condition field(s) {', '.join(unknown)}")
    w = f"{where}: condition"
    none = type(None)
    return DelayCondition(
        _field(raw, "switch", w, (str,)), _field(raw, "scenario", w, (str,)),
        _field(raw, "frame_size", w, (int, str)), raw.get("variant", ""),
        _field(raw, "kind", w, (str,)), _field(raw, "offered_pps", w, (int, float, none)),
        _field(raw, "fraction_of_ndr", w, (int, float, none)),
        _field(raw, "repetition", w, (int, none)), raw.get("repetitions", 1))


def _parse(data: Any, where: str) -> DelayModel:
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(data).__name__}")
    _check_header(data, where)
    cond = _condition(data.get("condition"), where)
    if not isinstance(cond.variant, str) or isinstance(cond.repetitions, bool) or not (
            isinstance(cond.repetitions, int) and cond.repetitions >= 1):
        raise UsageError(f"{where}: condition variant must be text, repetitions an integer >= 1")
    bins = data.get("bins")
    if not isinstance(bins, dict):
        raise UsageError(f"{where}: missing 'bins' object")
    low, high, count = _bin_columns(bins, where)
    src = data.get("source", "engine histogram")
    if src not in SOURCES:
        raise UsageError(f"{where}: source {src!r}, expected one of {', '.join(SOURCES)}")
    model = DelayModel(cond, tuple(float(x) for x in low), tuple(float(x) for x in high),
                       tuple(count), src)
    if data.get("samples") != model.samples:
        raise UsageError(f"{where}: samples is {data.get('samples')!r} but the bin counts add up "
                         f"to {model.samples}")
    _check_derived(bins, model, where)
    return model


def _check_header(data: dict[str, Any], where: str) -> None:
    """The schema, its version and the unit a model file must name."""
    if data.get("schema") != SCHEMA:
        raise UsageError(f"{where}: not a vswbench delay model (schema {data.get('schema')!r}, "
                         f"expected {SCHEMA!r}): give a file `vswbench model delay` wrote")
    version = data.get("version")
    if version != SCHEMA_VERSION:
        raise UsageError(f"{where}: delay model version {version!r}; this vswbench reads version "
                         f"{SCHEMA_VERSION} (upgrade vswbench for newer files)")
    if data.get("unit") != "us":
        raise UsageError(f"{where}: unit {data.get('unit')!r}, expected 'us'")


def _bin_columns(bins: dict[str, Any], where: str) -> tuple[list[Any], list[Any], list[Any]]:
    """bins.low_us, high_us and count, each a list, checked together (_bins_problem)."""
    cols: list[list[Any]] = []
    for k in ("low_us", "high_us", "count"):
        v = bins.get(k)
        if not isinstance(v, list):
            raise UsageError(f"{where}: bins.{k} must be a list")
        cols.append(v)
    problem = _bins_problem(cols[0], cols[1], cols[2])
    if problem:
        raise UsageError(f"{where}: {problem}")
    return cols[0], cols[1], cols[2]


def _check_derived(bins: dict[str, Any], model: DelayModel, where: str) -> None:
    """bins.relative_frequency and bins.ecdf, where given, agree with the counts."""
    for key, expected in (("relative_frequency", model.relative_frequencies),
                          ("ecdf", model.ecdf)):
        given = bins.get(key)
        if given is None:
            continue
        if not isinstance(given, list) or len(given) != len(expected):
            raise UsageError(f"{where}: bins.{key} must be a list of {len(expected)} numbers")
        for i, (g, e) in enumerate(zip(given, expected)):
            if not _is_num(g) or abs(g - e) > 1e-9:
                raise UsageError(f"{where}: bins.{key}[{i}] is {g!r} but the counts give {e:.12g}")


def dumps(data: Any) -> str:
    """JSON with two-space structure but every list of plain values on one line: a model file
    stays a few screens long and diffs by field."""
    text = json.dumps(data, indent=1)
    return re.sub(r"\[[^\[\]{}\"]*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(0)[1:-1].split(",")
                                            if x.strip()) + "]", text) + "\n"


def load_json(path: str | Path) -> DelayModel:
    """Read a model file written by `vswbench model delay` (or to_json)."""
    p = Path(path)
    text = read_text(p, "JSON", fix="give a model file `vswbench model delay` wrote")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{p}: not valid JSON ({e.msg} at line {e.lineno}, column "
                         f"{e.colno})") from None
    return DelayModel.from_json(data, str(p))
