"""Load sweeps and latency under load (Emmerich et al. Fig. 8, 13 and 14; Raumer et al.
Fig. 4 and 6): trials at offered loads from low to beyond saturation, and latency
distributions at fixed fractions of a found NDR.

Both run through a TrialSession, so every point is an honest trial: offered, sent and received
frames, loss, latency percentiles and the histogram, cycles per packet.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

from vswbench.errors import UsageError
from vswbench.measure.session import SessionTrial
from vswbench.measure.session import TrialSession
from vswbench.units import MAX_RATE_PPS
from vswbench.units import MIN_RATE_PPS

DEFAULT_FRACTIONS = (0.1, 0.5, 0.9, 1.0)
SWEEP_POINTS_RANGE = (2, 200)     # sweep --points and a campaign's points key


@dataclass
class LoadTrial:
    """One trial of a sweep or a latency measurement."""
    offered_pps: float
    fraction: float | None          # of the NDR, for latency-at-NDR points
    trial: SessionTrial

    def to_json(self, *, histogram: bool = True) -> dict[str, Any]:
        r = self.trial.result
        data = {"offered_pps": self.offered_pps, "fraction_of_ndr": self.fraction,
                **self.trial.to_json(), "latency_kind": r.latency_kind,
                "drops": r.drops, "cpu": r.cpu,
                "cycles_per_packet_by_process": r.cycles_per_packet_by_process}
        if r.nf_counters:   # chains: frames and drops per element (Raumer Fig. 5) at this load
            data["nf_counters"] = r.nf_counters
        if histogram:
            data["histogram"] = r.histogram
        return data


def sweep_loads(max_load: float, points: int, min_load: float | None = None) -> list[float]:
    """`points` offered loads spaced evenly from min_load (default max_load / points) to max_load."""
    if points < 2:
        raise UsageError("--points must be at least 2")
    if max_load <= 0:
        raise UsageError("--max-load must be positive")
    low = max_load / points if min_load is None else min_load
    if not 0 < low < max_load:
        raise UsageError(f"--min-load {low:,.0f} must be below --max-load {max_load:,.0f}")
    step = (max_load - low) / (points - 1)
    return [round(low + i * step, 1) for i in range(points)]


def parse_fractions(text: str, flag: str = "--latency-at") -> tuple[float, ...]:
    """'10,50,90,100' (percent of the NDR) -> (0.1, 0.5, 0.9, 1.0)."""
    try:
        values = tuple(float(x) / 100 for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected percentages of the NDR, e.g. 10,50,90,100") \
            from None
    if not values or any(not 0 < v <= 2 for v in values):
        raise UsageError(f"{flag} {text!r}: percentages must be in (0, 200]")
    return values


def check_fraction_loads(ndr_pps: float, fractions: Sequence[float], flag: str = "--at",
                         of: str = "--ndr", upper_only: bool = False) -> None:
    """UsageError, before anything is built, when a fraction of a given NDR (or of the highest
    NDR a search can find, `upper_only`) is a load no trial can offer (1 pps to 1 Gpps: --ndr 1G
    --at 200 would be 2 Gpps)."""
    for f in fractions:
        load = ndr_pps * f
        if load > MAX_RATE_PPS or (not upper_only and load < MIN_RATE_PPS):
            raise UsageError(f"{flag} {f * 100:g} % of {of} {ndr_pps:g} is {load:g} pps: loads "
                             f"are {MIN_RATE_PPS:g} to {MAX_RATE_PPS:g} pps; give percentages "
                             f"within them")


def run_sweep(session: TrialSession, loads: Sequence[float], duration: float,
              progress: Callable[[LoadTrial], None] = lambda p: None) -> list[LoadTrial]:
    points = []
    for load in loads:
        point = LoadTrial(load, None, session.measure(load, duration))
        progress(point)
        points.append(point)
    return points


def latency_at(session: TrialSession, ndr_pps: float, fractions: Sequence[float], duration: float,
               progress: Callable[[LoadTrial], None] = lambda p: None) -> list[LoadTrial]:
    if ndr_pps <= 0:
        raise UsageError("latency at fractions of the NDR needs a positive NDR")
    points = []
    for f in fractions:
        load = round(ndr_pps * f, 1)
        point = LoadTrial(load, f, session.measure(load, duration))
        progress(point)
        points.append(point)
    return points


@dataclass(frozen=True)
class Saturation:
    """Where a sweep's curve bends (saturation_of)."""
    highest_lossless_offered_pps: float | None
    peak_achieved_pps: float
    peak_at_offered_pps: float
    falls_beyond_peak: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def saturation_of(points: Sequence[LoadTrial]) -> Saturation | None:
    """Where the curve bends: the highest offered load forwarded without loss, the peak of the
    achieved throughput, and whether throughput falls again beyond the peak (software drops
    wasting cycles, Raumer et al. Fig. 4). None without points."""
    if not points:
        return None
    clean = [p for p in points if p.trial.result.lost == 0 and not p.trial.unsent_count]
    peak = max(points, key=lambda p: p.trial.result.achieved_pps)
    last = points[-1]
    falls = last.trial.result.achieved_pps < 0.95 * peak.trial.result.achieved_pps
    return Saturation(max((p.offered_pps for p in clean), default=None),
                      peak.trial.result.achieved_pps, peak.offered_pps, falls)


def saturation(points: Sequence[LoadTrial]) -> dict[str, Any]:
    """saturation_of as stored ({} without points)."""
    found = saturation_of(points)
    return found.to_json() if found is not None else {}


def median_point(reps: Sequence[LoadTrial]) -> LoadTrial:
    """Of one load's repetitions, the one with the median achieved rate (of an even number, the
    upper middle one): it stands for the load."""
    return sorted(reps, key=lambda p: p.trial.result.achieved_pps)[len(reps) // 2]


def representative_points(runs: Sequence[Sequence[LoadTrial]]) -> list[LoadTrial]:
    """Per load of repeated runs of one load list (runs[r][i] is point i of repetition r), the
    point that stands for it (median_point; a single run's own points)."""
    if len(runs) == 1:
        return list(runs[0])
    return [median_point([run[i] for run in runs]) for i in range(len(runs[0]))]


def repeated_points_json(runs: Sequence[Sequence[LoadTrial]]) -> tuple[list[dict[str, Any]],
                                                                         list[str]]:
    """Points measured in several repetitions of the same load list (runs[r][i] is point i of
    repetition r): per point, the repetition with the median achieved rate stands for it, with
    statistics of achieved rate, loss and latency over all repetitions; noise warnings."""
    from vswbench.measure.stats import noise_warning
    from vswbench.measure.stats import summarize

    if len(runs) == 1:
        return [p.to_json() for p in runs[0]], []
    out, warnings = [], []
    for i in range(len(runs[0])):
        reps = [run[i] for run in runs]
        data = median_point(reps).to_json()
        stats = {}
        for metric, values in (
                ("achieved_pps", [p.trial.result.achieved_pps for p in reps]),
                ("loss_ratio", [p.trial.result.loss_ratio for p in reps]),
                ("p50_us", [p.trial.result.latency_us.get("p50") for p in reps]),
                ("p99_us", [p.trial.result.latency_us.get("p99") for p in reps])):
            clean = [float(v) for v in values if v is not None]
            if clean:
                s = summarize(clean)
                stats[metric] = s.to_json()
                w = noise_warning(f"{metric} at {data['offered_pps']:,.0f} pps", s)
                if w and metric != "loss_ratio":
                    warnings.append(w)
        data["statistics"] = stats
        data["repetitions"] = len(reps)
        out.append(data)
    return out, warnings
