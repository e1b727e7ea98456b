"""Integration tests: real namespaces, the real engine. Need root and a built engine
(./setup.sh); otherwise they are skipped with the reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vswbench.engine.probe import ProbeResult
from vswbench.engine.probe import probe
from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine
from vswbench.host.pair import NamespacePair
from vswbench.host.pair import namespace_pair
from vswbench.run.ids import RunId
from vswbench.run.ids import new_run_id
from vswbench.run.registry import CleanupRegistry

BACKENDS = ("afpacket", "udp", "afxdp")


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (creates network namespaces)")


@pytest.fixture(scope="session")
def engine() -> Path:
    try:
        return find_engine()
    except EngineNotFound as exc:
        pytest.skip(f"engine not built: {exc}")


@pytest.fixture(scope="session")
def probe_result(engine: Path) -> ProbeResult:
    return probe(engine)


@pytest.fixture(params=BACKENDS)
def backend(request, probe_result: ProbeResult) -> str:
    info = probe_result.backend(request.param)
    if info is None:
        pytest.skip(f"{request.param}: not in the engine's probe")
    if not info.usable:
        pytest.skip(f"{request.param}: not usable here: {info.reason}")
    return request.param


@pytest.fixture(scope="session")
def fixture_report(tmp_path_factory):
    """The report of a fixture store (tests/report_fixtures.py: invented numbers) by variant,
    built once a session: the browser tests only read it (a page of their own, if any, goes
    beside it), and a full report takes 10 s to draw on two cores."""
    from tests.report_fixtures import write_fixture_store
    from vswbench.report.build import build_report

    built = {}

    def report(variant: str = "full"):
        if variant not in built:
            base = tmp_path_factory.mktemp(f"report-{variant}")
            write_fixture_store(base / "results.sqlite", variant=variant)
            built[variant] = build_report(base, base / "report")
        return built[variant]

    return report


@pytest.fixture
def registry():
    """Everything a test creates is registered here and removed after it, pass or fail."""
    reg = CleanupRegistry()
    try:
        yield reg
    finally:
        reg.teardown()


@pytest.fixture
def run_id() -> RunId:
    return new_run_id()


@pytest.fixture
def ns_pair(root, registry: CleanupRegistry, run_id: RunId) -> NamespacePair:
    """Two namespaces joined by a veth pair (198.18.0.1/30 - 198.18.0.2/30), removed after."""
    with namespace_pair(run_id, registry) as pair:
        yield pair
