"""tests/machine_lock.py and the locks conftest gives a test: ordinary tests share the machine, an
`alone` test waits for them to end and runs by itself, an ordinary test that comes while it waits
goes after it (no starvation), and a `no_other_runs` test waits for integration tests only.
Threads stand in for the workers: each lock call opens its own descriptors, and flock locks of
different open files conflict within one process as between processes."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import locks_of
from tests.machine_lock import held_locks

WAIT_S = 10.0     # upper bound for what must happen; the lock itself is immediate
ABSENT_S = 0.3    # how long a test that must wait is watched not to enter


class Worker(threading.Thread):
    """Enters the lock, records that it did, holds it until released."""

    def __init__(self, directory: Path, name: str, *, alone: bool, entered: list[str],
                 locks: list[tuple[str, bool]] | None = None) -> None:
        super().__init__(name=name, daemon=True)
        self.directory, self.entered = directory, entered
        self.locks = [("machine", alone)] if locks is None else locks
        self.inside = threading.Event()
        self.release = threading.Event()

    def run(self) -> None:
        with held_locks(self.directory, self.locks):
            self.entered.append(self.name)
            self.inside.set()
            self.release.wait(WAIT_S)


def _turnstile_held(directory: Path) -> bool:
    fd = os.open(directory / "machine.turnstile", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _until(predicate, what: str) -> None:
    done = threading.Event()
    for _ in range(int(WAIT_S / 0.01)):
        if predicate():
            return
        done.wait(0.01)
    raise AssertionError(f"not within {WAIT_S} s: {what}")


def test_shared_tests_run_side_by_side(tmp_path):
    entered: list[str] = []
    a, b = (Worker(tmp_path, n, alone=False, entered=entered) for n in ("a", "b"))
    a.start()
    b.start()
    assert a.inside.wait(WAIT_S) and b.inside.wait(WAIT_S)
    a.release.set()
    b.release.set()
    a.join(WAIT_S)
    b.join(WAIT_S)


def test_alone_waits_for_shared_and_is_not_starved(tmp_path):
    entered: list[str] = []
    first = Worker(tmp_path, "shared-1", alone=False, entered=entered)
    first.start()
    assert first.inside.wait(WAIT_S)
    lone = Worker(tmp_path, "alone", alone=True, entered=entered)
    lone.start()
    _until(lambda: _turnstile_held(tmp_path), "the alone test queues at the turnstile")
    assert not lone.inside.wait(ABSENT_S), "alone entered beside a running test"
    later = Worker(tmp_path, "shared-2", alone=False, entered=entered)
    later.start()
    assert not later.inside.wait(ABSENT_S), "a shared test overtook the waiting alone test"
    first.release.set()
    assert lone.inside.wait(WAIT_S)
    assert not later.inside.wait(ABSENT_S), "a shared test ran beside the alone test"
    lone.release.set()
    assert later.inside.wait(WAIT_S)
    later.release.set()
    for w in (first, lone, later):
        w.join(WAIT_S)
    assert entered == ["shared-1", "alone", "shared-2"]


class _Item:
    """A test item as locks_of reads it: its markers only."""

    def __init__(self, *markers: str) -> None:
        self.markers = markers

    def get_closest_marker(self, name: str) -> str | None:
        return name if name in self.markers else None


def _item(*markers: str) -> pytest.Item:
    return cast(pytest.Item, _Item(*markers))


def test_locks_by_marker():
    assert locks_of(_item()) == [("machine", False)]
    assert locks_of(_item("integration")) == [("machine", False), ("runs", False)]
    assert locks_of(_item("integration", "alone")) == [("machine", True)]
    assert locks_of(_item("no_other_runs")) == [("machine", False), ("runs", True)]
    assert locks_of(_item("integration", "no_other_runs")) == [("machine", False), ("runs", True)]


def test_no_other_runs_waits_for_integration_tests_only(tmp_path):
    entered: list[str] = []
    unit = Worker(tmp_path, "unit", alone=False, entered=entered, locks=locks_of(_item()))
    integ = Worker(tmp_path, "integration", alone=False, entered=entered,
                   locks=locks_of(_item("integration")))
    for w in (unit, integ):
        w.start()
        assert w.inside.wait(WAIT_S)
    watcher = Worker(tmp_path, "watcher", alone=False, entered=entered,
                     locks=locks_of(_item("no_other_runs")))
    watcher.start()
    assert not watcher.inside.wait(ABSENT_S), "it ran beside an integration test"
    integ.release.set()
    assert watcher.inside.wait(WAIT_S), "it waited for a unit test too"
    watcher.release.set()
    unit.release.set()
    for w in (unit, integ, watcher):
        w.join(WAIT_S)
    assert entered == ["unit", "integration", "watcher"]
