"""Searches grouped by setup: the median repetition and the latency matched to it, one way for all.

The report's ranking and `vswbench compare` both show one row per setup that has a finished
search (points.Setup: switch, scenario, frame size and the non-default knobs); a campaign's
repetitions (fresh testbeds) of a setup are one row. Both build it here:

- NDR: the median over the repetitions' NDRs; PDR, cycles per packet, bounds and the generator
  bound come from the `chosen` repetition, the one whose NDR is that median (the upper one of an
  even count), so they belong to one measurement;
- latency at 90 % of the NDR (points.LATENCY_FRACTION): the medians of p50 / p90 / p99 over the
  setup's latency points that measured that fraction; a setup without latency points of its own
  takes those of the only latency setup with its switch, scenario and frame size (a flows=8
  search beside a default latency point); failing both, the chosen search's own --latency-at.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vswbench.results.points import Latency, PointRecord, Setup

LatencyTable = dict[Setup, Latency]


@dataclass(frozen=True)
class SetupSearches:
    setup: Setup
    repetitions: tuple[PointRecord, ...]     # the setup's finished searches, in store order
    chosen: PointRecord                      # the repetition whose NDR is the median
    ndr_pps: float | None                    # median over the repetitions
    ndr_cv: float | None                     # over the repetitions, else the search's own
    latency: Latency | None                  # at LATENCY_FRACTION of the NDR (see above)

    @property
    def ndr_values(self) -> tuple[float, ...]:
        return tuple(v for v in (r.headline.ndr_pps for r in self.repetitions) if v is not None)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _cv(values: Sequence[float]) -> float | None:
    if len(values) < 2 or not statistics.fmean(values):
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def latency_by_setup(records: Iterable[PointRecord]) -> LatencyTable:
    """Per setup, the medians of its latency points' percentiles at LATENCY_FRACTION."""
    found: dict[Setup, list[Latency]] = defaultdict(list)
    for r in records:
        if r.kind == "latency" and r.done and r.headline.latency is not None:
            found[r.setup].append(r.headline.latency)
    out = {}
    for setup, lats in found.items():
        def med(attr: str) -> float | None:
            return _median([v for v in (getattr(x, attr) for x in lats) if v is not None])
        out[setup] = Latency(lats[0].fraction_of_ndr, *(med(f) for f in (
            "p50_us", "p90_us", "p99_us", "p999_us", "p9999_us", "min_us", "max_us", "mean_us",
            "stddev_us", "p25_us", "p95_us")))
    return out


def match_latency(setup: Setup, table: LatencyTable) -> Latency | None:
    """Same setup first; otherwise the only latency setup with this switch, scenario and size."""
    if setup in table:
        return table[setup]
    loose = [v for s, v in table.items()
             if (s.switch, s.scenario, s.size) == (setup.switch, setup.scenario, setup.size)]
    return loose[0] if len(loose) == 1 else None


def search_setups(records: Iterable[PointRecord]) -> list[SetupSearches]:
    """One entry per setup with a finished search, in the order the setups were first stored."""
    records = list(records)
    searches: dict[Setup, list[PointRecord]] = defaultdict(list)
    for r in records:
        if r.kind == "search" and r.done:
            searches[r.setup].append(r)
    table = latency_by_setup(records)
    out = []
    for setup, reps in searches.items():
        ordered = sorted(reps, key=lambda r: r.headline.ndr_pps or 0.0)
        chosen = ordered[len(ordered) // 2]
        ndrs = [v for v in (r.headline.ndr_pps for r in reps) if v is not None]
        latency = match_latency(setup, table)
        if latency is None:                     # a search run with --latency-at
            latency = chosen.headline.latency
        out.append(SetupSearches(setup, tuple(reps), chosen, _median(ndrs),
                                 _cv(ndrs) if len(ndrs) > 1 else chosen.headline.ndr_cv,
                                 latency))
    return out
