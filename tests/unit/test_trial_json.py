"""A trial's result is one struct written and read (issue 45, part 1): TrialResult.to_json is what
the store keeps, TrialResult.from_json reads it back (measure/trial_result.py), and every trial
dict a store holds (a trial point's result, a search's trials, a sweep's or latency point's loads,
today's fixture store and one written by commit 4df8ce3's code) reads without error."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.engine.stalls import CpuStalls
from vswbench.engine.stalls import TrialStalls
from vswbench.measure.trial_result import CounterCheck
from vswbench.measure.trial_result import TrialResult
from vswbench.measure.trial_result import read_trial
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.record import load_point

OLD = Path(__file__).resolve().parents[1] / "data" / "store-4df8ce3.sqlite.gz"


def full_trial() -> TrialResult:
    """Every field set to something other than its default (invented values, not measured)."""
    return TrialResult(
        switch="linux-bridge", scenario="p2p", frame_size="imix", offered_pps=100000.0,
        tx_pps=99990.5, achieved_pps=99000.25, tx_frames=99990, rx_frames=99000, lost=990,
        loss_ratio=0.0099, duration_s=1.0, latency_kind="timestamped",
        latency_us={"min": 5.0, "p50": 9.5, "p99": 30.0, "max": None},
        histogram=[[1000.0, 2000.0, 10.0], [2000.0, 4000.0, 5.0]],
        cpu={"1": {"user": 0.1, "busy": 0.5, "busy_s": 0.5}},
        cycles_per_packet=1234.5, cycles_per_packet_by_process={"ovs": 800.0, "nf": None},
        process_cpu_s={"ovs": 0.4, "nf": None}, tsc_hz=2.5e9, drops={"veth0": 3},
        kernel_counters={"vsb0/a": {"rx_packets": 5, "tx_packets": 6}},
        counter_checks=[CounterCheck("a", "tx_packets", 10, 10),
                        CounterCheck("b", "rx_packets", 9, 8)],
        switch_ports=[{"name": "p1", "rx_packets": 4, "extra": [1, 2]}], forwarding_mode="kernel",
        placement={"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [2]},
        switch_versions={"kernel": "6.1"}, config_dump="bridge vsb0", spec={"rate": 1, "x": None},
        engines={"gen": {"pid": 1, "argv": ["a"]}}, warnings=["w1"],
        switch_useful_cycles_per_packet=700.0, nf_kind="fwd",
        nf_counters={"nf0": {"rx": 5, "tx": 4, "dropped": 1}},
        churn={"arrival": 10.0, "life": 1.0, "active": 10.0, "flows": 20.0},
        irq_rates={"1": {"interrupts": 100.0, "net_rx": 50.0}},
        profile={"cores": {"1": {"samples": True}}}, jitter_us=1.5,
        ipdv_us={"p1": -1.0, "p50": 0.0, "p99": 2.0},
        stalls=TrialStalls(True, 1.2, {"1": CpuStalls(2, 30.0, 45.0, 10.0)},
                           [[1, "runq", 3.5, 30.0, "kworker", "x"]]),
        host_stall="runq 30 us", tx_skipped=7, tester_gaps=2, tester_gap_max_us=120.0,
        tester_cpu={"0": {"busy": 0.9}}, mtu=9000, mtu_links={"vsb0/a": 9000},
        vm={"nf0": {"accel": "kvm"}})


def test_a_fully_populated_trial_reads_back_the_same() -> None:
    t = full_trial()
    data = t.to_json()
    back = TrialResult.from_json(data)
    assert back.to_json() == data
    assert back == t
    assert isinstance(back.counter_checks[1], CounterCheck) and not back.counters_agree
    assert isinstance(back.stalls, TrialStalls)
    assert isinstance(back.stalls.cpus["1"], CpuStalls)
    _, held = read_trial(data)
    assert held == {f for f in data if f != "counters_agree"}


def test_a_default_trial_reads_back_the_same() -> None:
    t = TrialResult.from_json({})
    assert TrialResult.from_json(t.to_json()).to_json() == t.to_json()
    assert t.offered_pps == 0.0 and t.latency_kind is None and t.stalls is None
    assert read_trial({})[1] == frozenset()


def test_a_search_trials_brief_reads_with_defaults_and_says_what_it_held() -> None:
    brief = {"intended_pps": 5e5, "tx_frames": 10, "rx_frames": 9, "lost": 1, "unsent": 0,
             "loss_ratio": 0.1, "tx_pps": 4.9e5, "achieved_pps": 4.8e5, "latency_us": None,
             "jitter_us": None, "cycles_per_packet": 300, "counters_agree": True,
             "irq_rates": {"0": {"interrupts": 1.0, "net_rx": 2.0}, "bad": 3},
             "stalls": {"count": 1, "longest_us": 9.0, "window_s": 1.0,
                        "cpus": {"0": {"stalls": 1, "longest_us": 9.0, "total_us": 9.0}}},
             "tx_skipped": True, "tester_gaps": 2.0, "fraction_of_ndr": 0.5}
    t, held = read_trial(brief)
    assert held == {"tx_frames", "rx_frames", "lost", "loss_ratio", "tx_pps", "achieved_pps",
                    "cycles_per_packet", "irq_rates", "stalls"}
    assert t.offered_pps == 0.0 and t.latency_us == {} and t.cycles_per_packet == 300.0
    assert t.irq_rates == {"0": {"interrupts": 1.0, "net_rx": 2.0}}
    assert t.tx_skipped == 0 and t.tester_gaps == 0           # a bool, a float: not counts
    assert t.stalls is not None and t.stalls.cpus["0"].stalls == 1


def stored_trials(results: StoredResults) -> list[dict[str, Any]]:
    """Every trial dict of a store: trial points' results, search trials, sweep/latency loads."""
    out: list[dict[str, Any]] = []
    for p in results.done():
        r = p.result
        assert isinstance(r, dict)
        if p.kind == "trial":
            out.append(r)
        for key in ("trials", "points"):
            if isinstance(r.get(key), list):
                out.extend(x for x in r[key] if isinstance(x, dict))
    return out


@pytest.fixture(scope="module", params=["today", "4df8ce3"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> StoredResults:
    path = tmp_path_factory.mktemp("vsb-trial-json") / "results.sqlite"
    if request.param == "today":
        write_fixture_store(path, "full")
    else:
        with gzip.open(OLD) as src, path.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    return load(path)


def test_every_stored_trial_dict_reads(store: StoredResults) -> None:
    trials = stored_trials(store)
    assert len(trials) > 100
    for raw in trials:
        t, held = read_trial(raw)
        assert TrialResult.from_json(t.to_json()).to_json() == t.to_json()
        assert {"tx_frames", "rx_frames", "loss_ratio", "achieved_pps"} <= held
    kinds = {p.kind for p in store.done() if p.kind == "trial"}
    assert kinds == {"trial"}
    own = [read_trial(p.result)[0] for p in store.done("trial") if isinstance(p.result, dict)]
    assert own and all(t.switch and t.scenario and t.frame_size for t in own)


def test_a_load_point_reads_the_trials_fields_through_from_json() -> None:
    """results/record.load_point takes a trial's own fields from read_trial: what the dict did
    not hold is None, not the TrialResult default."""
    t = full_trial()
    lp = load_point({**t.to_json(), "fraction_of_ndr": 0.5, "rejected": True})
    assert lp is not None
    assert (lp.offered_pps, lp.achieved_pps, lp.tx_pps, lp.lost) == (100000.0, 99000.25,
                                                                      99990.5, 990)
    assert lp.latency is not None and lp.latency.p50 == 9.5 and len(lp.histogram) == 2
    assert lp.by_process == {"ovs": 800.0} and lp.has_by_process
    assert lp.cpu_busy_s == {"1": 0.5} and lp.nf_drops == {"nf0": 1}
    assert lp.irq_rates == ((100.0, 50.0),) and lp.ipdv_us == (-1.0, 0.0, 2.0)
    assert lp.stalls == t.stalls and lp.counters_agree is False and lp.tx_skipped == 7
    assert lp.fraction_of_ndr == 0.5 and lp.rejected and not lp.excised
    brief = load_point({"intended_pps": 5e5, "tx_frames": 10, "loss_ratio": 0.0})
    assert brief is not None and brief.intended_pps == 5e5 and brief.loss_ratio == 0.0
    assert (brief.offered_pps, brief.achieved_pps, brief.lost, brief.latency) == (None,) * 4
    assert not brief.has_by_process and brief.stalls is None
