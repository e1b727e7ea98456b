"""Adding a backend is its module and its catalog entry: a backend defined here and added to
switches/catalog.py's BACKENDS only shows up in `vswbench switches`, the suites (switch = ["*"]),
the option keys, doctor's tools and the profile classifier's daemons; a calibration device stays
out of "*". And every module of switches/ imports on its own (the families import each other)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import vswbench.engine.probe as probe
import vswbench.switches.catalog as catalog
from vswbench.campaign.spec import builtin
from vswbench.campaign.spec import expand
from vswbench.cli import app as cli
from vswbench.host.profile import classify_frames
from vswbench.switches.base import Availability
from vswbench.switches.base import Switch
from vswbench.switches.options import check_keys
from vswbench.switches.options import unknown_key

SWITCHES = Path(__file__).resolve().parents[2] / "src" / "vswbench" / "switches"


class DummySwitch(Switch):
    name = "vsbdummy"
    description = "a backend defined by a test"
    options_read = {"dummy_depth": "vsbdummy: how deep the dummy forwards"}
    tools = {"vsbdummy-ctl": "vsbdummy-tools"}
    daemons = ("vsbdummyd",)

    @classmethod
    def availability(cls) -> Availability:
        return Availability(False, "a test's backend", "none")

    def setup(self) -> None: ...
    def attach(self, port): ...  # type: ignore[no-untyped-def]
    def forward(self, paths) -> None: ...  # type: ignore[no-untyped-def]
    def teardown(self) -> None: ...
    def config_dump(self) -> str: return ""
    def port_counters(self): return []  # type: ignore[no-untyped-def]


class DummyCalibration(DummySwitch):
    name = "vsbdummy-cal"
    calibration = True


@pytest.fixture
def added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "BACKENDS", (*catalog.BACKENDS, DummySwitch, DummyCalibration))


def test_a_backend_added_to_the_catalog_is_everywhere(added, capsys, monkeypatch) -> None:
    assert cli.main(["switches", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["vsbdummy"]["available"] is False and rows["vsbdummy"]["reason"] == "a test's backend"

    switches = {p.switch for p in expand(builtin("quick"))}
    assert "vsbdummy" in switches and "vsbdummy-cal" not in switches and "shaped" not in switches
    assert catalog.calibration_switches() == ["shaped", "vsbdummy-cal"]

    assert unknown_key("dummy_depth") is None
    check_keys(["dummy_depth", "kernel_mode"])

    monkeypatch.setattr(probe, "probe", lambda *a, **k: probe.parse_probe(
        '{"backends":[],"kernel":{},"tsc":{"hz":2e9,"invariant":true}}'))
    assert cli.main(["doctor", "--json", "--stall-seconds", "0"]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)["tools"]}
    assert tools["vsbdummy-ctl"]["present"] is False
    assert tools["vsbdummy-ctl"]["needed_for"] == "switch vsbdummy, vsbdummy-cal (vsbdummy-tools)"

    daemons = catalog.daemon_comms()
    assert classify_frames("vsbdummyd", ["main", "dummy_loop"], daemons) == "daemon"
    assert classify_frames("vsbdummyd", ["main", "dummy_loop"], ()) == "other"


def test_without_it_the_lists_are_the_backends_own() -> None:
    assert "vsbdummy" not in catalog.all_switches()
    assert unknown_key("dummy_depth") is not None
    assert "vsbdummy-ctl" not in catalog.backend_tools()
    assert catalog.baseline_switch("dpdk") == "memif" and catalog.baseline_switch("afpacket") == "veth"
    assert catalog.daemon_comms()[:2] == ("ovs-vswitchd", "ovsdb-server")


def test_every_switches_module_imports_first() -> None:
    """A family's __init__ imports its backends: importing any module before all others must
    work (an import circle between families fails only in that order)."""
    names = sorted(".".join(("vswbench", *p.relative_to(SWITCHES.parent.parent).with_suffix("")
                                  .parts[1:])).removesuffix(".__init__")
                   for p in SWITCHES.rglob("*.py"))
    script = ("import importlib, sys\nfor name in sys.argv[1:]:\n"
              "    for m in [m for m in sys.modules if m.startswith('vswbench')]:\n"
              "        del sys.modules[m]\n"
              "    importlib.import_module(name)\n")
    proc = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(names) > 30
