"""Searches grouped by setup: the median repetition and the latency matched to it, one way for all.

The report's ranking and `vswbench compare` both show one row per setup that has a finished
search (points.Setup: switch, scenario, frame size and the non-default knobs); a campaign's
repetitions (fresh testbeds) of a setup are one row. Both build it here:

- NDR, PDR, cycles per packet (and useful cycles): each the median over the repetitions that
  measured it (statistics.median: of an even count, the mean of the middle two); the bounds and
  the generator bound come from the `chosen` repetition, the one whose NDR is the median (the
  upper one of an even count); what the trials at the NDR's load lost: the worst repetition's;
- latency at 90 % of the NDR (points.LATENCY_FRACTION): the median of every percentile, of
  jitter and IPDV over the setup's latency points that measured that fraction, with the worst
  loss among them (the most frames lost, the highest loss ratio; counters agree only when they
  agreed in every one); a setup without latency points of its own
  takes those of the only latency setup with its switch, scenario and frame size (a flows=8
  search beside a default latency point); failing both, the chosen search's own --latency-at.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vswbench.engine.records import LatencySummary
from vswbench.results.loss import LoadLoss
from vswbench.results.loss import LossAround
from vswbench.results.loss import combine_around
from vswbench.results.points import Latency
from vswbench.results.points import PointRecord
from vswbench.results.points import Setup

LatencyTable = dict[Setup, Latency]


@dataclass(frozen=True)
class SetupSearches:
    setup: Setup
    repetitions: tuple[PointRecord, ...]     # the setup's finished searches, in store order
    chosen: PointRecord                      # the repetition whose NDR is the median
    ndr_pps: float | None                    # median over the repetitions
    ndr_cv: float | None                     # over the repetitions, else the search's own
    latency: Latency | None                  # at LATENCY_FRACTION of the NDR (see above)
    pdr_pps: float | None = None             # medians over the repetitions
    cycles_per_packet: float | None = None
    useful_cycles_per_packet: float | None = None
    ndr_load_loss: LoadLoss | None = None    # the worst repetition's
    loss_around_ndr: LossAround | None = None  # every repetition's, against the median NDR

    @property
    def ndr_values(self) -> tuple[float, ...]:
        return tuple(v for v in (r.headline.ndr_pps for r in self.repetitions) if v is not None)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _median_of(items: Iterable[object], attr: str) -> float | None:
    """The median of the items' `attr` where it is not None."""
    return _median([v for v in (getattr(x, attr) for x in items) if v is not None])


def _cv(values: Sequence[float]) -> float | None:
    if len(values) < 2 or not statistics.fmean(values):
        return None
    return statistics.stdev(values) / abs(statistics.fmean(values))


def _worst_loss(lats: Sequence[Latency]) -> dict[str, object]:
    lost = [x.lost_frames for x in lats if x.lost_frames is not None]
    ratios = [x.loss_ratio for x in lats if x.loss_ratio is not None]
    agree = [x.counters_agree for x in lats if x.counters_agree is not None]
    worst = max(lats, key=lambda x: (x.loss_ratio or 0.0, x.lost_frames or 0))
    return {"lost_frames": max(lost) if lost else None,
            "loss_ratio": max(ratios) if ratios else None,
            "counters_agree": all(agree) if agree else None,
            "host_stall": worst.host_stall}      # whether a stall explains the worst loss


SUMMARY_FIELDS = ("p50", "p90", "p99", "p999", "p9999", "min", "max", "mean", "stddev", "p25",
                  "p95")
MEDIAN_FIELDS = ("jitter_us", "ipdv_p1_us", "ipdv_p50_us", "ipdv_p99_us")


def latency_by_setup(records: Iterable[PointRecord]) -> LatencyTable:
    """Per setup, the medians of its latency points' percentiles at LATENCY_FRACTION, with the
    worst loss among them."""
    found: dict[Setup, list[Latency]] = defaultdict(list)
    for r in records:
        if r.kind == "latency" and r.done and r.headline.latency is not None:
            found[r.setup].append(r.headline.latency)
    out = {}
    for setup, lats in found.items():
        summaries = [lat.summary for lat in lats]
        counts = [s.count for s in summaries]
        summary = LatencySummary(count=int(statistics.median(counts)),
                                 **{f: _median_of(summaries, f) for f in SUMMARY_FIELDS})
        medians: dict[str, Any] = {f: _median_of(lats, f) for f in MEDIAN_FIELDS}
        worst: dict[str, Any] = _worst_loss(lats)
        out[setup] = Latency(lats[0].fraction_of_ndr, summary, **medians, **worst)
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
        heads = [r.headline for r in reps]
        losses = [r.headline.ndr_load_loss for r in reps if r.headline.ndr_load_loss]
        worst = max(losses, key=lambda x: (x.worst_loss_ratio, x.time_over_goal),
                    default=None)
        below = combine_around([h.loss_around_ndr for h in heads if h.loss_around_ndr],
                              _median(ndrs))
        out.append(SetupSearches(setup, tuple(reps), chosen, _median(ndrs),
                                 _cv(ndrs) if len(ndrs) > 1 else chosen.headline.ndr_cv,
                                 latency, _median_of(heads, "pdr_pps"),
                                 _median_of(heads, "cycles_per_packet"),
                                 _median_of(heads, "useful_cycles_per_packet"), worst, below))
    return out
