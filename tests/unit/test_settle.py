"""The settle after a phase's drivers (measure/trial._settle): it returns once two readings of
the port counters one quiet window apart are equal, reads again after each change, and gives up
at its timeout on a steady trickle."""

from __future__ import annotations

import time

import pytest

from vswbench.measure import trial


class Counters:
    """A testbed whose port counters grow for the first `moving` readings (or always)."""

    def __init__(self, moving: int | None) -> None:
        self.moving, self.readings = moving, 0

    def activity(self) -> object:
        self.readings += 1
        if self.moving is None or self.readings <= self.moving:
            return self.readings
        return self.moving


@pytest.fixture(autouse=True)
def short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trial, "SETTLE_QUIET_S", 0.01)


def test_a_quiet_path_costs_one_window_and_two_readings() -> None:
    tb = Counters(moving=0)
    t0 = time.monotonic()
    trial._settle(tb)  # type: ignore[arg-type]
    assert tb.readings == 2 and time.monotonic() - t0 < 0.5


def test_each_change_starts_another_window() -> None:
    tb = Counters(moving=3)       # readings 1-3 differ: the 4th equals the 3rd
    trial._settle(tb)  # type: ignore[arg-type]
    assert tb.readings == 4


def test_a_steady_trickle_gives_up_at_the_timeout() -> None:
    tb = Counters(moving=None)
    t0 = time.monotonic()
    trial._settle(tb, timeout=0.1)  # type: ignore[arg-type]
    took = time.monotonic() - t0
    assert 0.08 <= took < 0.5 and tb.readings >= 5
