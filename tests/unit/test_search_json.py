"""A search's result is written and read as one struct too (issue 45, part 1):
SearchResult.to_json is what a search stores, SearchResult.from_json reads it back (and
SessionTrial.from_json each trial's brief), so for any SearchResult r,
`SearchResult.from_json(r.to_json()).to_json() == r.to_json()`; and what its trials at the NDR
lost is the same read from the fresh result (results/loss.search_load_loss, what `vswbench
search` prints) as from its JSON (points.ndr_load_loss, what the report shows). The results here
are made up (Hypothesis draws them), never measurements."""

from __future__ import annotations

import dataclasses
import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.report_fixtures import write_fixture_store
from vswbench.engine.stalls import CpuStalls
from vswbench.engine.stalls import TrialStalls
from vswbench.measure.search import PRESETS
from vswbench.measure.search import Goal
from vswbench.measure.search import GoalOutcome
from vswbench.measure.search import SearchResult
from vswbench.measure.session import UNDETAILED_DISAGREEMENT
from vswbench.measure.session import SessionTrial
from vswbench.measure.trial_result import CounterCheck
from vswbench.measure.trial_result import TrialResult
from vswbench.results.loss import search_load_loss
from vswbench.results.points import load
from vswbench.results.points import ndr_load_loss

OLD = Path(__file__).resolve().parents[1] / "data" / "store-4df8ce3.sqlite.gz"

loads = st.floats(0, 2e7, allow_nan=False)
ratios = st.floats(0, 1, allow_nan=False)
seconds = st.floats(0, 3600, allow_nan=False)
counts = st.integers(0, 10**9)
maybe = st.none() | st.floats(0, 1e6, allow_nan=False)
names = st.text(max_size=8)


@st.composite
def stalls(draw: st.DrawFn) -> TrialStalls | None:
    cpus = draw(st.dictionaries(st.sampled_from("0123"), st.builds(
        CpuStalls, st.integers(0, 100), seconds, seconds, maybe), max_size=3))
    return draw(st.sampled_from([None, TrialStalls(False, reason="no monitor"),
                                 TrialStalls(True, draw(seconds), cpus)]))


@st.composite
def trial_results(draw: st.DrawFn) -> TrialResult:
    r = TrialResult.from_json({})
    r.tx_frames, r.rx_frames, r.lost = draw(counts), draw(counts), draw(counts)
    r.loss_ratio, r.tx_pps, r.achieved_pps = draw(ratios), draw(loads), draw(loads)
    r.latency_us = draw(st.dictionaries(st.sampled_from(["p50", "p99", "max", "count"]), maybe))
    r.jitter_us, r.cycles_per_packet = draw(maybe), draw(maybe)
    r.switch_useful_cycles_per_packet = draw(maybe)
    r.ipdv_us = draw(st.none() | st.dictionaries(st.sampled_from(["p1", "p99"]), seconds))
    r.counter_checks = draw(st.lists(st.builds(CounterCheck, names, names, counts, counts),
                                     max_size=2))
    r.irq_rates = draw(st.dictionaries(st.sampled_from("01"), st.dictionaries(names, seconds),
                                       max_size=2))
    r.host_stall = draw(st.none() | names)
    r.tx_skipped, r.tester_gaps, r.tester_gap_max_us = draw(counts), draw(counts), draw(maybe)
    r.stalls = draw(stalls())
    return r


session_trials = st.builds(SessionTrial, trial_results(), loads, seconds, counts, seconds,
                           st.integers(0, 10**6), st.booleans(), st.booleans())
goal_names = st.sampled_from(["NDR", "PDR"]) | names
goals = st.builds(GoalOutcome, st.builds(Goal, goal_names, ratios, ratios, ratios, seconds,
                                         seconds, seconds), maybe, maybe, maybe)
searches = st.builds(
    SearchResult, names, names, st.lists(goals, max_size=2) | st.just([]), loads, loads,
    st.lists(session_trials, max_size=6), seconds,
    st.dictionaries(names, st.floats(0, 10, allow_nan=False) | names, max_size=3),
    st.none() | loads, st.lists(names, max_size=2))


@settings(max_examples=150, deadline=None)
@given(searches)
def test_a_search_reads_back_as_it_was_written(r: SearchResult) -> None:
    data = r.to_json()
    assert SearchResult.from_json(data).to_json() == data


@settings(max_examples=150, deadline=None)
@given(session_trials)
def test_a_trial_brief_reads_back_as_it_was_written(t: SessionTrial) -> None:
    data = t.to_json()
    back = SessionTrial.from_json(data)
    assert back.to_json() == data
    assert (back.unsent_count, back.rejected, back.excised) == (t.unsent_count, t.rejected,
                                                                 t.excised)


@settings(max_examples=150, deadline=None)
@given(searches, loads, st.sampled_from([0.0, 0.005, 0.1]),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_the_loss_at_the_ndr_reads_the_same_typed_and_stored(
        r: SearchResult, ndr: float, loss_ratio: float, at_ndr: list[bool]) -> None:
    """Some of the trials moved to the NDR's load (the first goal: the NDR)."""
    goal = dataclasses.replace(PRESETS["fast"].goals[0], loss_ratio=loss_ratio)
    r.goals.insert(0, GoalOutcome(goal, ndr, None, ndr))
    for t, moved in zip(r.trials, at_ndr):
        if moved:
            t.intended_load = ndr
    assert search_load_loss(r) == ndr_load_loss(r.to_json())


def test_a_made_up_search_reads_back_typed() -> None:
    ndr, pdr = PRESETS["fast"].goals
    trials = [SessionTrial(TrialResult.from_json({"tx_frames": 1000, "rx_frames": 990,
                                                  "lost": 10, "loss_ratio": 0.01,
                                                  "host_stall": "runq 9 ms"}),
                           1e6, 1.0, 1000, 1.0123, rejected=True, excised=True),
              SessionTrial(TrialResult.from_json({"tx_frames": 500, "rx_frames": 500}),
                           5e5, 1.0, 507, 1.5)]
    trials[1].result.counter_checks = [CounterCheck("a", "rx_packets", 1, 2)]
    r = SearchResult("fast", "mlrsearch", [GoalOutcome(ndr, 5e5, 1e6, 5e5),
                                           GoalOutcome(pdr, 6e5, None, None)],
                     1000.0, 2e6, trials, 3.21, {"session": "control", "mean_s": 0.01},
                     1.5e6, ["a note"])
    back = SearchResult.from_json(r.to_json())
    assert back.ndr_pps == 5e5 and back.pdr_pps == 6e5 and back.headroom == 0.3333
    assert back.outcome("PDR") == GoalOutcome(pdr, 6e5, None, None)
    first, second = back.trials
    assert first.excised and first.rejected and first.host_stall == "runq 9 ms"
    assert second.unsent_count == 7 and second.result.counter_checks == [UNDETAILED_DISAGREEMENT]
    assert back.classic_ndr_pps is None and r.classic_ndr_pps is None   # 7 frames unsent
    assert back.describe_ndr() == r.describe_ndr() and back.notes == ["a note"]
    loss = search_load_loss(back)
    assert loss is not None and (loss.trials, loss.lossy_trials, loss.worst_lost_frames) == (1, 1, 7)
    assert loss == search_load_loss(r) == ndr_load_loss(r.to_json())


def test_what_is_missing_or_of_another_type_reads_as_the_default() -> None:
    r = SearchResult.from_json({"preset": 3, "goals": [{"name": "NDR", "loss_ratio": "x"}, 5],
                                "trials": [{"intended_pps": True, "lost": 2}, "x"],
                                "generator_ceiling_pps": float("nan"), "notes": ["n", 1]})
    assert r.preset == "" and r.algorithm == "" and r.generator_ceiling_pps is None
    assert r.goals == [GoalOutcome(Goal("NDR", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), None, None, None)]
    assert len(r.trials) == 1 and r.trials[0].intended_load == 0.0
    assert r.trials[0].result.lost == 2 and r.notes == ["n"] and r.ndr_pps is None


@pytest.mark.parametrize("which", ["today", "4df8ce3"])
def test_every_stored_search_reads(which: str, tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    if which == "today":
        write_fixture_store(path, "full")
    else:
        with gzip.open(OLD) as src, path.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    stored: list[dict[str, Any]] = [p.result for p in load(path).done("search")
                                    if isinstance(p.result, dict)]
    assert len(stored) > 10
    for data in stored:
        r = SearchResult.from_json(data)
        assert len(r.trials) == len(data.get("trials") or [])
        assert r.ndr_pps == data.get("ndr_pps") or not data.get("goals")
        assert SearchResult.from_json(r.to_json()).to_json() == r.to_json()
