"""Stored points read into typed records, and the one definition of every headline number.

Every reader of a results store (export, compare, the chain and delay models, the report) goes
through this module, so that one search shows one NDR, one cycles per packet and one latency
wherever it is printed. A point's result JSON is exactly what the methodology commands wrote
(search, sweep, trial, latency, b2b; execute.execute_point); here it becomes frozen records:

- `Setup`: what was measured, without the kind and the repetition (switch, scenario, frame size,
  and the knobs that differ from their defaults as `variant`);
- `PointRecord`: one stored point: its identity, setup, repetition, workload knobs and `Headline`;
- `StoredResults` / `load`: every point and run of a store (opened read-only).

The headline definitions, each computed here and nowhere else:

- NDR, PDR, bounds, generator bound and ceiling: the search's own fields (`ndr_pps`, ...);
- Gbit/s on the wire (`ndr_gbps`, `pdr_gbps`): units.wire_gbps, the frame (FCS included, IMIX at
  its genome's mean size) plus 20 bytes of preamble and gap;
- cycles per packet near the NDR (`cycles_near_ndr`): the median over the search's trials AT
  the NDR's load (matched by the stored load, results/loss.py: the NDR is stored rounded to
  0.1 pps) that lost no frame and sent every frame they meant to; when none did, of the
  highest-load such trial below the NDR. Never above it: the figure is the cost at the rate
  the NDR certifies (a lossless trial above the NDR is a noisy pass the search did not trust).
  Without loss or unsent frames: a trial that dropped or could not send measured cycles per
  *delivered* frame of a DUT (or tester) already overloaded, inflated by the work spent on
  frames that never arrived. Of a latency point: the cycles of its load at the headline
  fraction;
- what the trials at the NDR's load lost (`ndr_load_loss`, results/loss.py LoadLoss): the
  exceed ratio lets a search call a load "0 % loss" although some of its trials lost frames;
  and those around it (`loss_around_ndr`, LossAround): loss far below the NDR, or none far
  above it, with no host stall, makes the NDR ill-defined (sporadic loss, not a threshold);
- latency p50 / p90 / p99 (`latency_at`): measured at exactly LATENCY_FRACTION (90 %) of the NDR
  (within FRACTION_TOLERANCE), from a latency point's loads or a search's `latency_at_ndr`; no
  nearest fraction stands in for it (p99 at 50 % of the NDR is a different number, and two runs
  measured at different fractions must not be compared as one). Each latency figure carries its
  trial's loss (frames, ratio, the counter cross-check; results/loss.py says which percentiles
  the loss makes unreliable), RFC 3550 jitter and RFC 3393 IPDV as the engine measured them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.engine.records import LatencySummary
from vswbench.engine.records import stored_latency
from vswbench.errors import UsageError
from vswbench.jsonvalues import count
from vswbench.jsonvalues import flag
from vswbench.jsonvalues import number
from vswbench.jsonvalues import text
from vswbench.measure.socket_result import SocketResult
from vswbench.results.hostbound import HostBound
from vswbench.results.hostbound import host_bound
from vswbench.results.loss import LoadLoss
from vswbench.results.loss import LossAround
from vswbench.results.loss import at_stored_load
from vswbench.results.loss import loss_around_load
from vswbench.results.loss import loss_at_load
from vswbench.results.loss import unreliable_percentiles
from vswbench.results.params import KNOBS
from vswbench.results.params import PRESET_KINDS
from vswbench.results.params import Params
from vswbench.results.record import LoadPoint
from vswbench.results.record import Measured
from vswbench.results.record import measured_of
from vswbench.results.sockets import socket_result
from vswbench.results.store import STORE_NAME
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.results.store import StoredRun
from vswbench.units import frame_bytes
from vswbench.units import wire_gbps

LATENCY_FRACTION = 0.9                 # the headline latency is taken at 90 % of the NDR
FRACTION_TOLERANCE = 1e-6
# knobs named in a Setup's variant when they differ from their default: record.KNOBS, the one table
VARIANT_KEYS = tuple((k.name, k.default) for k in KNOBS)

_count, _flag, _text = count, flag, text


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
        """The frame size as a number (IMIX: the mean of its genome)."""
        return frame_bytes(self.size)


def size_order(size: int | str) -> tuple[float, str]:
    """Sort key: numeric sizes ascending, IMIX (and anything else) after them."""
    return (size, "") if isinstance(size, int) else (math.inf, str(size))


def setup_of(p: StoredPoint) -> Setup:
    return _setup(p.kind, p.params, p.result or {})


def setup_with(p: PointRecord, params: Params) -> Setup:
    """The Setup of a point read with other params (a study's series: the varied knob left
    out), the result's switch, scenario and frame size standing in as setup_of's do."""
    m = p.measured
    stored = {k: v for k, v in (("switch", m.switch), ("scenario", m.scenario),
                                ("frame_size", m.frame_size)) if v is not None}
    return _setup(p.kind, params.raw, stored)


def _setup(kind: str, prm: Mapping[str, Any], r: Mapping[str, Any]) -> Setup:
    size = prm.get("size", r.get("frame_size"))
    variant = []
    for knob in KNOBS:
        key, value = knob.name, prm.get(knob.name, knob.default)
        if knob.is_default(value) or (key == "preset" and kind not in PRESET_KINDS):
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
    return rep if isinstance(rep, int) and not isinstance(rep, bool) else 0


# -- the headline definitions ------------------------------------------------------------------
def cycles_near_ndr(result: dict[str, Any], field: str = "cycles_per_packet") -> float | None:
    """`field` (cycles per packet, or useful cycles per packet) near the NDR: the median over the
    search's trials at the NDR's stored load without loss or unsent frames, else of the
    highest-load such trial below the NDR; None when no such trial measured it."""
    ndr, trials = number(result.get("ndr_pps")), result.get("trials")
    if ndr is None or not isinstance(trials, list):
        return None
    at, below = [], []
    for t in trials:
        if not isinstance(t, dict) or t.get("lost") != 0 or t.get("unsent"):
            continue
        load, value = number(t.get("intended_pps")), number(t.get(field))
        if load is None or value is None:
            continue
        if at_stored_load(load, ndr):
            at.append(value)
        elif load < ndr:
            below.append((load, value))
    if at:
        return statistics.median(at)
    return max(below, key=lambda lv: lv[0])[1] if below else None


def ndr_load_loss(result: dict[str, Any]) -> LoadLoss | None:
    """What the search's trials at its NDR's stored load lost (results/loss.py)."""
    goal = next((g for g in result.get("goals") or [] if isinstance(g, dict)
                 and g.get("name") == "NDR"), {})
    return loss_at_load(result, number(result.get("ndr_pps")),
                        number(goal.get("loss_ratio")) or 0.0)


def entry_at(entries: Any, fraction: float = LATENCY_FRACTION) -> dict[str, Any] | None:
    """The entry of a latency point's `points` (or a search's `latency_at_ndr`) measured at
    `fraction` of the NDR, if any."""
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict):
            continue
        f = number(e.get("fraction_of_ndr"))
        if f is not None and abs(f - fraction) <= FRACTION_TOLERANCE:
            return e
    return None


def load_at(loads: Sequence[LoadPoint] | None,
            fraction: float = LATENCY_FRACTION) -> LoadPoint | None:
    """entry_at of typed loads (record.Measured.loads): the one measured at `fraction`."""
    for lp in loads or ():
        f = lp.fraction_of_ndr
        if f is not None and abs(f - fraction) <= FRACTION_TOLERANCE:
            return lp
    return None


def _percentile(name: str) -> property:
    return property(lambda self: getattr(self.summary, name),
                    doc=f"the summary's {name}, microseconds")


@dataclass(frozen=True)
class Latency:
    """Latency at one fraction of the NDR (None: a trial's, at its own offered rate): the
    engine's LatencySummary (engine/records.py, the one definition of the percentiles, p25 and
    p95 from the histogram: Emmerich et al. Table 2), read here as p50_us, p99_us, ..., with what
    the trial lost, its counter cross-check, jitter and IPDV."""
    fraction_of_ndr: float | None
    summary: LatencySummary
    lost_frames: int | None = None       # the latency trial's loss (results/loss.py)
    loss_ratio: float | None = None
    counters_agree: bool | None = None   # the trial's engine/kernel counter cross-check
    jitter_us: float | None = None       # RFC 3550 interarrival jitter
    ipdv_p1_us: float | None = None      # RFC 3393 IPDV percentiles
    ipdv_p50_us: float | None = None
    ipdv_p99_us: float | None = None
    host_stall: str | None = None        # why a host stall explains its loss (hoststall.py)

    p25_us, p50_us, p90_us, p95_us = (_percentile(n) for n in ("p25", "p50", "p90", "p95"))
    p99_us, p999_us, p9999_us = (_percentile(n) for n in ("p99", "p999", "p9999"))
    min_us, max_us, mean_us, stddev_us = (_percentile(n) for n in ("min", "max", "mean", "stddev"))

    @property
    def lossy(self) -> bool:
        """The trial lost frames or its counters disagreed: the percentiles are of survivors."""
        return bool(self.lost_frames or self.loss_ratio) or self.counters_agree is False

    @property
    def unreliable(self) -> tuple[str, ...]:
        """Percentiles above 1 - loss ratio (results/loss.py), e.g. ("p99", "p999", "p9999")."""
        return unreliable_percentiles(self.loss_ratio)


def latency_at(result: dict[str, Any], fraction: float = LATENCY_FRACTION,
               key: str = "points") -> Latency | None:
    """The latency of the entry of result[key] measured at `fraction` of the NDR, if any."""
    return latency_of(entry_at(result.get(key), fraction), fraction)


def latency_of(trial: Any, fraction: float | None) -> Latency | None:
    """The Latency of a stored trial (a latency point's entry, a trial point's result): its
    percentiles, its loss and counter cross-check, jitter and IPDV."""
    summary = stored_latency(trial.get("latency_us")) if isinstance(trial, dict) else None
    if summary is None:
        return None
    ipdv = trial.get("ipdv_us") if isinstance(trial.get("ipdv_us"), dict) else {}
    return Latency(fraction, summary, _count(trial.get("lost")), number(trial.get("loss_ratio")),
                   _flag(trial.get("counters_agree")), number(trial.get("jitter_us")),
                   number(ipdv.get("p1")), number(ipdv.get("p50")), number(ipdv.get("p99")),
                   _text(trial.get("host_stall")))


@dataclass(frozen=True)
class Headline:
    """The numbers a reader compares first, from whichever result shape the point's kind
    produces (None: not measured by this kind, or missing)."""
    ndr_pps: float | None = None
    pdr_pps: float | None = None
    lower_bound_pps: float | None = None
    upper_bound_pps: float | None = None
    generator_bound: bool | None = None
    generator_ceiling_pps: float | None = None
    ndr_cv: float | None = None              # a search's own --repeat statistics
    ndr_load_loss: LoadLoss | None = None    # what the trials at the NDR's load lost
    loss_around_ndr: LossAround | None = None  # ... and those below it (an ill-defined NDR)
    forwarding_mode: str | None = None
    offered_pps: float | None = None
    achieved_pps: float | None = None
    loss_ratio: float | None = None          # a trial's; a latency point's at LATENCY_FRACTION
    latency: Latency | None = None           # at LATENCY_FRACTION of the NDR (a trial: its own)
    cycles_per_packet: float | None = None   # near the NDR (cycles_near_ndr), or at the fraction
    useful_cycles_per_packet: float | None = None
    peak_achieved_pps: float | None = None   # sweeps
    highest_lossless_pps: float | None = None
    b2b_frames: float | None = None
    implied_buffer_s: float | None = None
    corrected_buffer_s: float | None = None
    trial_count: int | None = None
    trial_seconds: float | None = None
    wall_seconds: float | None = None
    # host stalls (measure/hoststall.py): RFC 2544's NDR with every trial counted, and the trials
    # a host stall cost frames: excised or repeated, that loss left out of ndr_pps
    classic_ndr_pps: float | None = None
    trials_rejected: int | None = None
    preset: str | None = None                # a search's preset (its noise band: noise.py)
    host_bound: HostBound | None = None      # a search's tester gaps and path stalls


def _strict_ndr(r: dict[str, Any]) -> float | None:
    """RFC 2544's NDR of a search stored before it was recorded (measure/search.classic_ndr):
    the highest load of a lossless trial below the lowest load of a trial that lost or could
    not send frames, every trial counted."""
    trials = [t for t in r.get("trials") or [] if isinstance(t, dict)]
    loads = [(number(t.get("intended_pps")), (_count(t.get("lost")) or 0)
              + (_count(t.get("unsent")) or 0)) for t in trials]
    lossy = [x for x, bad in loads if x is not None and bad > 0]
    ceiling = min(lossy) if lossy else float("inf")
    passing = [x for x, bad in loads if x is not None and bad == 0 and x < ceiling]
    return round(max(passing), 1) if passing else None


def headline_of(kind: str, r: dict[str, Any]) -> Headline:
    def n(k: str) -> float | None:
        return number(r.get(k))
    latency, cycles, useful, at_ndr, below = None, n("cycles_per_packet"), None, None, None
    loss = n("loss_ratio")
    if kind == "latency":
        latency = latency_at(r)
        at = entry_at(r.get("points"))
        cycles = number(at.get("cycles_per_packet")) if at is not None else None
        loss = number(at.get("loss_ratio")) if at is not None else None
    elif kind == "search":
        latency = latency_at(r, key="latency_at_ndr")
        cycles = cycles_near_ndr(r)
        useful = cycles_near_ndr(r, "useful_cycles_per_packet")
        at_ndr = ndr_load_loss(r)
        below = loss_around_load(r, number(r.get("ndr_pps")))
    elif kind == "trial":
        latency = latency_of(r, None)
    elif kind == "rounds":      # campaign/rounds_phase.py: the median of its samples (MRR)
        return Headline(achieved_pps=n("mrr_pps"), generator_bound=_flag(r.get("at_least")),
                        trial_count=_count(r.get("rounds")))
    stats = (r.get("statistics") or {}).get("ndr_pps") if kind == "search" else None
    sat: dict[str, Any] = r["saturation"] if kind == "sweep" and isinstance(
        r.get("saturation"), dict) else {}
    return Headline(
        ndr_pps=n("ndr_pps"), pdr_pps=n("pdr_pps"), lower_bound_pps=n("lower_bound_pps"),
        upper_bound_pps=n("upper_bound_pps"), generator_bound=_flag(r.get("generator_bound")),
        generator_ceiling_pps=n("generator_ceiling_pps"),
        ndr_cv=number(stats.get("cv")) if isinstance(stats, dict) else None,
        ndr_load_loss=at_ndr, loss_around_ndr=below,
        forwarding_mode=_text(r.get("forwarding_mode")), offered_pps=n("offered_pps"),
        achieved_pps=n("achieved_pps"), loss_ratio=loss, latency=latency,
        cycles_per_packet=cycles, useful_cycles_per_packet=useful,
        peak_achieved_pps=number(sat.get("peak_achieved_pps")),
        highest_lossless_pps=number(sat.get("highest_lossless_offered_pps")),
        b2b_frames=n("benchmark_frames") if kind == "b2b" else None,
        implied_buffer_s=n("implied_buffer_s"), corrected_buffer_s=n("corrected_buffer_s"),
        trial_count=_count(r.get("trial_count")), trial_seconds=n("trial_seconds"),
        wall_seconds=n("wall_seconds"),
        classic_ndr_pps=(n("classic_ndr_pps") if "classic_ndr_pps" in r or kind != "search"
                         else _strict_ndr(r)),
        trials_rejected=_count(r.get("trials_rejected")),
        preset=_text(r.get("preset")) if kind == "search" else None,
        host_bound=host_bound(r) if kind == "search" else None)


# -- one stored point --------------------------------------------------------------------------
@dataclass(frozen=True)
class PointRecord:
    """One stored point: which measurement it was and its headline numbers."""
    campaign: str
    run_id: str
    key: str
    label: str
    kind: str
    status: str
    setup: Setup
    repetition: int
    params: Params                           # the campaign point's parameters, typed
    headline: Headline
    error: str | None = None
    started: str | None = None
    finished: str | None = None
    measured: Measured = Measured()          # the rest of its result, typed (record.py)
    socket: SocketResult | None = None       # a stream, rr or crr point's (results/sockets.py)

    @property
    def done(self) -> bool:
        return self.status == "done"

    @property
    def ndr_gbps(self) -> float | None:
        return wire_gbps(self.headline.ndr_pps, self.setup.size)

    @property
    def pdr_gbps(self) -> float | None:
        return wire_gbps(self.headline.pdr_pps, self.setup.size)

    def throughput(self) -> tuple[str, float] | None:
        """The point's throughput and what it is: a search's NDR, a trial's achieved rate, or a
        sweep's peak achieved rate. None for other kinds or when it is missing."""
        h = self.headline
        value, metric = {"search": (h.ndr_pps, "NDR"), "trial": (h.achieved_pps, "achieved"),
                         "sweep": (h.peak_achieved_pps, "peak achieved")
                         }.get(self.kind, (None, ""))
        return None if value is None else (metric, value)


def read_point(p: StoredPoint) -> PointRecord:
    """`started`: the store's column, else the start the method recorded in its result
    (`started_at`; campaigns before the runner filled the column)."""
    measured = measured_of(p.kind, p.result or {}, isinstance(p.result, dict))
    started = p.started or measured.started_at
    return PointRecord(p.campaign, p.run_id, p.key, p.label, p.kind, p.status, setup_of(p),
                       repetition_of(p), Params(dict(p.params)),
                       headline_of(p.kind, p.result or {}), p.error, started, p.finished,
                       measured, socket_result(p.kind, dict(p.params), p.result or {}))


def throughput_of(p: StoredPoint) -> tuple[str, float] | None:
    """PointRecord.throughput of a stored point."""
    return read_point(p).throughput()


# -- a whole store -----------------------------------------------------------------------------
@dataclass(frozen=True)
class StoredResults:
    """Every point and run of one store (or of one campaign in it)."""
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

    def records(self, kind: str | None = None) -> list[PointRecord]:
        """The finished points (of one kind, or all) as records, in store order."""
        return [read_point(p) for p in self.done(kind)]

    def all_records(self) -> list[PointRecord]:
        """Every point (finished, failed, skipped) as a record, in store order."""
        return [read_point(p) for p in self.points]


def store_file(store_path_or_dir: str | Path) -> Path:
    """The store's file: the path itself, or results.sqlite inside a run's directory."""
    path = Path(store_path_or_dir)
    if path.is_dir():
        path = path / STORE_NAME
    if not path.is_file():
        raise UsageError(f"no results store at {path}: give the --out directory of a "
                         f"`vswbench run` (it holds {STORE_NAME}) or the store file itself")
    return path


def load(store_path_or_dir: str | Path, campaign: str | None = None) -> StoredResults:
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
    return StoredResults(path, tuple(points), tuple(runs))
