"""A new kernel backend is its module plus one catalog line (issue 45, part 3): a dummy backend,
a KernelSwitch subclass put into the catalog's BACKENDS by monkeypatch (no file of the repository
touched), is seen by everything that lists the backends: `clean`'s name patterns, the suites'
switch = ["*"], `vswbench switches`, the docs' lists, the integration tests' matrices and the
report's container baselines. No root: nothing is built."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from vswbench.campaign.spec import builtin
from vswbench.cli import app as cli
from vswbench.report.sections.containers import baseline_of
from vswbench.report.sections.containers import container_switch
from vswbench.run.ids import NUM
from vswbench.run.ids import RunId
from vswbench.switches import catalog
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.testbed.leftovers import select_leftovers

ROOT = Path(__file__).resolve().parents[2]
RID = RunId("vsb1a2b")


class DummySwitch(KernelSwitch):
    """A kernel backend that only declares itself: its ports are KernelSwitch's veth pairs, and
    it names one device of its own, vsb<id>dmN."""
    name = "dummy-fwd"
    description = "a test's dummy kernel backend"
    link_roles = {**KernelSwitch.link_roles, rf"dm{NUM}": "the dummy's own device"}

    @classmethod
    def availability(cls) -> Availability:
        return Availability(False, "a test's dummy", "nothing to fix")

    def setup(self) -> None: ...

    def forward(self, paths: list[ForwardPath]) -> None: ...

    def config_dump(self) -> str:
        return ""


class DummyNetwork(DummySwitch):
    """A container network wiring macvlan: the report compares it with macvlan."""
    name = "dummy-cni"
    container_network = True
    baseline = "macvlan"


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(catalog, "BACKENDS", (*catalog.BACKENDS, DummySwitch, DummyNetwork))
    yield


def _load(path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh import of `path` (its lists computed now, from the patched catalog)."""
    name = f"_contract_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)     # its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


def _params(function: object, argnames: str) -> list[str]:
    marks = getattr(function, "pytestmark", [])
    (mark,) = [m for m in marks if m.name == "parametrize" and m.args[0] == argnames]
    return list(mark.args[1])


def test_clean_knows_its_names_only_while_it_is_in_the_catalog(dummy: None,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    names = [RID.name("dm3"), RID.ifname("sw0")]
    plan = select_leftovers(namespaces=(), links=names, temp_dirs=(), states=(),
                            pids_in_namespace=lambda ns: [],
                            identify_process=lambda p: pytest.fail("no process to identify"))
    assert plan.links == names and plan.not_ours == []
    assert "dm[0-9]{1,3}" in catalog.role_patterns()
    monkeypatch.setattr(catalog, "BACKENDS", tuple(c for c in catalog.BACKENDS
                                                   if c not in (DummySwitch, DummyNetwork)))
    assert not catalog.is_run_name(RID.name("dm3"))        # the test would see a stale pattern


def test_the_suites_rank_it_and_leave_the_container_network_out(dummy: None) -> None:
    assert "dummy-fwd" in catalog.ranked_switches()
    assert "dummy-cni" not in catalog.ranked_switches()
    (study,) = builtin("quick").studies                     # its switch = ["*"]
    assert "dummy-fwd" in study.switches and "dummy-cni" not in study.switches


def test_vswbench_switches_lists_it(dummy: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["switches", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["dummy-fwd"]["available"] is False
    assert rows["dummy-fwd"]["reason"] == "a test's dummy"


def test_the_docs_lists_have_it(dummy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _load(ROOT / "docs" / "gen_reference.py", monkeypatch)
    block = gen.switches_block()
    assert "`dummy-fwd`" in block and f"{len(catalog.BACKENDS)} backends" in block
    assert "| [`dummy-fwd`](#dummy-fwd) | kernel | switch |" in gen.switches_page()
    assert "## dummy-cni" in gen.switches_page()


def test_the_integration_matrices_run_it(dummy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _load(ROOT / "tests" / "integration" / "test_trial_matrix.py", monkeypatch)
    assert "dummy-fwd" in matrix.SWITCHES and "dummy-cni" in matrix.SWITCHES
    assert {sc for sw, sc in matrix.CASES if sw == "dummy-fwd"} == set(matrix.SCENARIOS)
    kernel = _load(ROOT / "tests" / "integration" / "test_switch_kernel.py", monkeypatch)
    both_ways = _params(kernel.test_forwards_both_ways, "name")
    assert "dummy-fwd" in both_ways and "dummy-cni" not in both_ways


def test_the_report_compares_the_container_network_with_its_baseline(dummy: None) -> None:
    assert baseline_of("dummy-cni") == "macvlan" and container_switch("macvlan")
    assert baseline_of("cni-ptp") == "router" and baseline_of("cni-bridge") == "bridge"
