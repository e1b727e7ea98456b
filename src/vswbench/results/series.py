"""Load curves and latency distributions of stored sweeps and latency points, as typed series.

A sweep (offered load from low to beyond saturation) and a latency point (a few fractions of the
NDR) each become a `LoadSeries` of `LoadPoint`s (record.py: the one stored load point, with the
engine's LatencySummary and HistogramBucket), read here once for the report's plots and the delay
model (models/delay_data.py) alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vswbench.engine.records import HistogramBucket
from vswbench.engine.records import stored_histogram
from vswbench.jsonvalues import number
from vswbench.results.points import Setup
from vswbench.results.points import StoredResults
from vswbench.results.points import repetition_of
from vswbench.results.points import setup_of
from vswbench.results.points import size_order
from vswbench.results.record import LoadPoint
from vswbench.results.record import load_points

Bucket = HistogramBucket                 # [low_ns, high_ns, count] as the engine writes it
__all__ = ["Bucket", "LoadPoint", "LoadSeries", "load_series", "parse_histogram"]


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
    """[[low_ns, high_ns, count], ...] -> buckets; malformed buckets and empty ones dropped."""
    return stored_histogram(raw)


def load_series(data: StoredResults, kind: str) -> list[LoadSeries]:
    """Every finished sweep (kind "sweep") or latency point (kind "latency"), loads ascending."""
    out = []
    for p in data.done(kind):
        loads = [lp for lp in load_points((p.result or {}).get("points"))
                 if lp.offered_pps is not None]
        if loads:
            out.append(LoadSeries(kind, setup_of(p), repetition_of(p),
                                  tuple(sorted(loads, key=lambda lp: lp.offered_pps or 0.0)),
                                  number((p.result or {}).get("ndr_pps"))))
    return sorted(out, key=lambda s: (s.setup.scenario, size_order(s.setup.size), s.setup.switch,
                                      s.setup.variant, s.repetition))

