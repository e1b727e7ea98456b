"""Paired rounds (results/paired.py): a known order is decided, no order is a tie, a lossless
switch is "at least" its figure and never ranked below one it may beat. Synthetic rounds,
labelled as such: NOT MEASUREMENTS."""

from __future__ import annotations

import random

from vswbench.results.paired import MIN_ROUNDS
from vswbench.results.paired import Sample
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import all_decided
from vswbench.results.paired import decide_pair
from vswbench.results.paired import rank


def rounds(switch: str, rates: list[float], loss: float = 0.2) -> SwitchRounds:
    """Synthetic samples: received rate `rate` with `loss` of what was sent lost."""
    out = []
    for i, rate in enumerate(rates):
        received = int(rate)
        sent = int(received / (1 - loss)) if loss < 1 else received
        out.append(Sample(switch, i, 0, 1.0, sent, received))
    return SwitchRounds(switch, tuple(out))


def drifting(n: int, seed: int) -> list[float]:
    """A host whose mood moves 2x over the rounds: every switch's rate scales with it."""
    rng = random.Random(seed)
    return [1.0 + rng.random() for _ in range(n)]


def test_known_order_is_decided_despite_drift() -> None:
    mood = drifting(8, 1)
    router = rounds("router", [550e3 * m * 1.12 for m in mood])
    bridge = rounds("bridge", [550e3 * m for m in mood])
    d = decide_pair(router, bridge)
    assert d.decided and d.upper == "router" and d.wins == 8 and d.rounds == 8
    assert d.ci is not None and 1.0 < d.ci[0] <= 1.12 <= d.ci[1]
    assert d.describe().startswith("router carries more than bridge: 8 of 8 rounds, 1.12x")


def test_no_order_is_a_tie_with_its_reason() -> None:
    rng = random.Random(7)
    mood = drifting(10, 2)
    a = rounds("a", [500e3 * m * (1 + rng.uniform(-0.25, 0.25)) for m in mood])
    b = rounds("b", [500e3 * m * (1 + rng.uniform(-0.25, 0.25)) for m in mood])
    d = decide_pair(a, b)
    assert not d.decided
    assert "tie" in d.describe() and ("p = " in d.reason or "includes 1" in d.reason)


def test_too_few_rounds_never_decide() -> None:
    a = rounds("a", [2e6] * (MIN_ROUNDS - 1))
    b = rounds("b", [1e6] * (MIN_ROUNDS - 1))
    d = decide_pair(a, b)
    assert not d.decided and f"{MIN_ROUNDS} needed" in d.reason


def test_lossless_switch_is_at_least_and_not_ranked_below() -> None:
    mood = drifting(8, 3)
    bridge = rounds("bridge", [450e3 * m for m in mood])
    macvlan = rounds("macvlan", [300e3 * m for m in mood], loss=0.0)   # the tester's limit
    assert macvlan.at_least and not bridge.at_least
    ranked, decisions = rank([bridge, macvlan])
    by = {r.rounds.switch: r for r in ranked}
    assert by["bridge"].rank == 1 and by["macvlan"].rank is None
    assert not decisions[0].decided and "tester's limit" in decisions[0].reason
    assert all_decided([bridge, macvlan])          # more rounds cannot decide it


def test_lossless_switch_above_others_is_ranked_first() -> None:
    mood = drifting(8, 4)
    xdp = rounds("xdp", [2.4e6 * m for m in mood], loss=0.0)
    tc = rounds("tc-mirred", [0.9e6 * m for m in mood])
    ranked, decisions = rank([tc, xdp])
    assert [(r.rounds.switch, r.rank) for r in ranked] == [("xdp", 1), ("tc-mirred", 2)]
    assert decisions[0].decided


def test_rank_ties_and_groups() -> None:
    mood = drifting(8, 5)
    rng = random.Random(9)
    a = rounds("a", [900e3 * m for m in mood])
    b = rounds("b", [600e3 * m * (1 + rng.uniform(-0.25, 0.25)) for m in mood])
    c = rounds("c", [600e3 * m * (1 + rng.uniform(-0.25, 0.25)) for m in mood])
    ranked, _ = rank([a, b, c])
    got = {r.rounds.switch: (r.rank, r.tied) for r in ranked}
    assert got["a"] == (1, False)
    assert got["b"][0] == got["c"][0] == 2 and got["b"][1] and got["c"][1]
    assert not all_decided([a, b, c])


def test_interval_spans_the_rounds() -> None:
    s = rounds("x", [1e6, 1.2e6, 0.9e6, 1.1e6])
    lo, hi = s.interval or (0, 0)
    assert lo < 0.9e6 and hi > 1.2e6 and s.median_pps == 1.05e6


def test_sample_json_round_trip() -> None:
    x = Sample("bridge", 3, 1, 0.5, 1000, 900, 1.5, "stall")
    assert Sample.from_json("bridge", x.to_json()) == x


def test_lossless_below_the_testers_ceiling_is_the_paths_limit() -> None:
    """A DPDK port's full ring holds the tester back: nothing lost, but far below its ceiling,
    so what arrived is the path's limit (ranked), not the tester's (at least)."""
    pushed_back = Sample("testpmd", 0, 0, 0.5, 650_000, 650_000, ceiling_pps=6.5e6)
    at_ceiling = Sample("xdp", 0, 0, 0.5, 3_000_000, 3_000_000, ceiling_pps=6.2e6)
    lossy = Sample("bridge", 0, 0, 0.5, 3_000_000, 300_000, ceiling_pps=6.2e6)
    assert not pushed_back.tester_bound and at_ceiling.tester_bound and not lossy.tester_bound


def test_a_pair_within_the_margin_is_decided_equal_not_left_open() -> None:
    """Over 16 rounds two switches 1.00x apart with 3 % noise: the order is not decided, but
    the ratio's interval lies within 10 %: equal within the margin, and the rounds may stop."""
    rng = random.Random(21)
    mood = drifting(16, 8)
    a = rounds("bridge", [750e3 * m * (1 + rng.uniform(-0.03, 0.03)) for m in mood])
    b = rounds("router", [750e3 * m * (1 + rng.uniform(-0.03, 0.03)) for m in mood])
    d = decide_pair(a, b)
    assert not d.decided and d.equivalent and d.settled
    assert "are equal within 10 %" in d.describe()
    assert all_decided([a, b])
    few = decide_pair(rounds("x", [1e6] * 4), rounds("y", [1e6] * 4))
    assert not few.equivalent                        # too few rounds for any decision
