"""How long a campaign takes: each point's estimated seconds, the testbeds' builds, the budget.

`vswbench run` prints the estimate first (and refuses more than 1,000 points or 12 hours
without --yes); the runner's progress counts it down; the rounds phase plans with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from vswbench.campaign.point import Point
from vswbench.campaign.point import search_twin

EST_SECONDS = {"search": 45.0, "trial": 0.5, "b2b": 40.0, "rule-update": 30.0}
# Fitted (least squares) to whole runs measured here: quick's first pass (300-340 s), chains.toml
# (38.5-41 min), error-bars.toml (5 min), functions.toml (8 min), pinning.toml (7 min 49 s):
# a quick search about 6 s of trials; a testbed (build, warm-up, teardown) 6.5 s, counted with
# the first point of each; a trial its duration and 0.5 s; a perf-profiled point 30 s more.
QUICK_SEARCH_SECONDS = 6.0
TESTBED_SECONDS = 6.5
PROFILE_SECONDS = 30.0
# a socket point: server start, the probe of the TSC, stop; its testbed (no engine warm-up, no
# calibration). Fitted to specs/sockets.toml measured here: 40 points of 3 s in 138 s, quiet
SOCKET_OVERHEAD_SECONDS = 0.3
SOCKET_TESTBED_SECONDS = 0.8


def testbed_key(p: Point) -> tuple[Any, ...]:
    return (p.switch, p.scenario, p.placement, p.options, p.shape_pps, p.io, str(p.size), p.flows,
            p.burst, p.churn, p.proto, p.mtu, p.offloads, p.service)


def estimate(point: Point, twin_searched: bool = False) -> float:
    """Seconds one point takes, testbed build included; a latency point searches its NDR first
    unless its search twin is in the same campaign (`twin_searched`)."""
    if point.kind == "sweep":
        return (point.points or 20) * ((point.duration or 2.0) + 0.1)
    if point.kind == "latency":
        trials = len(point.fractions or (1,)) * ((point.duration or 5.0) + 0.1)
        if twin_searched:
            return trials
        search = (QUICK_SEARCH_SECONDS if point.preset in ("quick", "brief")
                  else EST_SECONDS["search"])
        return search + trials
    if point.proto is not None:        # stream, rr, crr: one client run (and its probe)
        return (point.duration or 5.0) + SOCKET_OVERHEAD_SECONDS
    extra = PROFILE_SECONDS if point.profile else 0.0
    if point.kind == "trial":
        return (point.duration or 5.0) + EST_SECONDS["trial"] + extra
    if point.kind == "search" and point.preset in ("quick", "brief"):
        return QUICK_SEARCH_SECONDS + extra
    return EST_SECONDS.get(point.kind, 30.0) + extra


MAX_POINTS_WITHOUT_YES = 1_000
MAX_SECONDS_WITHOUT_YES = 12 * 3600.0


@dataclass(frozen=True)
class CampaignSize:
    points: int
    seconds: float                  # estimated from per-kind estimates (testbed builds included)

    def describe(self) -> str:
        hours, rest = divmod(int(self.seconds + 30), 3600)     # to the nearest minute
        return (f"{self.points:,} points, about {hours} h {rest // 60:02d} min"
                if hours else f"{self.points:,} points, about {max(1, rest // 60)} min")

    def refusal(self) -> str | None:
        """Why a campaign this big needs --yes (None: it does not)."""
        if self.points > MAX_POINTS_WITHOUT_YES or self.seconds > MAX_SECONDS_WITHOUT_YES:
            return (f"this campaign is {self.describe()}: more than {MAX_POINTS_WITHOUT_YES:,} "
                    f"points or {MAX_SECONDS_WITHOUT_YES / 3600:g} hours; shrink the spec's lists "
                    "or add --yes to run it anyway")
        return None


def estimates(points: list[Point]) -> dict[str, float]:
    """Each point's estimated seconds by key: a latency point whose search twin is in the list
    reuses that NDR instead of searching again; the first point of each testbed counts its
    build (TESTBED_SECONDS)."""
    searches = {p.key for p in points if p.kind == "search"}
    out = {p.key: estimate(p, p.kind == "latency" and search_twin(p).key in searches)
           for p in points}
    for _, group in groupby(points, key=testbed_key):
        first = next(group)
        out[first.key] += SOCKET_TESTBED_SECONDS if first.proto is not None else TESTBED_SECONDS
    return out


def campaign_size(points: list[Point], budget_s: float | None = None) -> CampaignSize:
    """The points and their estimated seconds; a campaign with a budget spends what its first
    pass leaves of it on paired rounds (campaign/rounds_phase.py), so it takes about the
    budget."""
    first_pass = sum(estimates(points).values())
    return CampaignSize(len(points), max(first_pass, budget_s or 0.0))
