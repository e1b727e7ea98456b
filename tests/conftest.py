"""The suite on two workers (`pytest -n 2`, pytest-xdist) without one test disturbing another.

Around every test its worker holds locks (tests/machine_lock.py) that the workers share:
- "machine", shared by every test, exclusively by a test marked `alone` (it measures rates,
  latency, stalls or time): nothing else of the suite runs beside an `alone` test;
- "runs", shared by every integration test (it makes vsb namespaces, links and temp dirs),
  exclusively by a test marked `no_other_runs` (it checks that no vsb object appears, or lists
  them all): no integration test runs beside it, unit tests may.
Run by one process (plain `pytest`) no lock is taken: the tests run one at a time anyway.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.machine_lock import held_locks

ALONE = "alone"
NO_OTHER_RUNS = "no_other_runs"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{ALONE}: under pytest -n N no other test runs beside it (it measures "
        "rates, latency, stalls or time)")
    config.addinivalue_line(
        "markers", f"{NO_OTHER_RUNS}: under pytest -n N no integration test runs beside it (it "
        "checks that no vsb namespace or /tmp/vsb-* directory appears, or lists them all)")


def locks_of(item: pytest.Item) -> list[tuple[str, bool]]:
    """The (lock, exclusive) pairs a test holds while it runs, in the order they are taken."""
    if item.get_closest_marker(ALONE):
        return [("machine", True)]
    if item.get_closest_marker(NO_OTHER_RUNS):
        return [("machine", False), ("runs", True)]
    if item.get_closest_marker("integration"):
        return [("machine", False), ("runs", False)]
    return [("machine", False)]


@pytest.fixture(autouse=True)
def _machine_share(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    directory = tmp_path_factory.getbasetemp().parent   # shared by the run's workers
    with held_locks(directory, locks_of(request.node)):
        yield
