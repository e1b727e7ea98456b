"""One row of a verdict table (`Entry`: a ranked switch or a reference row) and the one way a
rate is printed in a verdict (`mpps`); report/verdict.py ranks them, verdict_paired.py where the
campaign paired the group in rounds."""

from __future__ import annotations

from dataclasses import dataclass

from vswbench.report.backends import BackendInfo
from vswbench.report.data import RankingRow
from vswbench.results.decide import Contender
from vswbench.results.paired import SwitchRounds

Interval = tuple[float, float]


def mpps(pps: float | None) -> str:
    """Mpps with three significant digits, never cut: 0.435, 2.91, 10.0, 16.2."""
    if pps is None:
        return "–"
    v = pps / 1e6
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


@dataclass(frozen=True)
class Entry:
    """One row of a verdict table: a ranked switch or a reference (baseline, calibration)."""
    row: RankingRow
    info: BackendInfo
    interval: Interval | None            # the noise interval of the tie rule (pps)
    rank: int | None = None              # None: a reference row
    tied: bool = False                   # shares its rank with another row
    ndrs: tuple[float, ...] = ()         # one NDR per repetition
    paired: SwitchRounds | None = None   # its samples in the group's rounds, if it had any

    @property
    def contender(self) -> Contender:
        return Contender(self.switch, self.ndrs or ((self.row.ndr_pps,) if self.row.ndr_pps
                                                    else ()), self.interval)

    @property
    def switch(self) -> str:
        return self.row.setup.switch

    @property
    def headline_pps(self) -> float | None:
        """What the row is ranked by: its rounds' median received rate (MRR) where the group
        was paired in rounds, else its NDR goal's conditional throughput."""
        if self.paired is not None and self.paired.median_pps:
            return self.paired.median_pps
        return self.row.ndr_pps

    @property
    def at_least(self) -> bool:
        """Its headline is the tester's limit, not its own (lossless samples, generator-bound)."""
        if self.paired is not None and self.paired.median_pps:
            return self.paired.at_least
        return self.row.generator_bound

    @property
    def stated_range(self) -> Interval | None:
        """The range stated with the headline, from samples spread through the run: the rounds'
        (results/paired.py), else the span of two or more repetitions; never one search's
        bracket."""
        if self.paired is not None and self.paired.interval is not None:
            return self.paired.interval
        if len(self.ndrs) >= 2:
            return min(self.ndrs), max(self.ndrs)
        return None

