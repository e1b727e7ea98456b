"""The decide phase: after a campaign's first pass, its budget goes where the answer is still open.

A campaign with `[campaign] budget` (quick: 7 minutes in all) first runs every point once. Then,
while the budget lasts, it finds the neighbouring switches (in order of median NDR, per scenario,
frame size, variant and stack) whose searches do not yet decide which is faster
(results/decide.py: a rank test over repetitions, or noise ranges apart), or decided it on one
search of either side though less than CONFIRM_RATIO apart, and a switch whose
median NDR is above its own baseline's (the no-switch path) without that being decided either. It
repeats their searches, each on a fresh testbed, in a randomised interleaved order (RMIT: a round
runs one more repetition of every open setup, shuffled; never all of one switch, then all of the
next), round after round, until every pair is decided, the budget is spent, or the open setups
have MAX_REPETITIONS. What is still open then is a tie, and the verdict says why.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace

from vswbench.campaign.point import Point
from vswbench.results.decide import Contender
from vswbench.results.decide import PairDecision
from vswbench.results.decide import decide
from vswbench.results.decide import noise_range
from vswbench.results.noise import search_noise
from vswbench.results.points import read_point
from vswbench.results.store import StoredPoint

MAX_REPETITIONS = 6                 # per setup, the first pass's included
# A pair decided on one search of either side is confirmed (both repeated, as an open pair is)
# while their medians are less than this far apart: on this VM one search fell 1.7-3.5x below the
# same switch's others (tc-bpf 1518 B 0.184 against 0.64-0.65 Mpps; ovs 0.038 against 0.073-0.094),
# and a pair decided on it was decided the other way in the next run.
CONFIRM_RATIO = 2.0


@dataclass(frozen=True)
class Role:
    stack: str                      # "kernel" or "dpdk"
    baseline: bool                  # no switch in the path (veth, memif)
    ranked: bool                    # a switch to rank (not a calibration device)


def role_of(switch: str) -> Role | None:
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    if cls is None:
        return None
    return Role(cls.port_kind, bool(cls.direct), not cls.direct and not cls.calibration)


def _group_key(p: Point) -> str:
    params = {k: v for k, v in p.params().items() if k not in ("switch", "repetition")}
    role = role_of(p.switch)
    return json.dumps([params, role.stack if role else "?"], sort_keys=True, default=str)


@dataclass(frozen=True)
class Open:
    """An undecided pair and the first-repetition points of its two setups."""
    decision: PairDecision
    points: tuple[Point, Point]


def repetitions(base: Point, stored: dict[str, StoredPoint]) -> list[StoredPoint]:
    """The stored, finished repetitions of `base` (a search point of repetition 0)."""
    found = []
    for rep in range(MAX_REPETITIONS):
        s = stored.get(replace(base, repetition=rep).key)
        if s is not None and s.status == "done":
            found.append(s)
    return found


def contender(base: Point, stored: dict[str, StoredPoint]) -> tuple[Contender, bool]:
    """The setup's NDRs and noise range (results/decide.py noise_range, as the verdict takes
    it); and whether it reached the tester's ceiling."""
    heads = [read_point(s).headline for s in repetitions(base, stored)]
    heads = [h for h in heads if h.ndr_pps is not None]
    ndrs = tuple(h.ndr_pps for h in heads if h.ndr_pps is not None)
    bracket, preset = None, None
    if heads:
        chosen = sorted(heads, key=lambda h: h.ndr_pps or 0.0)[len(heads) // 2]
        preset = chosen.preset
        if chosen.lower_bound_pps is not None:
            bracket = (chosen.lower_bound_pps, chosen.upper_bound_pps or chosen.lower_bound_pps)
    bound = any(bool(h.generator_bound) for h in heads)
    return Contender(base.switch, ndrs, noise_range(ndrs, bracket, search_noise(preset))), bound


def unconfirmed(d: PairDecision) -> bool:
    """Decided on a single search of either side, with medians less than CONFIRM_RATIO apart."""
    ratio = d.ratio
    return (d.decided and min(len(d.upper.ndrs), len(d.lower.ndrs)) < 2
            and ratio is not None and ratio < CONFIRM_RATIO)


Measured = tuple[Point, Contender, bool]     # a search setup, its NDRs, at the tester's ceiling


def _role(p: Point) -> Role:
    role = role_of(p.switch)
    assert role is not None, p.switch          # the groups hold switches with a role only
    return role


def open_pairs(points: Iterable[Point], stored_points: Iterable[StoredPoint]) -> list[Open]:
    """Every undecided or unconfirmed neighbour pair (and switch-above-baseline pair) of the
    searches."""
    stored = {s.key: s for s in stored_points}
    groups: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        if p.kind == "search" and p.repetition == 0 and role_of(p.switch) is not None:
            groups[_group_key(p)].append(p)
    out: list[Open] = []
    for members in groups.values():
        measured: list[Measured] = []
        for p in members:
            c, bound = contender(p, stored)
            if c.ndrs:
                measured.append((p, c, bound))
        ranked = sorted((x for x in measured if _role(x[0]).ranked),
                        key=lambda x: (-x[1].median, x[0].switch))
        out += _open_neighbours(ranked)
        out += _open_above_baselines(ranked, [x for x in measured if _role(x[0]).baseline])
    return out


def _open(d: PairDecision, pair: tuple[Point, Point]) -> list[Open]:
    return [Open(d, pair)] if not d.decided or unconfirmed(d) else []


def _open_neighbours(ranked: list[Measured]) -> list[Open]:
    """Neighbours in NDR order not decided (or not confirmed), unless the tester stopped both."""
    out: list[Open] = []
    for (pa, ca, ba), (pb, cb, bb) in zip(ranked, ranked[1:]):
        if ba and bb:            # both at the tester's ceiling: the tester stopped them
            continue
        out += _open(decide(ca, cb), (pa, pb))
    return out


def _open_above_baselines(ranked: list[Measured], baselines: list[Measured]) -> list[Open]:
    """Switches whose median is above a baseline's without that being decided."""
    out: list[Open] = []
    for pb, cb, bb in baselines:
        for p, c, bound in ranked:
            if c.median > cb.median and not (bound and bb):
                out += _open(decide(c, cb), (p, pb))
    return out


def next_round(opens: Iterable[Open], stored_points: Iterable[StoredPoint],
               rng: random.Random) -> list[Point]:
    """One more repetition of every setup in an open pair, shuffled (RMIT)."""
    stored = {s.key: s for s in stored_points}
    bases: dict[str, Point] = {}
    for o in opens:
        for p in o.points:
            bases.setdefault(p.key, p)
    out = []
    for base in bases.values():
        taken = [rep for rep in range(MAX_REPETITIONS)
                 if replace(base, repetition=rep).key in stored]
        nxt = (max(taken) + 1) if taken else 0
        if nxt < MAX_REPETITIONS:
            out.append(replace(base, repetition=nxt))
    rng.shuffle(out)
    return out
