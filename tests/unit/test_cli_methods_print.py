"""What `vswbench search` and `vswbench sweep` print, and their --json, from made-up trials (no
root, no engine): the method's context, its session and the repeated searches are test doubles
returning fixed TrialResults, SessionTrials and SearchResults, never measurements. The expected
text and JSON were recorded from the printers before they read typed attributes instead of the
JSON's keys (issue 45): both must stay byte-identical (tests/data/cli_methods/)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.recorded_output import assert_as_recorded
from vswbench.cli import methods as cli_methods
from vswbench.measure import method as method_mod
from vswbench.measure import repeat as repeat_mod
from vswbench.measure import search as search_mod
from vswbench.measure.method import MethodContext
from vswbench.measure.repeat import RepeatedSearch
from vswbench.measure.search import PRESETS
from vswbench.measure.search import GoalOutcome
from vswbench.measure.search import SearchResult
from vswbench.measure.session import SessionTrial
from vswbench.measure.trial_result import TrialResult

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "cli_methods"
PROFILE = {"event": "cycles", "hz": 999, "seconds": 5.0, "cores": {}, "warnings": ["made up"]}


def _trial(load: float, lost: int = 0, *, duration: float = 1.0, unsent: int = 0,
           p50: float | None = 12.5, stall: str | None = None) -> SessionTrial:
    intended = round(load * duration)
    tx = intended - unsent
    result = TrialResult.from_json({
        "switch": "bridge", "scenario": "p2p", "frame_size": 64, "offered_pps": load,
        "tx_pps": tx / duration, "achieved_pps": (tx - lost) / duration, "tx_frames": tx,
        "rx_frames": tx - lost, "lost": lost, "loss_ratio": lost / tx if tx else 0.0,
        "duration_s": duration, "latency_kind": "timestamped",
        "latency_us": {"p50": p50, "p99": None if p50 is None else p50 * 4, "max": 250,
                       "count": tx - lost},
        "cycles_per_packet": 1234.5, "host_stall": stall})
    return SessionTrial(result, load, duration, intended, duration + 0.0123,
                        rejected=stall is not None, excised=stall is not None)


def _search(ndr: float, pdr: float, *, lossy_at_ndr: bool, notes: list[str]) -> SearchResult:
    ndr_goal, pdr_goal = PRESETS["quick"].goals
    trials = [_trial(1_000_000.0, 5000), _trial(500_000.0), _trial(ndr * 1.02, 12),
              _trial(ndr), _trial(ndr, 3 if lossy_at_ndr else 0),
              _trial(ndr * 0.5, 2, stall="a made-up stall")]
    return SearchResult("quick", "mlrsearch",
                        [GoalOutcome(ndr_goal, ndr, round(ndr * 1.02, 1), ndr),
                         GoalOutcome(pdr_goal, pdr, round(pdr * 1.03, 1), pdr)],
                        1000.0, 1_000_000.0, trials, 12.345,
                        {"session": "control", "trials": len(trials), "mean_s": 0.0123,
                         "median_s": 0.012, "max_s": 0.02}, 1_200_000.0, notes)


class FakeSession:
    """A trial session whose trials are made up from their load (and how often it was asked)."""
    kind = "control"
    params = SimpleNamespace(frame_size=64, io="socket", flows=1, burst=32, churn=None)

    def __init__(self) -> None:
        self.trials: list[SessionTrial] = []
        self.calls = 0

    def measure(self, rate_pps: float, duration: float, *, count: int | None = None,
                profile: bool = False) -> SessionTrial:
        self.calls += 1
        lost = 0 if rate_pps < 300_000 else int(rate_pps / 1000) + self.calls
        trial = _trial(rate_pps, lost, duration=duration, p50=10.0 + rate_pps / 100_000
                       + self.calls / 10, unsent=7 if rate_pps > 350_000 else 0)
        if profile:
            trial.result.profile = dict(PROFILE)
        self.trials.append(trial)
        return trial

    def overhead_summary(self) -> dict[str, float | int | str]:
        return {"session": self.kind, "trials": len(self.trials), "mean_s": 0.0123}


@dataclass(frozen=True)
class Placement:
    switch_cpus: tuple[int, ...] = (1,)
    tester_cpus: tuple[int, ...] = (2,)


def _testbed() -> Any:
    return SimpleNamespace(
        switch_cls=SimpleNamespace(name="bridge", versions=lambda: {"kernel": "6.1.0"}),
        scenario=SimpleNamespace(name="p2p"), switch=SimpleNamespace(forwarding_mode=lambda: "napi"),
        mtu=1500, mtu_links={}, placement=Placement(), run=SimpleNamespace(id="run-x"))


def stand_in_method(monkeypatch: pytest.MonkeyPatch, session: Callable[[], Any],
                    testbed: Callable[[], Any]) -> None:
    """measure/method's context over a fresh `session()` and `testbed()` each time a command
    opens it; any NDR search finds a made-up one (test_cli_latency_print,
    test_cli_rule_update_print)."""
    @contextmanager
    def context(plan: Any, **kw: Any) -> Iterator[MethodContext]:
        yield MethodContext(session(), testbed(), None, ["a context note"])

    def search(session: Any, p: Any, **kw: Any) -> Any:
        return _search(380_000.0, 401_000.0, lossy_at_ndr=False, notes=["the search's note"])

    monkeypatch.setattr(method_mod, "method_context", context)
    monkeypatch.setattr(search_mod, "search", search)


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The method's context over a FakeSession, three made-up searches for any search."""
    @contextmanager
    def context(plan: Any, **kw: Any) -> Iterator[MethodContext]:
        yield MethodContext(FakeSession(), _testbed(), None, ["a context note"])  # type: ignore

    def repeated(session: Any, p: Any, repeat: int, **kw: Any) -> RepeatedSearch:
        found = [_search(410_000.0, 432_100.0, lossy_at_ndr=True, notes=["a search note"]),
                 _search(400_000.4, 420_000.0, lossy_at_ndr=True, notes=["the median's note"]),
                 _search(330_000.0, 410_000.0, lossy_at_ndr=False, notes=[])]
        return RepeatedSearch(found[:repeat], 0.0123)

    monkeypatch.setattr(method_mod, "method_context", context)
    monkeypatch.setattr(repeat_mod, "repeat_search", repeated)
    monkeypatch.setattr(cli_methods, "perf_problem", lambda: None)
    monkeypatch.setattr(method_mod.time, "strftime", lambda fmt: "2026-12-02T10:00:00+0000")


CASES = {
    "search_repeated": ["search", "--switch", "bridge", "--preset", "quick", "--repeat", "3",
                        "--latency-at", "50,100", "--latency-duration", "0.5", "--profile"],
    "search_once": ["search", "--switch", "bridge", "--preset", "quick", "--repeat", "1"],
    "sweep_repeated": ["sweep", "--switch", "bridge", "--max-load", "400k", "--points", "4",
                       "--duration", "0.5", "--repeat", "2"],
    "sweep_once": ["sweep", "--switch", "bridge", "--max-load", "400k", "--points", "3"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_printed_text_and_json_stay_as_recorded(case: str, stand_ins: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert_as_recorded(CASES[case], EXPECTED, case, capsys)
