"""Search, sweep, latency at NDR fractions and back-to-back against `shaped`, the calibration DUT
whose answer is known (a tbf shaper at --shape-pps). Real namespaces, the real engine."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.engine.params import TrialParams
from vswbench.host.netns import list_namespaces
from vswbench.measure.b2b import B2BConfig
from vswbench.measure.b2b import back_to_back
from vswbench.measure.calibration import calibrate
from vswbench.measure.loadcurve import latency_at
from vswbench.measure.loadcurve import run_sweep
from vswbench.measure.loadcurve import saturation
from vswbench.measure.session import ControlSession
from vswbench.run.scope import run_scope
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.catalog import all_switches
from vswbench.switches.kernel.shaped import SHAPER_BURST_S
from vswbench.switches.kernel.shaped import SHAPER_QUEUE_S
from vswbench.testbed.build import Testbed

VSWBENCH = Path(sys.executable).parent / "vswbench"
PLACEMENT = Placement(0, 1, (1,))


def vswbench(*argv: str, tmp_path: Path) -> dict:
    env = {**os.environ, "VSWBENCH_CACHE": str(tmp_path)}
    proc = subprocess.run([str(VSWBENCH), *argv, "--json"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def assert_nothing_left(run_id: str) -> None:
    assert not [ns for ns in list_namespaces() if ns.startswith(run_id)], "namespaces left"
    assert not list(Path("/tmp").glob(f"vsb-{run_id}*")), "temp dirs left"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("rate,size,preset,tolerance", [(60_000, 64, "fast", 0.02),
                                                        (30_000, 1518, "quick", 0.08)])
def test_search_finds_the_shaped_rate(root, engine, tmp_path, rate, size, preset, tolerance):
    # Both with quarter-second trials: fast's goals (CSIT's: width 0.5 %, exceed ratio 50 %) at
    # a duration sum of 5.25 s, quick's own. The answer lies between the shaper's rate and what
    # a trial lets through (`expected`: the rate plus the shaper's bucket and queue, 2.5 ms of
    # its rate, 1 % of a quarter second), give or take `tolerance`: the preset's width (the NDR
    # is a lower bound at most that far below a lossy load) and a host stall's loss near the
    # rate. Measured 2026-12-03, fast at 64 B: 60,975-61,281 pps in four searches of 12-21 s,
    # where half-second trials took 21-41 s; quick at 1518 B (width 5 %): 30,043 pps in three
    # searches of 5-9 s (2026-12-02) and 28,543 pps once (a trial at 30,043 lost 126 frames)
    trial_s = 0.25
    expected = rate * (1 + (SHAPER_BURST_S + SHAPER_QUEUE_S) / trial_s)
    durations = ["--trial-duration", str(trial_s)] if preset == "fast" else []
    data = vswbench("search", "--switch", "shaped", "--shape-pps", str(rate), "--size", str(size),
                    "--preset", preset, *durations, "--min-load", "5k",
                    "--max-load", "200k", "--no-calibration", "--warmup", "0.3",
                    tmp_path=tmp_path)
    for key in ("ndr_pps", "pdr_pps", "lower_bound_pps", "upper_bound_pps", "trials",
                "trial_seconds", "generator_bound"):
        assert key in data, key
    trials = [(round(t["intended_pps"]), t["lost"], t["unsent"]) for t in data["trials"]]
    assert data["ndr_pps"] is not None, trials
    assert rate * (1 - tolerance) <= data["ndr_pps"] <= expected * (1 + tolerance), \
        (data["ndr"], trials)
    assert data["lower_bound_pps"] <= expected * (1 + tolerance)
    assert data["upper_bound_pps"] >= rate * (1 - tolerance)
    assert data["lower_bound_pps"] <= data["upper_bound_pps"]
    assert data["pdr_pps"] >= data["ndr_pps"] * 0.999
    assert data["generator_bound"] is False
    assert data["trial_seconds"] == pytest.approx(sum(t["intended_s"] for t in data["trials"]))
    overhead = data["overhead_per_trial"]
    assert overhead["session"] == "control" and overhead["mean_s"] < 0.1, overhead
    assert data["switch"] == "shaped" and data["frame_size"] == size
    assert_nothing_left(data["run_id"])


@pytest.mark.timeout(300)
def test_restart_session_serves_sender_receiver_pairs(root, engine, tmp_path):
    data = vswbench("search", "--switch", "shaped", "--shape-pps", "40k", "--scenario", "p2p-pair",
                    "--preset", "binary", "--trial-duration", "0.25", "--min-load", "5k",
                    "--max-load", "120k", "--no-calibration", "--warmup", "0", tmp_path=tmp_path)
    assert data["overhead_per_trial"]["session"] == "restart"
    # binary search tries each load once: one spurious loss near the answer on this shared VM
    # lowers the result (seen in CI: 37,231 and 33,638 pps). A restart session that fails to
    # serve the second pair loses at every load and ends at the 5k floor or finds nothing, so
    # the lower bound only has to tell "near the shaper" from "far below it"; above, the shaper
    # lets nothing through beyond its rate and its 0.5 ms bucket
    assert data["ndr_pps"] is not None, data
    assert 0.6 <= data["ndr_pps"] / 40_000 <= 1.10, data["ndr"]
    assert data["pdr_pps"] is None     # binary searches one loss ratio
    assert_nothing_left(data["run_id"])


@pytest.mark.timeout(300)
def test_sweep_latency_and_back_to_back_on_one_testbed(root, engine):
    shaped = all_switches()["shaped"]
    with run_scope() as run:
        prefix = str(run.id)
        ceiling = calibrate(run, parse("p2p"), TrialParams(64), PLACEMENT).ceiling_pps
        with (Testbed(parse("p2p"), shaped, run, PLACEMENT,
                      {"shape_pps": "50000", "shape_frame_size": "64"}) as tb,
              ControlSession(tb, TrialParams(64)) as session):
            session.warm_up(10_000, 0.3)
            # below: 40 % and 70 % of the shaper, so that a tester stall of a few ms on a
            # shared CI VM (a catch-up burst into the 0.5 ms bucket) is not read as loss;
            # 90 % failed CI once (stop 14) with the shaper working
            points = run_sweep(session, [20_000, 35_000, 75_000, 100_000], 0.5)
            lat = latency_at(session, 50_000, (0.1, 0.5, 0.7), 0.5)
            b2b = back_to_back(session, B2BConfig(trials=2, max_frames=50_000,
                                                  tester_pps=ceiling),
                               throughput_pps=50_000)
    assert_nothing_left(prefix)
    below, above = points[:2], points[2:]
    seen = [(p.offered_pps, p.trial.result.lost, p.trial.unsent_count) for p in points]
    assert all(p.trial.result.lost == 0 and not p.trial.unsent_count for p in below), seen
    assert all(p.trial.result.lost or p.trial.unsent_count for p in above), seen
    # beyond the shaper's rate, what gets through is the shaper's rate (a shaper that shapes
    # nothing lets 75-100k through), less the time a CPU of the path stopped for longer than
    # the shaper's bucket and queue hold (2.5 ms): a stopped tester sends nothing, a stopped
    # switch dequeues nothing. On a slow host (2026-12-03, 08:50-09:07) it was also 5-9 % below
    # with no such stop seen (47,441 and 45,350 pps; 48,109-50,046 in eight other runs): below,
    # 15 % is left for that. The shaper's precision is test_search_finds_the_shaped_rate's
    held_us = (SHAPER_BURST_S + SHAPER_QUEUE_S) * 1e6
    for p in above:
        r = p.trial.result
        events = r.stalls.events if r.stalls is not None else []
        stopped_s = sum(max(0.0, e[3] - held_us) for e in events) * 1e-6
        low = 50_000 * max(0.0, 1 - stopped_s / 0.5) * 0.85
        print(f"{p.offered_pps:,.0f} pps offered: {r.achieved_pps:,.0f} through; stops beyond "
              f"the shaper's 2.5 ms: {stopped_s * 1e3:.1f} ms")
        assert low <= r.achieved_pps <= 50_000 * 1.05, (r.achieved_pps, events)
    sat = saturation(points)
    assert sat["highest_lossless_offered_pps"] == 35_000
    for p in lat:
        r = p.trial.result
        assert r.lost == 0 and r.latency_us["p50"] and r.histogram, r.latency_us
    assert not b2b.unbounded and b2b.summary.n == 2
    assert 0 < b2b.summary.min < 50_000
    assert b2b.implied_buffer_s and b2b.implied_buffer_s > 0


@pytest.mark.timeout(120)
def test_calibration_is_measured_once_then_cached(root, engine, tmp_path):
    first = vswbench("calibrate", "--size", "64", tmp_path=tmp_path)
    second = vswbench("calibrate", "--size", "64", tmp_path=tmp_path)
    assert first["cached"] is False and second["cached"] is True
    assert second["ceiling_pps"] == first["ceiling_pps"] > 10_000
    assert (tmp_path / "generator-ceiling.json").is_file()
