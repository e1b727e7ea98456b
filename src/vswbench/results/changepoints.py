"""Change points of a series of runs: FD.io CSIT's `jumpavg` (minimum description length).

jumpavg (PyPI `jumpavg`, CSIT's own implementation) splits a series of values, oldest first, into
consecutive groups so that the bits needed to describe the series (each group by its average and
spread) are fewest: a new group costs bits, so the series is only split where its values jump by
more than their own spread explains. A series of noise around one level is one group; a step is
two. CSIT marks a group whose average is below the previous group's as a regression (throughput:
higher is better) and above as a progression; `vswbench compare` (over three or more runs) and
`vswbench trend` (results/trend.py) both read the groups here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """Values [start, end) of the series (indices, oldest first): one level by jumpavg."""
    start: int
    end: int
    mean: float
    stdev: float

    @property
    def size(self) -> int:
        return self.end - self.start


def groups(values: Sequence[float]) -> list[Group]:
    """The series' jumpavg groups, oldest first (one group: no change). Empty for no values."""
    if not values:
        return []
    from jumpavg import classify

    out: list[Group] = []
    start = 0
    for g in classify([float(v) for v in values]):
        size = len(g.run_list)
        out.append(Group(start, start + size, float(g.stats.avg), float(g.stats.stdev)))
        start += size
    return out


def series_groups(values: Sequence[float]) -> int:
    """How many groups jumpavg sees in a series (1: no change)."""
    return len(groups(values))
