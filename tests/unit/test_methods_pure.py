"""Pure parts of the methodology: load lists, fractions, the shaper's arithmetic, the control
session's trial command."""
import pytest

from vswbench.engine.params import TrialParams
from vswbench.errors import UsageError
from vswbench.measure.loadcurve import parse_fractions
from vswbench.measure.loadcurve import sweep_loads
from vswbench.measure.session import ControlSession
from vswbench.switches.kernel.shaped import Shaper
from vswbench.switches.kernel.shaped import shaper_from_options


def test_sweep_loads():
    assert sweep_loads(100_000, 5) == [20_000, 40_000, 60_000, 80_000, 100_000]
    assert sweep_loads(100, 3, min_load=10) == [10, 55, 100]
    for bad in ((100, 1, None), (0, 5, None), (100, 5, 200)):
        with pytest.raises(UsageError):
            sweep_loads(*bad)


def test_fractions():
    assert parse_fractions("10,50,90,100") == (0.1, 0.5, 0.9, 1.0)
    for bad in ("", "ten", "0", "300"):
        with pytest.raises(UsageError):
            parse_fractions(bad)


def test_shaper_rates_count_frames_without_fcs():
    s = Shaper(100_000, 64)
    assert s.rate_bits == 100_000 * 60 * 8
    assert s.burst_bytes == 50 * 60 and s.limit_bytes == 200 * 60
    args = s.tbf_args()
    assert args[:3] == ["tbf", "rate", "48000000bit"]
    tiny = Shaper(100, 1518)
    assert tiny.burst_bytes >= 2 * 1514 and tiny.limit_bytes >= 4 * 1514


def test_shaper_options():
    assert shaper_from_options({"shape_pps": "50k", "shape_frame_size": "512"}) == Shaper(50_000, 512)
    for bad in ({}, {"shape_pps": "fast"}, {"shape_pps": "1k", "shape_frame_size": "9019"},
                {"shape_pps": "1k", "shape_frame_size": "x"}, {"shape_pps": "1G"}):
        with pytest.raises(UsageError):
            shaper_from_options(bad)


def test_control_trial_command_sends_an_exact_count():
    s = ControlSession.__new__(ControlSession)
    s.params, s.drain, s.drain_quiet = TrialParams(512, flows=4, burst=1, io="afpacket"), 0.05, 0.01
    cmd, count, cap = s._command(100_000, 2.0, None)
    assert count == 200_000 and cmd["count"] == 200_000
    assert cmd["duration"] == 2.005 and cmd["size"] == "512" and cmd["flows"] == 4
    assert cmd["warmup"] == 0 and cmd["drain"] == 0.05 and cmd["drain_quiet"] == 0.01
    s.drain_quiet = 0.0                            # RFC 2544's wait: the whole drain, always
    assert "drain_quiet" not in s._command(100_000, 2.0, None)[0]
    cmd, count, cap = s._command(0, 0, 5000)       # back-to-back burst: max rate, no cap
    assert cmd["count"] == 5000 and "duration" not in cmd and cmd["rate"] == 0
    cmd, count, cap = s._command(0, 1.0, None)     # calibration: max rate for a second
    assert "count" not in cmd and cmd["duration"] == 1.0


def test_rfc_presets_wait_the_whole_drain():
    from vswbench.measure.search import PRESETS

    for name in ("rfc2544", "tst009", "binary"):
        assert PRESETS[name].drain_s == 2.0 and PRESETS[name].drain_quiet_s == 0.0
    assert PRESETS["quick"].drain_quiet_s == PRESETS["fast"].drain_quiet_s == 0.01


def test_repeat_statistics_and_noise_warning():
    from vswbench.measure.repeat import repeated_trials
    from vswbench.measure.trial_result import TrialResult

    def result(pps, p99):
        return TrialResult.from_json({"achieved_pps": pps, "loss_ratio": 0.0,
                                      "cycles_per_packet": 5000.0,
                                      "latency_us": {"p50": 10.0, "p99": p99}})
    steady = [result(100_000 + i, 20.0) for i in range(5)]
    repeated = repeated_trials(steady)
    stats, warnings = repeated.to_json(), repeated.warnings
    assert stats["achieved_pps"]["median"] == 100_002 and stats["achieved_pps"]["n"] == 5
    assert stats["achieved_pps"]["worst_of_n"] == 100_000
    assert stats["achieved_pps"]["best_of_n"] == 100_004
    assert stats["p99_us"]["worst_of_n"] == 20.0
    assert not warnings
    noisy = [result(pps, 20.0) for pps in (50_000, 100_000, 150_000, 80_000, 120_000)]
    warnings = repeated_trials(noisy).warnings
    assert len(warnings) == 1 and "achieved_pps" in warnings[0]


def test_calibration_cache_round_trip(tmp_path):
    import time

    from vswbench.measure import calibration as cal
    from vswbench.scenario import parse
    from vswbench.switches.base import Placement

    path = tmp_path / "c.json"
    scen, w, pl = parse("p2p"), TrialParams(64), Placement(0, 1, (1,))
    assert cal.cached(scen, w, pl, path) is None
    key = cal.cache_key(scen, w, pl)
    assert key != cal.cache_key(scen, TrialParams(1518), pl)
    assert key != cal.cache_key(scen, w, Placement(1, 0, (0,)))
    entry = cal.Calibration(key, 300_000.0, 310_000.0, 3, 1.0, time.time(), "p2p", 64,
                            "afpacket", 1)
    cal._store(path, entry)
    hit = cal.cached(scen, w, pl, path)
    assert hit is not None and hit.cached and hit.ceiling_pps == 300_000.0
    day = cal.CACHE_MAX_AGE_S
    assert cal.cached(scen, w, pl, path, now=entry.measured_at + day - 1) is not None
    assert cal.cached(scen, w, pl, path, now=entry.measured_at + day + 1) is None   # stale
    assert cal.cached(scen, w, pl, path, now=entry.measured_at - 60) is None        # clock jumped
    path.write_text("not json")
    assert cal.cached(scen, w, pl, path) is None


def test_placements_on_two_cores():
    from vswbench.campaign.execute import placement_cpus

    assert placement_cpus("default", 3) == (None, None, None)
    assert placement_cpus("s_core", 3) == (0, 1, "1")          # the tester alone on core 0
    assert placement_cpus("pbp", 4) == (0, 1, "0,1")          # Raumer: a core switch per element
    assert placement_cpus("bi", 3) == (0, 1, "0,0,1")         # Raumer: blocks per core
    assert placement_cpus("bi", 4) == (0, 1, "0,0,1,1")
    with pytest.raises(UsageError):
        placement_cpus("diagonal", 1)


def test_repeated_points_take_the_median_repetition():
    from types import SimpleNamespace

    from vswbench.measure.loadcurve import LoadTrial
    from vswbench.measure.loadcurve import repeated_points_json
    from vswbench.measure.session import SessionTrial

    def point(achieved, p99):
        r = SimpleNamespace(tx_frames=1000, rx_frames=1000, lost=0, loss_ratio=0.0,
                            tx_pps=achieved, achieved_pps=achieved, cycles_per_packet=None,
                            switch_useful_cycles_per_packet=None,
                            counters_agree=True, latency_us={"p50": 5.0, "p99": p99},
                            latency_kind="one-way", drops={}, cpu={}, histogram=[],
                            cycles_per_packet_by_process={}, nf_counters={}, tx_skipped=0,
                            tester_gaps=0, tester_gap_max_us=None)
        return LoadTrial(1000.0, None, SessionTrial(r, 1000.0, 1.0, 1000, 1.05))  # type: ignore

    runs = [[point(990, 10.0)], [point(1000, 30.0)], [point(995, 20.0)]]
    data, warnings = repeated_points_json(runs)
    (only,) = data
    assert only["achieved_pps"] == 995 and only["repetitions"] == 3
    assert only["statistics"]["achieved_pps"]["median"] == 995
    assert only["statistics"]["p99_us"]["max"] == 30.0
    assert any("p99_us" in w for w in warnings) and not any("achieved" in w for w in warnings)
    single, none = repeated_points_json(runs[:1])
    assert "statistics" not in single[0] and none == []


def test_an_interrupted_method_says_what_it_had_found() -> None:
    from types import SimpleNamespace as NS

    from vswbench.measure.method import interrupted_summary

    trials = [NS(intended_load=load, result=NS(lost=lost))
              for load, lost in ((100_000, 0), (400_000, 1200), (250_000, 0), (300_000, 3))]
    text = interrupted_summary(trials)
    assert "after 4 trials" in text and "250,000 pps without loss" in text
    assert "300,000 pps with loss" in text
    assert "before the first" in interrupted_summary([])
