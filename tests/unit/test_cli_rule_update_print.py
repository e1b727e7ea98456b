"""What `vswbench rule-update` prints, and its --json, from made-up timings and trials (no root,
no engine): the method's context, its session, the switch's rule mechanisms, the background
updater and the NDR search that comes first without --rate are test doubles returning fixed
values, never measurements. The expected text and JSON were recorded from the printers before
they read typed attributes instead of the JSON's keys (issue 45): both must stay byte-identical
(tests/data/cli_rule_update/)."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.recorded_output import assert_as_recorded
from tests.unit.test_cli_methods_print import FakeSession
from tests.unit.test_cli_methods_print import _testbed
from tests.unit.test_cli_methods_print import stand_in_method
from vswbench.measure import method as method_mod
from vswbench.measure import rule_update as rule_update_mod

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "cli_rule_update"


class Mechanism:
    """A rule mechanism whose batches take made-up seconds (nftables installs 100 rules in no
    measurable time)."""

    def __init__(self, name: str, scale: float) -> None:
        self.name, self.scale, self.calls = name, scale, 0

    def install(self, n: int) -> float:
        self.calls += 1
        return 0.0 if self.name == "nftables" and n == 100 else n * self.scale + self.calls * 1e-4

    def remove(self) -> float:
        self.calls += 1
        return self.scale * 500 + self.calls * 2e-4


class Updater:
    """The background updater, made up: three changes of known seconds per trial."""

    def __init__(self, mech: Any, rules: int, rate: float) -> None:
        self.stop = threading.Event()
        self.times = [round(rules * 1e-6 + i * 1e-3 + rate * 1e-5, 6) for i in range(3)]
        self.error: BaseException | None = None

    def start(self) -> None:
        pass

    def join(self, timeout: float | None = None) -> None:
        pass


class RuleSession(FakeSession):
    def warm_up(self, rate_pps: float, duration: float) -> None:
        pass


def _router() -> Any:
    tb = _testbed()
    mechanisms = [Mechanism("routes", 2e-6), Mechanism("nftables", 5e-6)]
    tb.switch_cls = SimpleNamespace(name="router", versions=lambda: {"kernel": "6.1.0"})
    tb.switch = SimpleNamespace(name="router", forwarding_mode=lambda: "routed",
                                rule_mechanisms=lambda: mechanisms)
    return tb


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The method's context over a RuleSession and a router with two made-up mechanisms; any
    NDR search finds a made-up one."""
    stand_in_method(monkeypatch, RuleSession, _router)
    monkeypatch.setattr(rule_update_mod, "_Updater", Updater)
    monkeypatch.setattr(method_mod.time, "strftime", lambda fmt: "2026-12-02T10:00:00+0000")


CASES = {
    "rule_update_load": ["rule-update", "--switch", "router", "--rules", "100,1000", "--repeat",
                         "3", "--rate", "350k", "--duration", "0.5", "--update-rate", "4"],
    "rule_update_searched": ["rule-update", "--switch", "router", "--rules", "500", "--repeat",
                             "1", "--fraction", "40", "--update-rules", "64"],
    "rule_update_no_load": ["rule-update", "--switch", "router", "--rules", "1000", "--no-load"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_printed_text_and_json_stay_as_recorded(case: str, stand_ins: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert_as_recorded(CASES[case], EXPECTED, case, capsys)
