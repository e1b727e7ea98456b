"""A pytest plugin for switch and CNI developers: assert on vswbench results in your own CI.

Enable it with `-p vswbench.pytest_plugin` (or `pytest_plugins = ["vswbench.pytest_plugin"]` in
a conftest.py) and point it at a results directory:

    pytest -p vswbench.pytest_plugin --vswbench-results "$(ls -d results/quick-* | tail -1)"

    def test_bridge_keeps_up(vswbench_results):
        baseline = vswbench_results.ndr("veth", size=64)
        assert vswbench_results.ndr("bridge", size=64) >= 0.1 * baseline   # a loose floor

(`vswbench run --suite quick` writes results/quick-<date-time>/; the newest is the last.)

Fixtures:
- `vswbench_results`: the Results (vswbench.api) of --vswbench-results DIR (or the environment
  variable VSWBENCH_RESULTS); the test is skipped, saying how to give one, when neither is set.
- `vswbench_load`: a function path -> Results, for tests that read several directories.
- `vswbench_search`: a function (switch, **kw) -> SwitchResult that measures now
  (vswbench.api.search into the test's tmp_path); skipped unless running as root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from vswbench import api

ENV = "VSWBENCH_RESULTS"


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--vswbench-results", default=None, metavar="DIR",
                     help="vswbench results directory for the vswbench_results fixture "
                          f"[${ENV}]")


@pytest.fixture(scope="session")
def vswbench_results(pytestconfig: Any) -> api.Results:
    path = pytestconfig.getoption("vswbench_results") or os.environ.get(ENV)
    if not path:
        pytest.skip(f"no vswbench results: give --vswbench-results DIR or set {ENV}")
    return api.load_results(path)


@pytest.fixture(scope="session")
def vswbench_load() -> Callable[..., api.Results]:
    return api.load_results


@pytest.fixture
def vswbench_search(tmp_path: Any) -> Callable[..., api.SwitchResult]:
    if os.geteuid() != 0:
        pytest.skip("vswbench_search measures: it needs root (network namespaces)")

    def run(switch: str, **kw: Any) -> api.SwitchResult:
        return api.search(switch, out=kw.pop("out", tmp_path / f"search-{switch}"), **kw)
    return run
