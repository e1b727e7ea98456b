"""The rounds phase (campaign/rounds_phase.py) over a fake bench: MIN_ROUNDS whatever the
deadline, a fresh random order each round, every round recorded, stopping once every adjacent
pair is decided. Synthetic samples: NOT MEASUREMENTS."""

from __future__ import annotations

import random
import time

from vswbench.campaign.point import Point
from vswbench.campaign.rounds_phase import MAX_ROUNDS
from vswbench.campaign.rounds_phase import run_rounds
from vswbench.measure.rounds import Measured
from vswbench.results.paired import MIN_ROUNDS

RATES = {"xdp": 2.0e6, "bridge": 0.5e6, "router": 0.8e6}


class FakeBench:
    duration = 0.5
    frozen_switches: tuple[str, ...] = ()

    def __init__(self, rates: dict[str, float]) -> None:
        self.contexts = dict.fromkeys(rates)
        self.rates = rates
        self.calls: list[str] = []
        self.mood = random.Random(3)
        self.moods: list[float] = []

    def sample(self, switch: str) -> Measured:
        """The host's mood moves 2x from round to round, the same for every switch of a round;
        switches of equal rate alternate +-15 % round by round (never one way throughout, and
        too far apart to be decided equal within 10 %)."""
        n = len(self.rates)
        if len(self.calls) % n == 0:
            self.moods.append(1 + self.mood.random())
        self.calls.append(switch)
        r = len(self.moods) - 1
        jitter = 1 + 0.15 * (1 if (r + sorted(self.rates).index(switch)) % 2 else -1)
        got = int(self.rates[switch] * self.duration * self.moods[-1] * jitter)
        return Measured(self.duration, got * 2, got, 0.0, None)


def point(switch: str) -> Point:
    return Point("search", switch, "p2p", 64, None, 1, 1, "default", "brief", None, None, None,
                 "auto", (), None, None, None)


def run(rates: dict[str, float], deadline: float) -> tuple[FakeBench, list, object]:
    bench = FakeBench(rates)
    recorded: list = []
    outcome = run_rounds(bench, {s: point(s) for s in rates}, {},  # type: ignore[arg-type]
                         lambda p, r: recorded.append((p.switch, r)), deadline,
                         random.Random(11))
    return bench, recorded, outcome


def test_min_rounds_whatever_the_deadline_then_stop_when_decided() -> None:
    bench, recorded, outcome = run(RATES, deadline=time.monotonic() - 1)
    assert outcome.rounds == MIN_ROUNDS and outcome.decided     # distinct rates: decided at 6
    assert len(bench.calls) == MIN_ROUNDS * len(RATES)
    rounds = [bench.calls[i:i + 3] for i in range(0, len(bench.calls), 3)]
    assert all(sorted(r) == sorted(RATES) for r in rounds)      # each switch once per round
    assert len({tuple(r) for r in rounds}) > 1                  # the order changes (seeded)
    assert len(recorded) == MIN_ROUNDS * len(RATES)             # every switch, every round
    last = {s: r for s, r in recorded}
    assert all(r["rounds"] == MIN_ROUNDS and r["mrr_pps"] > 0 for r in last.values())


def test_a_tie_goes_on_to_max_rounds_while_the_budget_lasts() -> None:
    _, _, outcome = run({"bridge": 1e6, "router": 1e6}, deadline=time.monotonic() + 600)
    assert outcome.rounds == MAX_ROUNDS and not outcome.decided


def test_a_tie_stops_at_the_deadline_after_min_rounds() -> None:
    _, _, outcome = run({"bridge": 1e6, "router": 1e6}, deadline=time.monotonic() - 1)
    assert outcome.rounds == MIN_ROUNDS and "budget" in outcome.reason
