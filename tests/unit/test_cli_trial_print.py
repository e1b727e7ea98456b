"""What `vswbench trial` prints, and its --json, from made-up trials (no root, no engine): the
command's measuring function is a test double returning fixed TrialResults (single, repeated,
profiled by a made-up perf profile), never measurements; and what cli/common.trial_line says of
a method's trial. The expected text and JSON were recorded from the printers (cli/trial.py,
cli/profile_view.py, cli/common.trial_line) before they read typed attributes instead of the
results' keys (issue 45): both must stay byte-identical (tests/data/cli_trial/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.recorded_output import assert_as_recorded
from vswbench.cli import trial as cli_trial
from vswbench.cli.common import trial_line
from vswbench.host.profile import CATEGORIES
from vswbench.measure.session import SessionTrial
from vswbench.measure.trial_result import TrialResult

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "cli_trial"


def _functions(names: list[str], scale: float) -> list[dict[str, Any]]:
    return [{"function": name, "kernel": not name.startswith("vsb_"), "samples": 100 - 9 * i,
             "share": round(scale / (i + 2), 4)} for i, name in enumerate(names)]


def _categories(shift: int) -> dict[str, float]:
    return {cat: round(((i + shift) % len(CATEGORIES)) / 36, 4) for i, cat in enumerate(CATEGORIES)}


# a profile as host/perf.summarize and measure/profiling.cpu_check make it: a core with the
# run's own threads told apart, a core without samples, a CPU check whose cores differ
PROFILE: dict[str, Any] = {
    "event": "cpu-clock", "hz": 997, "seconds": 1.2345, "cpus": [0, 1],
    "cores": {
        "0": {"samples": 1200, "expected_samples": 1231, "busy": 0.9748,
              "categories": _categories(0),
              "top_functions": _functions(["__netif_receive_skb_core", "[unknown]", "vsb_gen",
                                           "br_handle_frame", "memcpy", "fib_table_lookup",
                                           "napi_poll"], 0.5),
              "top_kernel_functions": _functions(["__netif_receive_skb_core", "memcpy"], 0.4),
              "top_comms": [{"comm": f"vsb-engine[{i}]", "samples": 50 - i,
                             "share": round(0.6 / (i + 1), 4)} for i in range(7)],
              "testbed": {"samples": 900, "share": 0.75, "categories": _categories(3),
                          "top_functions": _functions(["br_forward", "vsb_sink"], 0.3),
                          "top_kernel_functions": _functions(["br_forward", "[bpf]", "ip_rcv",
                                                              "skb_copy_bits"], 0.45)},
              "folded": ["vsb-engine;main;vsb_gen 3"]},
        "1": {"samples": 0, "expected_samples": 1231, "busy": 0.0,
              "categories": dict.fromkeys(CATEGORIES, 0.0), "top_functions": [],
              "top_kernel_functions": [], "testbed": None, "folded": []}},
    "warnings": ["perf lost 3 chunks (made up)"],
    "cpu_check": {"per_core": {"0": {"scheduler_busy": 0.9512, "scheduler_softirq": 0.4021,
                                     "perf_busy": 0.9748, "differ": False},
                               "1": {"scheduler_busy": 0.25, "scheduler_softirq": 0.0,
                                     "perf_busy": 0.0, "differ": True}},
                  "cycles_per_packet_scheduler": 5678.9, "cycles_per_packet_perf": 6543.2,
                  "differ": True}}
# one without samples on any core nor a CPU check (test_cli_methods_print's)
BARE_PROFILE: dict[str, Any] = {"event": "cycles", "hz": 999, "seconds": 5.0, "cores": {},
                                "warnings": ["made up"]}


def _busy(busy: float) -> dict[str, float]:
    return {"user": round(busy / 3, 4), "system": round(busy / 3, 4), "softirq": round(busy / 3, 4),
            "irq": 0.0, "idle": round(1 - busy, 4), "steal": 0.0, "busy": busy, "busy_s": busy}


def _loaded(load: float, duration: float, i: int) -> dict[str, Any]:
    """A trial with everything measured: latency, cores, drops, stalls, two cores a side."""
    tx = round(load * duration) - 7 * i
    lost = int(load / 1000) * (i + 1) if load >= 300_000 else 0
    return {
        "offered_pps": load, "tx_pps": tx / duration, "achieved_pps": (tx - lost) / duration
        * (1 - 0.3 * (i % 2)), "tx_frames": tx, "rx_frames": tx - lost, "lost": lost,
        "loss_ratio": lost / tx, "latency_kind": "timestamped",
        "latency_us": {"min": 3.25, "p25": 8.0, "p50": 12.5 + i, "p90": 30.0,
                       "p99": None if i == 2 else 48.0 + 3 * i, "max": 250, "mean": 14.2,
                       "count": tx - lost},
        "cpu": {"0": _busy(0.4567), "1": _busy(0.995 - 0.1 * i)},
        "cycles_per_packet": 1234.5 + 100 * i, "tsc_hz": 2.4e9,
        "drops": {"rx_ring": 12 * i, "tx_queue": 0, "nic": 3},
        "counter_checks": [{"port": "vsb0", "counter": "tx_packets", "kernel": tx, "engine": tx},
                           {"port": "vsb1", "counter": "rx_packets", "kernel": tx - lost,
                            "engine": tx - lost - (i == 1)}],
        "placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [], "tester_cpus": [0, 2],
                      "switch_cpus": [1, 3]},
        "stalls": {"monitored": True, "window_s": duration,
                   "cpus": {"0": {"stalls": 2 + i, "longest_us": 1234.5, "total_us": 2000.0,
                                  "steal_ms": 10.0},
                            "1": {"stalls": 0, "longest_us": 0.0, "total_us": 0.0,
                                  "steal_ms": None}}},
        "host_stall": "a made-up stall of cpu0" if i == 1 else None,
        "warnings": [f"a made-up warning of trial {i + 1}"]}


def _quiet(load: float, duration: float, i: int) -> dict[str, Any]:
    """A trial with little known: no latency, no cores, no drops, no stall monitor."""
    tx = round(load * duration)
    return {"offered_pps": load, "tx_pps": load, "achieved_pps": load, "tx_frames": tx,
            "rx_frames": tx, "lost": 0, "loss_ratio": 0.0, "latency_kind": None,
            "latency_us": {}, "cpu": {}, "cycles_per_packet": None, "drops": {"rx_ring": 0},
            "placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": []},
            "stalls": {"monitored": False, "reason": "no session monitor (made up)"}}


def made_up(load: float, duration: float, i: int, profile: bool) -> TrialResult:
    """Trial i of a run at `load`: a quiet trial below 200 kpps, a measured one above."""
    fields = (_quiet if load < 200_000 else _loaded)(load, duration, i)
    result = TrialResult.from_json({
        "switch": "bridge", "scenario": "p2p", "frame_size": 64, "duration_s": duration,
        "forwarding_mode": "napi", **fields})
    if profile:
        result.profile = dict(PROFILE if load >= 200_000 else BARE_PROFILE)
    return result


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """`vswbench trial`'s testbed and trials: made-up results, progress as the real one says; a
    single trial at 300 kpps or more is the made-up run's second (a host stall, a miscount)."""
    def execute(plan: Any, repeat: int, progress: Any = print,
                profile: bool = False) -> list[TrialResult]:
        p = plan.params
        progress(f"run run-x: {plan.switch_cls.name}, {plan.scenario.name}, {p.size} at "
                 f"{p.rate_pps:,.0f} pps for {p.duration:g} s (warm-up {p.warmup:g} s)")
        first = 1 if repeat == 1 and p.rate_pps >= 300_000 else 0   # a host stall, a miscount
        return [made_up(p.rate_pps, p.duration, first + i, profile) for i in range(repeat)]

    monkeypatch.setattr(cli_trial, "execute_trials", execute)


CASES = {
    "trial_once": ["trial", "--switch", "bridge", "--rate", "250k", "--duration", "1"],
    "trial_quiet": ["trial", "--switch", "bridge", "--rate", "10k", "--duration", "2"],
    "trial_profiled": ["trial", "--switch", "bridge", "--rate", "350k", "--profile"],
    "trial_bare_profile": ["trial", "--switch", "bridge", "--rate", "100k", "--profile"],
    "trial_repeated": ["trial", "--switch", "bridge", "--rate", "400k", "--duration", "0.5",
                       "--repeat", "3"],
    "trial_repeated_quiet": ["trial", "--switch", "bridge", "--rate", "20k", "--repeat", "2"],
    "trial_repeated_profiled": ["trial", "--switch", "bridge", "--rate", "300k", "--repeat",
                                "2", "--profile"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_printed_text_and_json_stay_as_recorded(case: str, stand_in: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert_as_recorded(CASES[case], EXPECTED, case, capsys)


def method_trials() -> list[SessionTrial]:
    """A method's trials as trial_line prints them: measured, without latency, a host stall."""
    loaded, quiet = made_up(400_000.0, 0.5, 1, False), made_up(20_000.0, 1.0, 0, False)
    return [SessionTrial(loaded, 400_000.0, 0.5, 200_000, 0.51),
            SessionTrial(quiet, 20_000.0, 1.0, 20_000, 1.02),
            SessionTrial(made_up(1_234_567.0, 2.0, 0, False), 1_234_567.0, 2.0, 2_469_134, 2.1)]


def test_trial_line_stays_as_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    for t in method_trials():
        trial_line(t)
    printed = capsys.readouterr()
    assert (printed.out, printed.err) == ("", (EXPECTED / "trial_line.err").read_text())
