"""The rounds phase of a campaign with a budget (quick): a group's switches paired in time.

A group is one scenario, frame size, variant and stack (the verdict's groups). The runner
(campaign/runner.py `_run_grouped`) builds every testbed of a group once (measure/rounds.py
`Bench`), measures each switch's points on it, then, while the group's share of the budget
lasts, takes rounds: one SAMPLE_SECONDS sample of every switch (baseline included) per round, in
a fresh random order each round (RMIT), until every adjacent pair of the ranked switches is
decided (results/paired.py), MAX_ROUNDS, or the share is spent; MIN_ROUNDS rounds (the fewest
that can decide a pair) are taken whatever the budget says.
Each switch's samples are one stored point of kind "rounds" (its search point's parameters,
kind rounds, duration the sample's), written again after every round, so an interrupted run
keeps every finished round and a resumed one numbers its rounds on from there.

The sample, and why (measured, README "Paired rounds"): the received rate with the tester at its
ceiling (CSIT's MRR). It needs no search, so a round takes a second or two and rounds are many;
its ratio between two switches in one round held its sign in 6 of 6 rounds where their NDRs,
minutes apart, ranked them both ways.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from vswbench.campaign.point import Point
from vswbench.errors import VswbenchError
from vswbench.measure.rounds import Bench
from vswbench.results.paired import MIN_ROUNDS
from vswbench.results.paired import Sample
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import all_decided

ROUNDS_KIND = "rounds"
MAX_ROUNDS = 24
ROUND_OVERHEAD_S = 0.3             # per sample beyond its duration: commands, counters (measured)


@dataclass(frozen=True)
class Role:
    stack: str                      # "kernel" or "dpdk"
    baseline: bool                  # no switch in the path (veth, memif)
    ranked: bool                    # a switch to rank (not a calibration device)
    idle_polls: bool                # keeps a CPU busy while idle (frozen between its turns)


def role_of(switch: str) -> Role | None:
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    if cls is None:
        return None
    return Role(cls.port_kind, bool(cls.direct), not cls.direct and not cls.calibration,
                bool(cls.idle_polls))


def group_key(p: Point) -> str:
    """The verdict group of a frame point: its search twin's parameters but the switch, and the
    switch's stack."""
    from vswbench.campaign.point import search_twin

    twin = search_twin(p)
    params = {k: v for k, v in twin.params().items() if k not in ("switch", "repetition")}
    role = role_of(p.switch)
    return json.dumps([params, role.stack if role else "?"], sort_keys=True, default=str)


def grouped(points: Iterable[Point]) -> list[list[Point]]:
    """The points in groups, each group's points in their spec order, groups in order of their
    first point."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(group_key(p), []).append(p)
    return list(groups.values())


def rounds_point(p: Point, sample_s: float) -> Point:
    """The stored point that holds a switch's samples: its search twin's, kind rounds."""
    from vswbench.campaign.point import search_twin

    return replace(search_twin(p), kind=ROUNDS_KIND, preset=None, pdr_loss=None,
                   duration=sample_s, repetition=0)


def result_of(rounds: SwitchRounds, group: list[str], bench: Bench, error: str | None,
              took: list[float]) -> dict[str, Any]:
    """The stored result of a switch's rounds: its samples, and what the headline reads."""
    median = rounds.median_pps
    return {"samples": [x.to_json() for x in rounds.samples], "group": group,
            "rounds": len(rounds.samples), "sample_s": bench.duration,
            "mrr_pps": None if median is None else round(median, 1),
            "at_least": rounds.at_least, "kept_up": rounds.switch not in bench.frozen_switches,
            "round_s": [round(t, 3) for t in took], "error": error}


@dataclass
class RoundsOutcome:
    rounds: int
    decided: bool
    reason: str                     # why the rounds stopped


def run_rounds(bench: Bench, members: dict[str, Point], previous: dict[str, list[Sample]],
               record: Callable[[Point, dict[str, Any]], None], deadline: float,
               rng: random.Random, progress: Callable[[str], None] = lambda m: None
               ) -> RoundsOutcome:
    """Rounds over the bench's switches until decided, MAX_ROUNDS or the deadline."""
    switches = [s for s in members if s in bench.contexts]
    samples = {s: list(previous.get(s, [])) for s in switches}
    ranked = [s for s in switches if (r := role_of(s)) is not None and r.ranked]
    done = {x.round for xs in samples.values() for x in xs}
    nxt = max(done) + 1 if done else 0
    took: list[float] = []
    errors: dict[str, str] = {}
    while True:
        state = [SwitchRounds(s, tuple(samples[s])) for s in ranked if s not in errors]
        count = len({x.round for xs in samples.values() for x in xs})
        if count >= MIN_ROUNDS and all_decided(state):
            return RoundsOutcome(count, True, "every adjacent pair decided")
        if count >= MAX_ROUNDS:
            return RoundsOutcome(count, False, f"{MAX_ROUNDS} rounds")
        active = [s for s in switches if s not in errors]
        if len(active) < 2:
            return RoundsOutcome(count, False, "fewer than two switches to sample")
        need = (statistics.fmean(took) if took
                else len(active) * (bench.duration + ROUND_OVERHEAD_S))
        if count >= MIN_ROUNDS and time.monotonic() + need > deadline:
            return RoundsOutcome(count, False, "the budget's share for this group spent")
        order = list(active)
        rng.shuffle(order)
        began = time.monotonic()
        for position, s in enumerate(order):
            try:
                m = bench.sample(s)
            except VswbenchError as exc:
                errors[s] = str(exc)
                continue
            samples[s].append(Sample(s, nxt, position, m.duration_s, m.sent, m.received,
                                     m.stall_ms, m.host_stall, m.ceiling_pps))
        took.append(time.monotonic() - began)
        for s in switches:
            record(members[s], result_of(SwitchRounds(s, tuple(samples[s])), switches,
                                         bench, errors.get(s), took))
        progress(f"round {nxt + 1}: " + ", ".join(
            f"{s} {samples[s][-1].received_pps / 1e6:.3f}" for s in order
            if samples[s] and samples[s][-1].round == nxt) + " Mpps")
        nxt += 1
