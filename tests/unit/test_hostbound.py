"""A search whose tester skipped most of its departures measured the host, not the switch
(results/hostbound.py): named host-bound with its figures, and not ranked without rounds.
Synthetic trials: NOT MEASUREMENTS."""

from __future__ import annotations

from vswbench.results.hostbound import host_bound


def _trial(skipped: int, stalled_us: float, due: int = 100_000) -> dict:
    return {"intended_count": due, "tx_skipped": skipped,
            "stalls": {"window_s": 0.25, "cpus": {"0": {"total_us": stalled_us / 2},
                                                  "1": {"total_us": stalled_us}}}}


def test_a_tester_that_skipped_most_departures_is_host_bound() -> None:
    hb = host_bound({"trials": [_trial(60_000, 200_000), _trial(40_000, 150_000)]})
    assert hb is not None and hb.bound and hb.trials == 2
    assert abs(hb.skipped_share - 0.5) < 1e-9 and abs(hb.stalled_share - 0.7) < 1e-9
    assert hb.describe().startswith("host-bound: its tester skipped 50 % of the departures")


def test_stopped_path_threads_alone_are_shown_not_judged() -> None:
    """OVS's threads waiting for each other on one core stop the path's CPU without a tester
    gap: not host-bound."""
    hb = host_bound({"trials": [_trial(0, 220_000)]})
    assert hb is not None and not hb.bound and hb.stalled_share > 0.8


def test_no_monitored_trial_says_nothing() -> None:
    assert host_bound({"trials": [{"intended_count": 10}]}) is None
    assert host_bound({}) is None
