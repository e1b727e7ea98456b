"""What `vswbench latency` and `vswbench b2b` print, and their --json, from made-up trials (no
root, no engine): the method's context, its session, its bursts and the NDR search that comes
first without --ndr / --throughput are test doubles returning fixed TrialResults, SessionTrials
and SearchResults, never measurements. The expected text and JSON were recorded from the
printers before they read typed attributes instead of the JSON's keys (issue 45): both must
stay byte-identical (tests/data/cli_latency/)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.test_cli_methods_print import PROFILE
from tests.unit.test_cli_methods_print import FakeSession
from tests.unit.test_cli_methods_print import _search
from tests.unit.test_cli_methods_print import _testbed
from vswbench.cli import latency as cli_latency
from vswbench.cli.app import main
from vswbench.measure import method as method_mod
from vswbench.measure import search as search_mod
from vswbench.measure.method import MethodContext

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
    @contextmanager
    def context(plan: Any, **kw: Any) -> Iterator[MethodContext]:
        yield MethodContext(BurstSession(), _testbed(), None, ["a context note"])  # type: ignore

    def search(session: Any, p: Any, **kw: Any) -> Any:
        return _search(380_000.0, 401_000.0, lossy_at_ndr=False, notes=["the search's note"])

    monkeypatch.setattr(method_mod, "method_context", context)
    # the command opened the context itself before its body moved to measure/method.py
    monkeypatch.setattr(cli_latency, "method_context", context, raising=False)
    monkeypatch.setattr(search_mod, "search", search)
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
    assert main(CASES[case]) == 0
    printed = capsys.readouterr()
    assert main([*CASES[case], "--json"]) == 0
    as_json = capsys.readouterr().out
    assert (printed.out, printed.err, as_json) == (
        (EXPECTED / f"{case}.out").read_text(), (EXPECTED / f"{case}.err").read_text(),
        (EXPECTED / f"{case}.json").read_text())
