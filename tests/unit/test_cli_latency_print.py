"""What `vswbench latency` and `vswbench b2b` print, and their --json, from made-up trials (no
root, no engine): the method's context, its session, its bursts and the NDR search that comes
first without --ndr / --throughput are test doubles returning fixed TrialResults, SessionTrials
and SearchResults, never measurements. The expected text and JSON were recorded from the
printers before they read typed attributes instead of the JSON's keys (issue 45): both must
stay byte-identical (tests/data/cli_latency/)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.recorded_output import assert_as_recorded
from tests.unit.test_cli_methods_print import PROFILE
from tests.unit.test_cli_methods_print import FakeSession
from tests.unit.test_cli_methods_print import _testbed
from tests.unit.test_cli_methods_print import stand_in_method
from vswbench.measure import method as method_mod

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "cli_latency"


class BurstSession(FakeSession):
    """A FakeSession whose counted bursts are lost beyond a made-up buffer that moves with
    each search (every third one never loses: an unbounded search) and whose bursts are now
    and then a few frames short."""

    def measure(self, rate_pps: float, duration: float, *, count: int | None = None,
                profile: bool = False) -> Any:
        if count is None:
            return super().measure(rate_pps, duration, profile=profile)
        self.calls += 1
        buffer = 10**9 if self.calls % 17 == 0 else 700 + 37 * (self.calls % 5)
        unsent = 3 if self.calls % 7 == 0 else 0
        lost = max(count - unsent - buffer, 0)
        return SimpleNamespace(offered_count=count - unsent, unsent_count=unsent,
                               result=SimpleNamespace(lost=lost,
                                                      tx_pps=1_500_000.0 + 1000 * self.calls))


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The method's context over a BurstSession; any NDR search finds a made-up one."""
    stand_in_method(monkeypatch, BurstSession, _testbed)
    monkeypatch.setattr(method_mod.time, "strftime", lambda fmt: "2026-12-02T10:00:00+0000")
    assert PROFILE["event"] == "cycles"


CASES = {
    "latency_given": ["latency", "--switch", "bridge", "--ndr", "400k", "--at", "10,50,100",
                      "--duration", "0.5"],
    "latency_repeated": ["latency", "--switch", "bridge", "--ndr", "400k", "--at", "50,100",
                         "--duration", "0.5", "--repeat", "3", "--profile"],
    "latency_searched": ["latency", "--switch", "bridge", "--at", "90", "--duration", "1"],
    "b2b_given": ["b2b", "--switch", "bridge", "--trials", "4", "--max-frames", "5000",
                  "--throughput", "300k"],
    "b2b_bounded": ["b2b", "--switch", "bridge", "--trials", "1", "--throughput", "2M"],
    "b2b_searched": ["b2b", "--switch", "bridge", "--trials", "3", "--max-frames", "900"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_printed_text_and_json_stay_as_recorded(case: str, stand_ins: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert_as_recorded(CASES[case], EXPECTED, case, capsys)
