"""Typed rows for the report, read from a results store (results/store.py).

Every point keeps its result JSON exactly as the methodology commands wrote it (search, sweep,
trial, latency, b2b; see runner.execute_point). This module turns those dicts into small frozen
dataclasses the plots and the page use, so that neither of them reads JSON keys:

- `Setup`: what was measured (switch, scenario, frame size and any non-default workload knob);
- `RankingRow`: one per setup with a search: NDR (median over repetitions), PDR, latency at 90 %
  of the NDR from the matching latency point, cycles per packet near the NDR, generator bound;
- `SweepSeries`, `LatencySeries`: the load curves and latency distributions;
- `PairsPoint`: throughput of the pairs:N scenarios against N.

Nothing here draws or formats; nothing writes to the store (it is opened with create=False).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.results.store import StoredPoint, StoredRun, ResultStore, wire_gbps

STORE_NAME = "results.sqlite"          # the name campaign/runner.py gives the store in a run's directory
DEFAULT_LINK_BPS = 10e9                # the reference link of the line-rate curve: 10 GbE
WIRE_OVERHEAD_BYTES = 20               # preamble (8) and inter-frame gap (12) per frame
LATENCY_FRACTION = 0.9                 # the ranking's latency is taken at 90 % of the NDR
FRACTION_TOLERANCE = 1e-6
# The engine's default IMIX genome "aaaaaaaddddg" (engine/src/frame.c): 7 x 64, 4 x 512, 1 x 1518.
IMIX_MEAN_SIZE = (7 * 64 + 4 * 512 + 1518) / 12
VARIANT_KEYS = (("flows", 1), ("burst", 1), ("placement", "default"), ("io", "afpacket"),
                ("preset", "fast"), ("shape_pps", None), ("options", None))
PAIRS_RE = re.compile(r"pairs:(\d+)$")


# -- input -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportInput:
    """Everything the report reads from one store."""
    store_path: Path
    points: tuple[StoredPoint, ...]
    runs: tuple[StoredRun, ...]

    @property
    def campaigns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([r.spec_name for r in self.runs]
                                   + [p.campaign for p in self.points]))

    def done(self, kind: str | None = None) -> list[StoredPoint]:
        """Points that finished with a result (of one kind, or all)."""
        return [p for p in self.points if p.status == "done" and isinstance(p.result, dict)
                and (kind is None or p.kind == kind)]


def store_file(store_path_or_dir: str | Path) -> Path:
    """The store's file: the path itself, or results.sqlite inside a run's directory."""
    path = Path(store_path_or_dir)
    if path.is_dir():
        path = path / STORE_NAME
    if not path.is_file():
        raise UsageError(f"no results store at {path}: give the --out directory of a "
                         f"`vswbench run` (it holds {STORE_NAME}) or the store file itself")
    return path


def load(store_path_or_dir: str | Path, campaign: str | None = None) -> ReportInput:
    """Read a store (never creating or changing it); `campaign` keeps only that campaign."""
    path = store_file(store_path_or_dir)
    with ResultStore(path, create=False) as store:
        points = store.points(campaign)
        runs = store.runs()
    if campaign is not None:
        if not any(r.spec_name == campaign for r in runs):
            names = ", ".join(sorted({r.spec_name for r in runs})) or "none"
            raise UsageError(f"campaign {campaign!r} is not in {path} (campaigns there: {names})")
        runs = [r for r in runs if r.spec_name == campaign]
    return ReportInput(path, tuple(points), tuple(runs))


# -- what was measured -------------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Setup:
    """The testbed and workload of a point, without the kind and the repetition. `variant` names
    the knobs that differ from their defaults (flows=4, burst=32, placement=s_core, ...)."""
    switch: str
    scenario: str
    size: int | str
    variant: str = ""

    @property
    def size_label(self) -> str:
        return f"{self.size} B" if isinstance(self.size, int) else str(self.size)

    @property
    def label(self) -> str:
        parts = [self.switch, self.scenario, self.size_label]
        return " ".join(parts + ([self.variant] if self.variant else []))

    @property
    def size_bytes(self) -> float | None:
        """The frame size as a number (IMIX: the mean of the engine's default genome)."""
        return frame_bytes(self.size)


def frame_bytes(size: Any) -> float | None:
    if isinstance(size, bool):
        return None
    if isinstance(size, (int, float)):
        return float(size)
    if isinstance(size, str) and size.lower() == "imix":
        return IMIX_MEAN_SIZE
    return None


def size_order(size: int | str) -> tuple[float, str]:
    """Sort key: numeric sizes ascending, IMIX (and anything else) after them."""
    return (size, "") if isinstance(size, int) else (math.inf, str(size))


def setup_of(p: StoredPoint) -> Setup:
    prm, r = p.params, p.result or {}
    size = prm.get("size", r.get("frame_size"))
    variant = []
    for key, default in VARIANT_KEYS:
        value = prm.get(key, default)
        if value == default or (key == "preset" and p.kind not in ("search", "latency", "b2b")):
            continue
        if isinstance(value, dict):
            variant += [f"{k}={v}" for k, v in sorted(value.items())]
        else:
            variant.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
    return Setup(str(prm.get("switch", r.get("switch", "?"))),
                 str(prm.get("scenario", r.get("scenario", "?"))),
                 size if isinstance(size, (int, str)) else "?", " ".join(variant))


def repetition_of(p: StoredPoint) -> int:
    rep = p.params.get("repetition", 0)
    return rep if isinstance(rep, int) else 0


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (missing, bool, text, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def line_rate_pps(size: float, link_bps: float = DEFAULT_LINK_BPS) -> float:
    """Frames per second a link carries at full rate: link / ((size + 20 bytes) x 8 bits)."""
    if size <= 0 or link_bps <= 0:
        raise UsageError(f"line rate of {size}-byte frames on a {link_bps} bit/s link: both must "
                         "be positive")
    return link_bps / ((size + WIRE_OVERHEAD_BYTES) * 8)


def gbps_on_wire(pps: float | None, size: int | str) -> float | None:
    """store.wire_gbps for byte sizes; IMIX at the mean size of its genome."""
    if pps is None:
        return None
    if isinstance(size, int):
        return wire_gbps(pps, size)
    mean = frame_bytes(size)
    return None if mean is None else round(pps * (mean + WIRE_OVERHEAD_BYTES) * 8 / 1e9, 6)


# -- ranking -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RankingRow:
    rank: int                            # 1 = highest NDR among rows of the same scenario/size/variant
    setup: Setup
    ndr_pps: float | None
    ndr_gbps: float | None
    pdr_pps: float | None
    pdr_gbps: float | None
    latency_p50_us: float | None         # at 90 % of the NDR (None: no latency point matched)
    latency_p99_us: float | None
    cycles_per_packet: float | None
    generator_bound: bool
    generator_ceiling_pps: float | None
    repetitions: int                     # stored search points behind the row
    ndr_cv: float | None                 # over those repetitions, or the search's own --repeat
    useful_cycles_per_packet: float | None = None   # polling switches: cycles on work with frames

    @property
    def ndr_mpps(self) -> float | None:
        return None if self.ndr_pps is None else self.ndr_pps / 1e6

    @property
    def pdr_mpps(self) -> float | None:
        return None if self.pdr_pps is None else self.pdr_pps / 1e6


def cycles_below_ndr(result: dict[str, Any], field: str = "cycles_per_packet") -> float | None:
    """Cycles per packet (or another per-trial field) of the search's trial nearest below (or
    at) the NDR."""
    ndr, trials = number(result.get("ndr_pps")), result.get("trials")
    if ndr is None or not isinstance(trials, list):
        return None
    below = [(number(t.get("intended_pps")), number(t.get(field)))
             for t in trials if isinstance(t, dict)]
    below = [(load, cpp) for load, cpp in below
             if load is not None and cpp is not None and load <= ndr * (1 + 1e-9)]
    return max(below, key=lambda lc: lc[0])[1] if below else None


def latency_at(result: dict[str, Any], fraction: float = LATENCY_FRACTION,
               key: str = "points") -> dict[str, float | None] | None:
    """latency_us of the entry of result[key] measured at `fraction` of the NDR, if any."""
    entries = result.get(key)
    if not isinstance(entries, list):
        return None
    for e in entries:
        f = number(e.get("fraction_of_ndr")) if isinstance(e, dict) else None
        if f is not None and abs(f - fraction) <= FRACTION_TOLERANCE:
            lat = e.get("latency_us")
            return lat if isinstance(lat, dict) else None
    return None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _cv(values: Sequence[float]) -> float | None:
    if len(values) < 2 or not statistics.fmean(values):
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def latency_by_setup(data: ReportInput, fraction: float = LATENCY_FRACTION
                     ) -> dict[Setup, tuple[float | None, float | None]]:
    """(p50, p99) in us at `fraction` of the NDR per setup: medians over the latency points
    (repetitions) that measured that fraction."""
    found: dict[Setup, list[dict[str, Any]]] = defaultdict(list)
    for p in data.done("latency"):
        lat = latency_at(p.result or {}, fraction)
        if lat is not None:
            found[setup_of(p)].append(lat)
    out = {}
    for setup, lats in found.items():
        p50 = [v for v in (number(x.get("p50")) for x in lats) if v is not None]
        p99 = [v for v in (number(x.get("p99")) for x in lats) if v is not None]
        out[setup] = (_median(p50), _median(p99))
    return out


def _match_latency(setup: Setup, table: dict[Setup, tuple[float | None, float | None]]
                   ) -> tuple[float | None, float | None]:
    """Same setup first; otherwise the only latency setup with this switch, scenario and size."""
    if setup in table:
        return table[setup]
    loose = [v for s, v in table.items()
             if (s.switch, s.scenario, s.size) == (setup.switch, setup.scenario, setup.size)]
    return loose[0] if len(loose) == 1 else (None, None)


def ranking(data: ReportInput, fraction: float = LATENCY_FRACTION) -> list[RankingRow]:
    """One row per setup that has a finished search, ranked by NDR within its scenario, frame
    size and variant. Repeated searches give the median NDR; PDR, cycles and the generator bound
    come from the repetition whose NDR is that median (the upper one of an even count)."""
    searches: dict[Setup, list[dict[str, Any]]] = defaultdict(list)
    for p in data.done("search"):
        searches[setup_of(p)].append(p.result or {})
    lat_table = latency_by_setup(data, fraction)
    rows = []
    for setup, results in searches.items():
        ordered = sorted(results, key=lambda r: number(r.get("ndr_pps")) or 0.0)
        chosen = ordered[len(ordered) // 2]
        ndrs = [v for v in (number(r.get("ndr_pps")) for r in results) if v is not None]
        ndr = _median(ndrs)
        pdr = number(chosen.get("pdr_pps"))
        p50, p99 = _match_latency(setup, lat_table)
        if p50 is None and p99 is None:        # a search run with --latency-at
            lat = latency_at(chosen, fraction, key="latency_at_ndr") or {}
            p50, p99 = number(lat.get("p50")), number(lat.get("p99"))
        stats = (chosen.get("statistics") or {}).get("ndr_pps")
        own_cv = number(stats.get("cv")) if isinstance(stats, dict) else None
        rows.append(RankingRow(0, setup, ndr, gbps_on_wire(ndr, setup.size), pdr,
                               gbps_on_wire(pdr, setup.size), p50, p99, cycles_below_ndr(chosen),
                               bool(chosen.get("generator_bound")),
                               number(chosen.get("generator_ceiling_pps")), len(results),
                               _cv(ndrs) if len(ndrs) > 1 else own_cv,
                               cycles_below_ndr(chosen, "useful_cycles_per_packet")))
    rows.sort(key=lambda r: (r.setup.scenario, size_order(r.setup.size), r.setup.variant,
                             -(r.ndr_pps or -1.0), r.setup.switch))
    ranked, previous, rank = [], None, 0
    for row in rows:
        group = (row.setup.scenario, row.setup.size, row.setup.variant)
        rank = rank + 1 if group == previous else 1
        previous = group
        ranked.append(replace(row, rank=rank))
    return ranked


# -- load curves and latency distributions -----------------------------------------------------
Bucket = tuple[float, float, int]        # [low_ns, high_ns, count] as the engine writes it


@dataclass(frozen=True)
class LoadPoint:
    offered_pps: float
    achieved_pps: float | None
    loss_ratio: float | None
    latency_us: dict[str, float | None]
    histogram: tuple[Bucket, ...]
    fraction_of_ndr: float | None = None
    lost: int | None = None
    cycles_per_packet: float | None = None


@dataclass(frozen=True)
class LoadSeries:
    """A sweep (offered load from low to beyond saturation) or a latency point (a few fractions
    of the NDR), of one setup and repetition."""
    kind: str                            # "sweep" or "latency"
    setup: Setup
    repetition: int
    loads: tuple[LoadPoint, ...]
    ndr_pps: float | None = None

    @property
    def label(self) -> str:
        return self.setup.label + (f" #{self.repetition + 1}" if self.repetition else "")


def parse_histogram(raw: Any) -> tuple[Bucket, ...]:
    """[[low_ns, high_ns, count], ...] -> tuples; malformed buckets and empty ones dropped."""
    out = []
    for b in raw if isinstance(raw, list) else []:
        if isinstance(b, (list, tuple)) and len(b) == 3:
            low, high, count = number(b[0]), number(b[1]), number(b[2])
            if low is not None and high is not None and count and count > 0 and high >= low >= 0:
                out.append((low, high, int(count)))
    return tuple(sorted(out))


def _load_point(raw: dict[str, Any]) -> LoadPoint | None:
    offered = number(raw.get("offered_pps"))
    if offered is None:
        return None
    lat = raw.get("latency_us") if isinstance(raw.get("latency_us"), dict) else {}
    lost = raw.get("lost")
    return LoadPoint(offered, number(raw.get("achieved_pps")), number(raw.get("loss_ratio")),
                     {k: number(v) for k, v in lat.items()}, parse_histogram(raw.get("histogram")),
                     number(raw.get("fraction_of_ndr")),
                     lost if isinstance(lost, int) and not isinstance(lost, bool) else None,
                     number(raw.get("cycles_per_packet")))


def load_series(data: ReportInput, kind: str) -> list[LoadSeries]:
    """Every finished sweep (kind "sweep") or latency point (kind "latency"), loads ascending."""
    out = []
    for p in data.done(kind):
        raw = (p.result or {}).get("points")
        loads = [lp for lp in (_load_point(x) for x in raw if isinstance(x, dict))
                 if lp is not None] if isinstance(raw, list) else []
        if loads:
            out.append(LoadSeries(kind, setup_of(p), repetition_of(p),
                                  tuple(sorted(loads, key=lambda lp: lp.offered_pps)),
                                  number((p.result or {}).get("ndr_pps"))))
    return sorted(out, key=lambda s: (s.setup.scenario, size_order(s.setup.size), s.setup.switch,
                                      s.setup.variant, s.repetition))


def ecdf(buckets: Iterable[Bucket]) -> tuple[list[float], list[float]]:
    """Empirical CDF of a histogram as a step curve in microseconds: x are the bucket upper
    edges (a sample in a bucket is at most its high edge), y the cumulative fraction; the curve
    starts at (lowest low edge, 0). Empty histogram: ([], [])."""
    bs = sorted(buckets)
    total = sum(b[2] for b in bs)
    if not total:
        return [], []
    xs, ys, seen = [bs[0][0] / 1000.0], [0.0], 0
    for low, high, count in bs:
        seen += count
        xs.append(high / 1000.0)
        ys.append(seen / total)
    return xs, ys


def rebin_log(buckets: Iterable[Bucket], per_decade: int = 20
              ) -> tuple[list[float], list[float]]:
    """The engine's fine log-linear buckets (128 per octave) regrouped into `per_decade` bins of
    equal width on a log axis, in microseconds. Returns (edges, fractions): len(edges) is
    len(fractions) + 1 and the fractions sum to 1. Each bucket goes whole into the bin that
    holds its middle."""
    if per_decade < 1:
        raise UsageError(f"histogram bins per decade: {per_decade} (must be at least 1)")
    bs = [b for b in buckets if b[2] > 0]
    total = sum(b[2] for b in bs)
    if not total:
        return [], []
    mids = [max((low + high) / 2.0, 1.0) / 1000.0 for low, high, _ in bs]
    lo = math.floor(math.log10(min(mids)) * per_decade)
    hi = math.floor(math.log10(max(mids)) * per_decade) + 1
    counts = [0] * (hi - lo)
    for mid, (_, _, count) in zip(mids, bs):
        i = min(hi - lo - 1, max(0, math.floor(math.log10(mid) * per_decade) - lo))
        counts[i] += count
    edges = [10 ** ((lo + i) / per_decade) for i in range(hi - lo + 1)]
    return edges, [c / total for c in counts]


# -- pairs -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairsPoint:
    switch: str
    size: int | str
    variant: str
    metric: str                          # "NDR", "achieved" (trial) or "peak achieved" (sweep)
    pairs: int
    throughput_pps: float
    generator_bound: bool = False


def throughput_of(p: StoredPoint) -> tuple[str, float] | None:
    """The point's throughput and what it is: a search's NDR, a trial's achieved rate, or a
    sweep's peak achieved rate. None for other kinds or when it is missing."""
    r = p.result or {}
    if p.kind == "search":
        value, metric = number(r.get("ndr_pps")), "NDR"
    elif p.kind == "trial":
        value, metric = number(r.get("achieved_pps")), "achieved"
    elif p.kind == "sweep":
        sat = r.get("saturation") if isinstance(r.get("saturation"), dict) else {}
        value, metric = number(sat.get("peak_achieved_pps")), "peak achieved"
    else:
        return None
    return None if value is None else (metric, value)


def pairs_points(data: ReportInput) -> list[PairsPoint]:
    """Throughput of every pairs:N point (medians over repetitions), sorted for plotting."""
    found: dict[tuple[str, int | str, str, str, int], list[tuple[float, bool]]] = defaultdict(list)
    for p in data.done():
        setup = setup_of(p)
        m = PAIRS_RE.fullmatch(setup.scenario)
        tp = throughput_of(p)
        if m is None or tp is None:
            continue
        found[(setup.switch, setup.size, setup.variant, tp[0], int(m.group(1)))].append(
            (tp[1], bool((p.result or {}).get("generator_bound"))))
    out = [PairsPoint(sw, size, var, metric, n, statistics.median(v for v, _ in values),
                      any(b for _, b in values))
           for (sw, size, var, metric, n), values in found.items()]
    return sorted(out, key=lambda q: (q.metric, size_order(q.size), q.switch, q.variant, q.pairs))
