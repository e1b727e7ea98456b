"""The report's own shaping of stored results: the ranking table, pairs scaling, histogram curves.

Reading the store and every headline number (NDR, PDR, cycles per packet near the NDR, latency
at 90 % of the NDR, Gbit/s on the wire) is results/points.py's, and grouping searches by setup
with their matched latency results/setups.py's, exactly as export and compare see them. Here:

- `RankingRow`: one per setup with a search, ranked by NDR within its scenario, frame size and
  variant;
- `PairsPoint`: throughput of the pairs:N scenarios against N;
- `ecdf`, `rebin_log`: a latency histogram as the plots draw it.

Nothing here draws or formats; nothing writes to the store.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace

from vswbench.errors import UsageError
from vswbench.results.hostbound import HostBound
from vswbench.results.loss import LoadLoss
from vswbench.results.loss import LossAround
from vswbench.results.points import Latency
from vswbench.results.points import Setup
from vswbench.results.points import StoredResults
from vswbench.results.points import size_order
from vswbench.results.series import Bucket
from vswbench.results.setups import search_setups
from vswbench.units import wire_gbps

PAIRS_RE = re.compile(r"pairs:(\d+)$")


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
    latency: Latency | None = None       # the whole figure: percentiles, its trial's loss, jitter
    ndr_load_loss: LoadLoss | None = None  # what the trials at the NDR's load lost
    loss_around_ndr: LossAround | None = None  # ... and below it (results/loss.py: ill-defined)
    # RFC 2544's NDR, every trial counted: the highest lossless load below any lossy one (None:
    # no trial passed without loss). ndr_pps is MLRsearch's conditional throughput of the NDR
    # goal (an exceed ratio, host-stall trials excised): called NDR only where this equals it.
    classic_ndr_pps: float | None = None
    host_bound: HostBound | None = None      # its search's tester gaps (results/hostbound.py)

    @property
    def ndr_mpps(self) -> float | None:
        return None if self.ndr_pps is None else self.ndr_pps / 1e6

    @property
    def pdr_mpps(self) -> float | None:
        return None if self.pdr_pps is None else self.pdr_pps / 1e6


def ranking(data: StoredResults) -> list[RankingRow]:
    """One row per setup that has a finished search (results.setups.search_setups: the medians
    of NDR, PDR and cycles over repetitions, the generator bound of the median repetition,
    latency at 90 % of the NDR), ranked by NDR within its scenario, frame size and variant."""
    rows = []
    for s in search_setups(data.records()):
        h = s.chosen.headline
        lat = s.latency
        rows.append(RankingRow(0, s.setup, s.ndr_pps, wire_gbps(s.ndr_pps, s.setup.size),
                               s.pdr_pps, wire_gbps(s.pdr_pps, s.setup.size),
                               None if lat is None else lat.p50_us,
                               None if lat is None else lat.p99_us, s.cycles_per_packet,
                               bool(h.generator_bound), h.generator_ceiling_pps,
                               len(s.repetitions), s.ndr_cv, s.useful_cycles_per_packet,
                               lat, s.ndr_load_loss, s.loss_around_ndr,
                               h.classic_ndr_pps, h.host_bound))
    rows.sort(key=lambda r: (r.setup.scenario, size_order(r.setup.size), r.setup.variant,
                             -(r.ndr_pps or -1.0), r.setup.switch))
    ranked, previous, rank = [], None, 0
    for row in rows:
        group = (row.setup.scenario, row.setup.size, row.setup.variant)
        rank = rank + 1 if group == previous else 1
        previous = group
        ranked.append(replace(row, rank=rank))
    return ranked


# -- latency histograms ------------------------------------------------------------------------
def ecdf(buckets: Iterable[Bucket]) -> tuple[list[float], list[float]]:
    """Empirical CDF of a histogram as a step curve in microseconds: x are the bucket upper
    edges (a sample in a bucket is at most its high edge), y the cumulative fraction; the curve
    starts at (lowest low edge, 0). Empty histogram: ([], [])."""
    bs = sorted(buckets)
    total = sum(b[2] for b in bs)
    if not total:
        return [], []
    xs, ys, seen = [bs[0][0] / 1000.0], [0.0], 0
    for _low, high, count in bs:
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


def pairs_points(data: StoredResults) -> list[PairsPoint]:
    """Throughput of every pairs:N point (medians over repetitions), sorted for plotting."""
    found: dict[tuple[str, int | str, str, str, int], list[tuple[float, bool]]] = defaultdict(list)
    for r in data.records():
        m = PAIRS_RE.fullmatch(r.setup.scenario)
        tp = r.throughput()
        if m is None or tp is None:
            continue
        found[(r.setup.switch, r.setup.size, r.setup.variant, tp[0], int(m.group(1)))].append(
            (tp[1], bool(r.headline.generator_bound)))
    out = [PairsPoint(sw, size, var, metric, n, statistics.median(v for v, _ in values),
                      any(b for _, b in values))
           for (sw, size, var, metric, n), values in found.items()]
    return sorted(out, key=lambda q: (q.metric, size_order(q.size), q.switch, q.variant, q.pairs))
