"""Load curves and latency distributions of stored sweeps and latency points, as typed series.

A sweep (offered load from low to beyond saturation) and a latency point (a few fractions of the
NDR) each become a `LoadSeries` of `LoadPoint`s with the engine's latency histogram, read here
once for the report's plots and the delay model (models/delay_data.py) alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vswbench.results.points import (StoredResults, Setup, number, repetition_of, setup_of,
                                     size_order)

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
    stored_lat = raw.get("latency_us")
    lat = stored_lat if isinstance(stored_lat, dict) else {}
    lost = raw.get("lost")
    return LoadPoint(offered, number(raw.get("achieved_pps")), number(raw.get("loss_ratio")),
                     {k: number(v) for k, v in lat.items()}, parse_histogram(raw.get("histogram")),
                     number(raw.get("fraction_of_ndr")),
                     lost if isinstance(lost, int) and not isinstance(lost, bool) else None,
                     number(raw.get("cycles_per_packet")))


def load_series(data: StoredResults, kind: str) -> list[LoadSeries]:
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

