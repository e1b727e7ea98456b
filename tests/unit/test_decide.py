"""Pairs of switches decided at 95 % confidence (results/decide.py) and the campaign's decide phase
(campaign/decide_phase.py, CampaignRunner._decide): repeated where open, interleaved, budgeted."""
from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from vswbench.campaign.decide_phase import MAX_REPETITIONS
from vswbench.campaign.decide_phase import next_round
from vswbench.campaign.decide_phase import open_pairs
from vswbench.campaign.runner import CampaignRunner
from vswbench.campaign.runner import Progress
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.results.decide import Contender
from vswbench.results.decide import adjacent
from vswbench.results.decide import decide
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "d"
budget = "5m"

[[study]]
kind = "search"
switch = ["bridge", "router", "veth"]
scenario = "p2p"
size = 64
preset = "quick"
"""


def test_three_against_three_all_above_is_decided_by_the_rank_test() -> None:
    d = decide(Contender("a", (3.0, 3.1, 3.2), (2.0, 4.0)), Contender("b", (1.0, 1.1, 1.2), (1.0, 3.5)))
    assert d.decided and d.how == "rank test" and d.p_value == pytest.approx(0.05)
    assert d.upper.name == "a" and d.wins == 3 and d.paired == 3
    assert d.describe() == "a leads b by 2.82x (rank test p = 0.050, 3 of 3 repetitions)"


def test_two_against_two_never_decides_by_rank_but_by_separate_ranges() -> None:
    apart = decide(Contender("a", (2.0, 2.1), (1.9, 2.2)), Contender("b", (1.0, 1.1), (0.9, 1.2)))
    assert apart.decided and apart.how == "noise ranges apart" and apart.p_value > 0.05
    overlap = decide(Contender("a", (1.4, 1.45), (1.0, 2.2)), Contender("b", (1.0, 1.1), (0.9, 1.2)))
    assert not overlap.decided and overlap.how == "open"
    gap = decide(Contender("a", (2.0, 2.1), (1.0, 2.2)), Contender("b", (1.0, 1.1), (0.9, 1.2)))
    assert gap.decided and gap.how == "gap" and gap.how_text() == "1.95x apart, 2 of 2 repetitions"
    assert "overlap" in overlap.describe() and "not decided at 95 % confidence" in overlap.describe()


def test_adjacent_orders_by_median() -> None:
    pairs = adjacent([Contender("slow", (1.0,), None), Contender("fast", (3.0,), None),
                      Contender("mid", (2.0,), None)])
    assert [(p.upper.name, p.lower.name) for p in pairs] == [("fast", "mid"), ("mid", "slow")]


def _result(ndr: float, low: float) -> dict:
    """A search's stored result (a test double, not a measurement): NDR, its final bracket
    [low, 1.02 x NDR] and two trials (one at `low` lost frames)."""
    return {"ndr_pps": ndr, "pdr_pps": ndr, "lower_bound_pps": low, "upper_bound_pps": ndr * 1.02,
            "goals": [{"name": "NDR", "lower_bound_pps": low, "upper_bound_pps": ndr * 1.02,
                       "loss_ratio": 0.0}],
            "trials": [{"intended_pps": ndr, "intended_count": 1000, "lost": 0},
                       {"intended_pps": low, "intended_count": 1000, "lost": 3}]}


def _store(tmp_path, first: dict[str, tuple[float, float]]):
    spec = parse_spec(SPEC)
    store = ResultStore(tmp_path / "results.sqlite")
    store.begin_run("vsb0001", spec)
    for p in expand(spec):
        store.record_point("vsb0001", p, _result(*first[p.switch]), "done", None)
    return spec, store


def test_open_pairs_finds_overlapping_neighbours_and_a_switch_above_its_baseline(tmp_path) -> None:
    # bridge 500k (bracket down to 300k) overlaps router 450k and is above its baseline veth
    spec, store = _store(tmp_path, {"bridge": (500e3, 300e3), "router": (450e3, 400e3),
                                    "veth": (480e3, 470e3)})
    with store:
        opens = open_pairs(expand(spec), store.points("d"))
        names = sorted(tuple(sorted(p.switch for p in o.points)) for o in opens)
        assert names == [("bridge", "router"), ("bridge", "veth")]
        batch = next_round(opens, store.points("d"), random.Random(1))
        assert sorted((p.switch, p.repetition) for p in batch) == [
            ("bridge", 1), ("router", 1), ("veth", 1)]


def test_decide_phase_repeats_interleaved_until_decided(tmp_path, monkeypatch) -> None:
    spec, store = _store(tmp_path, {"bridge": (500e3, 300e3), "router": (450e3, 300e3),
                                    "veth": (900e3, 880e3)})
    runner = CampaignRunner(spec, tmp_path)
    ran: list[tuple[str, int]] = []
    true_ndr = {"bridge": 500e3, "router": 440e3, "veth": 900e3}

    def fake_run_points(st, run_id, todo, prog):
        for p in todo:
            ran.append((p.switch, p.repetition))
            ndr = true_ndr[p.switch] * (1 + 0.01 * p.repetition)
            runner._record(st, run_id, p, _result(ndr, 0.6 * ndr), "done", None, None)
            runner._advance(prog, p, "done")
        return len(todo), 0, 0
    monkeypatch.setattr(runner, "_run_points", fake_run_points)
    runner.search_seconds.update({"bridge": [0.0], "router": [0.0], "veth": [0.0]})
    with store:
        prog = Progress(3)
        done, skipped, failed = runner._decide(store, "vsb0001", prog, time.monotonic() + 600)
    # bridge and router overlap until three repetitions each decide them by the rank test
    assert (done, skipped, failed) == (4, 0, 0)
    # the bar's total stays the spec's points: the repetitions are counted apart (issue 44)
    assert (prog.total, prog.done, prog.repeats) == (3, 0, 4)
    assert sorted(ran) == [("bridge", 1), ("bridge", 2), ("router", 1), ("router", 2)]
    rounds = [set(ran[:2]), set(ran[2:])]           # one repetition of each per round
    assert rounds == [{("bridge", 1), ("router", 1)}, {("bridge", 2), ("router", 2)}]


def test_decide_phase_stops_at_the_budget_and_at_max_repetitions(tmp_path, monkeypatch) -> None:
    spec, store = _store(tmp_path, {"bridge": (500e3, 300e3), "router": (490e3, 300e3),
                                    "veth": (900e3, 880e3)})
    runner = CampaignRunner(spec, tmp_path)
    ran: list[str] = []

    def fake_run_points(st, run_id, todo, prog):      # alternating winners: never decided
        for p in todo:
            ran.append(p.switch)
            ndr = 500e3 + (1 if (p.repetition % 2) == (p.switch == "bridge") else -1) * 5e3
            runner._record(st, run_id, p, _result(ndr, 300e3), "done", None, None)
        return len(todo), 0, 0
    monkeypatch.setattr(runner, "_run_points", fake_run_points)
    runner.search_seconds.update({"bridge": [1.0], "router": [1.0]})
    with store:
        assert runner._decide(store, "vsb0001", Progress(3), time.monotonic() + 2.0) == (0, 0, 0)
        assert ran == []                             # one search (1 s + a testbed) does not fit
        runner._decide(store, "vsb0001", Progress(3), time.monotonic() + 3600)
    assert sorted(ran) == ["bridge"] * (MAX_REPETITIONS - 1) + ["router"] * (MAX_REPETITIONS - 1)


def test_budget_in_the_campaign_table() -> None:
    assert parse_spec(SPEC).budget_s == 300.0
    assert parse_spec(SPEC.replace('"5m"', '"1h2m3s"')).budget_s == 3723.0
    assert parse_spec(SPEC.replace('"5m"', "90")).budget_s == 90.0
    for bad in ('"soon"', '"5 m"', "0", "-1", "1e308", '"٥m"'):
        with pytest.raises(Exception, match="budget"):
            parse_spec(SPEC.replace('"5m"', bad))


def test_a_pair_decided_on_single_searches_less_than_2x_apart_is_confirmed(tmp_path) -> None:
    from vswbench.campaign.decide_phase import CONFIRM_RATIO

    # bridge 1.7x router, each one search with a tight bracket: decided, but on one search each
    spec, store = _store(tmp_path, {"bridge": (500e3, 495e3), "router": (290e3, 287e3),
                                    "veth": (900e3, 890e3)})
    with store:
        opens = open_pairs(expand(spec), store.points("d"))
        assert [tuple(sorted(p.switch for p in o.points)) for o in opens] == [("bridge", "router")]
        assert opens[0].decision.decided                # confirmed, not undecided
        assert CONFIRM_RATIO > 500 / 290
        for p in expand(spec):                          # a second search each, as far apart
            if p.switch in ("bridge", "router"):
                ndr, low = {"bridge": (505e3, 500e3), "router": (292e3, 289e3)}[p.switch]
                store.record_point("vsb0001", replace(p, repetition=1), _result(ndr, low),
                                   "done", None)
        assert open_pairs(expand(spec), store.points("d")) == []
    # 2.5x apart on one search each: decided by the gap, no confirmation spent
    spec, store = _store(tmp_path / "b", {"bridge": (500e3, 495e3), "router": (200e3, 198e3),
                                          "veth": (900e3, 890e3)})
    with store:
        assert open_pairs(expand(spec), store.points("d")) == []
