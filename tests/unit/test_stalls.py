"""engine/stalls.py and measure/hoststall.py: stall records, what a trial saw of them, and the
"host stall" classification. The stalls here are constructed, never measured."""
from types import SimpleNamespace

import pytest

from vswbench.engine.records import EngineRecord
from vswbench.engine.stalls import Stall
from vswbench.engine.stalls import StallMonitor
from vswbench.engine.stalls import TrialStalls
from vswbench.engine.stalls import parse_stall
from vswbench.engine.stalls import summarize
from vswbench.engine.stalls import unmonitored
from vswbench.errors import VswbenchError
from vswbench.measure.hoststall import STALL_LOSS_FACTOR
from vswbench.measure.hoststall import TESTER_SKIP_LIMIT
from vswbench.measure.hoststall import explaining_stall
from vswbench.measure.hoststall import unoffered_load

MS = 1_000_000


def test_parse_stall_reads_the_engine_record():
    s = parse_stall(EngineRecord("stall", {"type": "stall", "cpu": 1, "kind": "runq",
                                           "start_ns": 5 * MS, "len_us": 2000.5,
                                           "pid": 7, "comm": "napi/vsb1a2bs0", "held_by": "hog"}))
    assert (s.cpu, s.kind, s.len_us, s.comm, s.held_by) == (1, "runq", 2000.5, "napi/vsb1a2bs0",
                                                            "hog")
    assert s.end_ns == 5 * MS + 2_000_500
    with pytest.raises(VswbenchError):
        parse_stall({"type": "stall", "cpu": 1})


def test_summarize_keeps_the_stalls_that_overlap_the_window_on_the_path():
    stalls = [Stall(1, "runq", 10 * MS, 2000.0),    # inside
              Stall(1, "vcpu", 99 * MS, 3000.0),    # starts before the end: overlaps
              Stall(0, "vcpu", 1 * MS, 500.0),      # ends before the start (2 ms): out
              Stall(2, "vcpu", 20 * MS, 9000.0),    # a CPU not on the path: out
              Stall(0, "vcpu", 50 * MS, 150.0)]
    r = summarize(stalls, 2 * MS, 100 * MS, [0, 1])
    assert r.monitored and r.window_s == pytest.approx(0.098)
    assert (r.cpus["1"].stalls, r.cpus["1"].longest_us, r.cpus["1"].total_us) == (2, 3000.0, 5000.0)
    assert (r.cpus["0"].stalls, r.cpus["0"].longest_us) == (1, 150.0)
    assert r.count == 3 and r.longest_us == 3000.0
    assert [e[3] for e in r.events] == [3000.0, 2000.0, 150.0]      # longest first
    assert r.events[1][:3] == [1, "runq", 8.0]                       # offset from the start, ms


def test_a_stall_explains_a_loss_only_beyond_the_ring():
    r = summarize([Stall(1, "runq", 10 * MS, 2000.0)], 0, 100 * MS, [0, 1])
    assert r.explaining(250_000, 256) is not None      # 500 frames > 256
    assert r.explaining(100_000, 256) is None          # 200 frames fit the ring
    assert r.frames_over_ring(250_000, 256) == pytest.approx(244)
    assert unmonitored("no root").explaining(1e6, 256) is None


def _result(lost, stalls, rate=250_000.0, io="afpacket", skipped=0):
    return SimpleNamespace(lost=lost, offered_pps=rate, tx_pps=rate, stalls=stalls, duration_s=1.0,
                           spec={"io": io}, tx_skipped=skipped, tester_gaps=1 if skipped else 0,
                           tester_gap_max_us=1500.0 if skipped else None,
                           placement={"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [1]},
                           engines={"tester": {"args": ["control", "--gap-us", "100"]}})


def test_a_stall_of_the_in_kernel_testers_own_cpu_explains_no_loss():
    """The in-kernel generator skips the departures due while its CPU stopped (engine --gap-us):
    such a stall costs the switch nothing; a polling tester's CPU receives too, so it can."""
    on_tester = summarize([Stall(0, "vcpu", 10 * MS, 2000.0)], 0, 100 * MS, [0, 1])
    assert explaining_stall(_result(244, on_tester, io="xdplive"), 256) is None
    assert explaining_stall(_result(244, on_tester, io="afpacket"), 256) is not None
    catching_up = _result(244, on_tester, io="xdplive")    # no --gap-us: the burst costs frames
    catching_up.engines = {"tester": {"args": ["control"]}}
    assert explaining_stall(catching_up, 256) is not None
    on_switch = summarize([Stall(1, "vcpu", 10 * MS, 2000.0)], 0, 100 * MS, [0, 1])
    assert explaining_stall(_result(244, on_switch, io="xdplive"), 256) is not None


def test_a_tester_that_skipped_more_than_its_limit_did_not_offer_the_load():
    intended = 100_000
    limit = int(TESTER_SKIP_LIMIT * intended)
    assert unoffered_load(_result(0, None, skipped=limit), intended) is None
    why = unoffered_load(_result(0, None, skipped=limit + 1), intended)
    assert why is not None and "1.50 ms" in why and f"{limit + 1:,} of 100,000" in why
    assert unoffered_load(_result(0, None, skipped=5), 0) is None


def test_classification_needs_loss_a_long_enough_stall_and_a_loss_it_can_explain():
    two_ms = summarize([Stall(1, "runq", 10 * MS, 2000.0, "napi/vsbx")], 0, 100 * MS, [0, 1])
    reason = explaining_stall(_result(244, two_ms), 256)
    assert reason is not None and "CPU 1" in reason and "napi/vsbx waited" in reason
    assert "256-frame ring" in reason
    assert explaining_stall(_result(0, two_ms), 256) is None            # no loss: nothing to explain
    assert explaining_stall(_result(244, two_ms, rate=100_000), 256) is None   # fits the ring
    # far more lost than the stall can cost: the switch's own limit
    assert explaining_stall(_result(round(STALL_LOSS_FACTOR * 244) + 1, two_ms), 256) is None
    assert explaining_stall(_result(244, None), 256) is None
    assert explaining_stall(_result(244, unmonitored("x")), 256) is None


def test_each_kind_of_stall_is_named_as_what_happened():
    def why(kind: str) -> str:
        stalls = summarize([Stall(1, kind, 10 * MS, 2000.0, "napi/vsbx")], 0, 100 * MS, [0, 1])
        reason = explaining_stall(_result(244, stalls), 256)
        assert reason is not None
        return reason

    assert "the CPU stopped" in why("vcpu")
    assert "the hypervisor ran another vCPU" in why("steal")
    assert "napi/vsbx waited" in why("runq")
    assert "NAPI polling stopped" in why("napi")


def test_a_monitor_that_cannot_start_says_why(tmp_path, monkeypatch):
    fake = tmp_path / "vswbench-engine"
    fake.write_text("#!/bin/sh\necho 'vswbench-engine: error: stallmon: not here' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("VSWBENCH_ENGINE", str(fake))
    mon = StallMonitor([0, 1]).start()
    report = mon.report(0, 10)
    assert not report.monitored and "stall monitor not running" in report.reason
    mon.stop()
    assert StallMonitor([]).start().report(0, 1).reason == "no CPU of the path known"


def test_stalls_after_the_traffic_explain_nothing():
    # a 1 s trial whose only long stall began at 1.5 s (the drain): recorded, not an explanation
    late = summarize([Stall(0, "runq", 1500 * MS, 40_000.0, "vswbench-engine")], 0, 2000 * MS, [0])
    assert late.count == 1
    r = _result(500, late)
    assert explaining_stall(r, 256) is None
    r.stalls = summarize([Stall(0, "runq", 500 * MS, 4000.0, "x")], 0, 2000 * MS, [0])
    assert explaining_stall(r, 256) is not None


def test_the_report_says_how_much_stall_the_searches_saw():
    from vswbench.report.stalls import stall_totals
    from vswbench.results.record import load_points

    trials = [{"stalls": {"count": 2, "window_s": 1.0, "cpus": {
                   "0": {"stalls": 1, "longest_us": 300.0}, "1": {"stalls": 1, "longest_us": 2000.0}}},
               "rejected": True},
              {"stalls": {"count": 1, "window_s": 1.0, "cpus": {
                   "0": {"stalls": 0, "longest_us": 0.0}, "1": {"stalls": 1, "longest_us": 500.0}}}},
              {"stalls": None, "tx_skipped": 120, "tester_gaps": 2, "tester_gap_max_us": 700.0}]
    t = stall_totals(load_points(trials))
    assert t["monitored"] == 2 and t["seconds"] == 2.0 and t["rejected"] == 1
    assert t["cpus"]["1"] == {"stalls": 2.0, "longest_us": 2000.0}
    assert (t["skipped"], t["gap_trials"], t["longest_gap_us"]) == (120, 1, 700.0)


def test_stall_sentence_per_cpu_and_unmonitored():
    from vswbench.report.stalls import stall_sentences
    from vswbench.results.record import measured_of

    def data(trials):
        point = SimpleNamespace(measured=measured_of("search", {"trials": trials}))
        return SimpleNamespace(records=lambda kind: [point] if kind == "search" else [])

    line = stall_sentences(data([{"stalls": {"window_s": 2.0, "cpus": {
        "1": {"stalls": 4, "longest_us": 2200.0}, "0": {"stalls": 1, "longest_us": 150.0}}},
        "rejected": True}]))[0]
    assert "CPU 0: 0.5 a second, longest 0.1 ms; CPU 1: 2.0 a second, longest 2.2 ms" in line
    assert "1 trial(s) lost frames to a stall" in line
    assert "not monitored" in stall_sentences(data([{"stalls": None}]))[0]
    assert stall_sentences(data([])) == []


def test_overlapping_stalls_count_once():
    # the CPU stopped 2 ms and the thread on it waited the same 2 ms: one 2 ms stretch
    r = summarize([Stall(1, "vcpu", 10 * MS, 2000.0), Stall(1, "runq", 10 * MS, 2000.0, "napi"),
                   Stall(0, "runq", 50 * MS, 2000.0, "engine")], 0, 100 * MS, [0, 1])
    assert r.frames_over_ring(250_000, 256) == pytest.approx(2 * 244)


def test_steal_time_beside_the_stalls():
    r = summarize([Stall(1, "vcpu", 10 * MS, 20_000.0)], 0, 1000 * MS, [0, 1])
    r.add_steal({"0": {"steal": 0.0, "busy": 0.5, "busy_s": 0.5},
                 "1": {"steal": 0.02, "busy": 0.98, "busy_s": 0.98}})
    assert r.cpus["1"].steal_ms == 20.0 and r.cpus["0"].steal_ms == 0.0
    unknown = summarize([], 0, 1000 * MS, [2])
    unknown.add_steal({})
    assert unknown.cpus["2"].steal_ms is None


def test_a_trials_stalls_read_back_into_the_same_record():
    """One stall summary both ways: TrialStalls.to_json (a trial's own result) and brief (a
    search trial's) read back by TrialStalls.from_json (results/record.LoadPoint.stalls)."""
    r = summarize([Stall(1, "runq", 10 * MS, 2000.0, "napi/vsbx"), Stall(0, "irq", 5 * MS, 30.5)],
                  0, 100 * MS, [0, 1])
    r.cpus["1"].steal_ms = 1.5
    assert TrialStalls.from_json(r.to_json()) == r
    brief = r.brief()
    assert brief is not None
    back = TrialStalls.from_json(brief)
    assert back.monitored and back.window_s == r.window_s and back.cpus == r.cpus
    assert back.count == r.count == 2 and back.longest_us == 2000.0 and not back.events
    assert unmonitored("no BPF").brief() is None
    assert TrialStalls.from_json(unmonitored("no BPF").to_json()).reason == "no BPF"
