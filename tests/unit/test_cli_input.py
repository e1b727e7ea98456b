"""Bad command-line input is refused before anything is built (issue 30, item 3): each case exits
2 with one line naming the problem, never "This is a bug", and reaches none of the points where
a command starts acting on the machine (build_guard.py: a namespace, a run scope, the switch's
availability check, the engine's probe)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.build_guard import guard_build
from vswbench.cli.app import main
from vswbench.cli.arguments import MAX_ECHOED
from vswbench.cli.arguments import one_line
from vswbench.errors import UsageError
from vswbench.units import FrameSize
from vswbench.units import parse_rate

LONG = "x" * 5000


@pytest.fixture
def reached(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("COLUMNS", "200")
    return guard_build(monkeypatch)


def refused(capsys: pytest.CaptureFixture[str], reached: list[str], argv: list[str]) -> str:
    """Run `argv`; assert it was refused as bad input before anything was built; its stderr."""
    code = main(argv)
    captured = capsys.readouterr()
    assert not reached, f"{argv}: went on to {reached} before refusing"
    assert code == 2, f"{argv}: exit {code}\n{captured.err}"
    assert "This is a bug" not in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    return captured.err


# -- checked too late: before the fix each of these created namespaces first -----------------
@pytest.mark.parametrize("argv, needle", [
    (["trial", "--switch", "bridge", "--option", "bridge_fdb=bogus"], "bridge_fdb"),
    (["search", "--switch", "bridge", "--option", "bridge_fdb=bogus"], "bridge_fdb"),
    (["trial", "--switch", "shaped"], "needs a rate"),
    (["trial", "--switch", "shaped", "--option", "shape_pps=0"], "rate '0'"),
    (["trial", "--switch", "shaped", "--option", "shape_pps=nan"], "rate 'nan'"),
    (["trial", "--switch", "shaped", "--option", "shape_pps=1e308"], "rate '1e308'"),
    (["search", "--switch", "shaped"], "needs a rate"),
    (["search", "--switch", "shaped", "--shape-pps", "nan"], "rate 'nan'"),
    (["latency", "--switch", "veth", "--ndr", "1G", "--at", "200"], "2e+09 pps"),
    (["latency", "--switch", "veth", "--ndr", "10", "--at", "1"], "0.1 pps"),
    (["search", "--switch", "veth", "--max-load", "1G", "--latency-at", "200"], "2e+09 pps"),
    (["search", "--switch", "veth", "--min-load", "500k", "--max-load", "100k"], "not below"),
    (["rule-update", "--switch", "ovs", "--update-rate", "nan"], "--update-rate"),
    (["search", "--switch", "veth", "--pdr-loss", "nan"], "--pdr-loss"),
    (["demo", "--rtt-rate", "nan"], "--rtt-rate"),
])
def test_checked_before_anything_is_built(capsys, reached, argv, needle) -> None:
    assert needle in refused(capsys, reached, argv)


# -- accepted silently before the fix -----------------------------------------------------------
@pytest.mark.parametrize("argv, needle", [
    (["run", "--suite", "quick", "--dry-run", "--dut", "foo"], "--inventory"),
    (["trial", "--switch", "memif", "--io", "afpacket"], "DPDK ports"),
    (["search", "--switch", "testpmd", "--io", "afxdp"], "DPDK ports"),
    (["trial", "--switch", "veth", "--option", "nf=fwd"], "p2p has none"),
    (["trial", "--switch", "veth", "--scenario", "p2p", "--nf-cpus", "1"], "--nf-cpus"),
    (["search", "--switch", "veth", "--no-calibration", "--recalibrate"], "contradict"),
    (["trial", "--switch", "bridge", "--option", "bridge_fdb=learn", "--option",
      "bridge_fdb=static"], "given twice"),
    (["search", "--switch", "shaped", "--shape-pps", "10k", "--option", "shape_pps=5k"],
     "given twice"),
    (["trial", "--switch", "veth", "--churn", "0/0"], "above 0"),
    (["trial", "--switch", "veth", "--rate", "١٠٠k"], "not an ASCII digit"),
    (["trial", "--switch", "veth", "--rate", "１００k"], "not an ASCII digit"),
    (["trial", "--switch", "veth", "--size", "６４"], "not an ASCII digit"),
    (["trial", "--switch", "veth", "--flows", "٢"], "not an ASCII digit"),
    (["compare", "--fail-if", "ndr:-200%", "a", "b"], "100 %"),
    (["trial", "--switch", "veth", "--flows", "2", "--flows=3"], "--flows is given twice"),
    (["search", "--switch", "veth", "--switch", "bridge"], "--switch is given twice"),
    (["run", "--suite", "quick", "--inventory", "/nonexistent/hosts.yml"], "cannot read"),
    (["run", "--suite", "quick", "--inventory", "/nonexistent/hosts.yml", "--dut", ""],
     "--dut is empty"),
])
def test_refused_not_accepted_silently(capsys, reached, argv, needle, tmp_path) -> None:
    if argv[0] == "compare":
        argv = [*argv[:3], str(tmp_path), str(tmp_path)]
    assert needle in refused(capsys, reached, argv)


def test_units_read_ascii_digits_only() -> None:
    for text in ("١٠٠k", "１００", "٥"):
        with pytest.raises(UsageError):
            parse_rate(text)
    for text in ("６４", "٦٤"):
        with pytest.raises(UsageError):
            FrameSize.parse(text)
    assert parse_rate(" 1.5M ") == 1.5e6 and FrameSize.parse("64").bytes == 64


# -- click's usage errors: one line, a long value cut -------------------------------------------
@pytest.mark.parametrize("argv, needle", [
    (["trial", "--foo"], "vswbench trial: error: no such option"),
    (["trial"], "missing option '--switch'"),
    (["trial", "--switch", "veth", "--flows", "0"], "see vswbench trial --help"),
    (["bogus"], "no such command"),
])
def test_usage_errors_are_one_line(capsys, reached, argv, needle) -> None:
    assert needle in refused(capsys, reached, argv)


@pytest.mark.parametrize("argv", [
    ["trial", "--switch", "veth", "--flows", LONG],
    ["trial", "--switch", "veth", "--rate", LONG],
    ["trial", "--switch", LONG],
    ["trial", "--switch", "veth", "--scenario", LONG],
    ["search", "--switch", "veth", "--option", LONG],
])
def test_a_long_value_is_not_echoed_whole(capsys, reached, argv) -> None:
    line = refused(capsys, reached, argv)
    assert "x" * (MAX_ECHOED + 1) not in line and "…" in line, line


def test_one_line_cuts_values_and_joins_lines() -> None:
    assert one_line("bad 'a\nb'") == "bad 'a b'"
    cut = one_line(f"--x '{'y' * 300}': bad")
    assert cut.endswith("…': bad") and len(cut) < 80


# -- "This is a bug" for bad input before the fix -----------------------------------------------
def test_export_to_an_empty_path(capsys, reached, tmp_path) -> None:
    assert "--to is empty" in refused(capsys, reached, ["export", str(tmp_path), "--to", ""])
    assert "--to is empty" in refused(capsys, reached, ["export", str(tmp_path), "--to="])


@pytest.mark.parametrize("bad", ["abc", None, math.inf, -1.0, True, 1e12])
def test_a_damaged_calibration_cache_is_measured_again(tmp_path, bad) -> None:
    from vswbench.engine.params import TrialParams
    from vswbench.measure import calibration as cal
    from vswbench.scenario import parse
    from vswbench.switches.base import Placement

    scenario, workload, placement = parse("p2p"), TrialParams(64), Placement(0, 1, ())
    key = cal.cache_key(scenario, workload, placement)
    entry = {"key": key, "ceiling_pps": bad, "tx_pps": 1e5, "trials": 3, "seconds_each": 1.0,
             "measured_at": 1e9, "scenario": "p2p", "frame_size": 64, "io": "afpacket",
             "flows": 1}
    path = tmp_path / "cache.json"
    path.write_text(json.dumps({key: entry}))     # json writes inf as Infinity
    warnings: list[str] = []
    assert cal.cached(scenario, workload, placement, path, now=1e9 + 1,
                      warn=warnings.append) is None
    assert len(warnings) == 1 and "ceiling_pps" in warnings[0] and str(path) in warnings[0]
    good = {**entry, "ceiling_pps": 5e5}
    path.write_text(json.dumps({key: good}))
    assert cal.cached(scenario, workload, placement, path, now=1e9 + 1).ceiling_pps == 5e5


def test_the_c_locale_prints_without_failing(tmp_path: Path) -> None:
    """ASCII stdout (LC_ALL=C, no UTF-8 coercion): the comparison and the ranking (whose verdict
    lines hold "≥") come out, never a "bug" after the work."""
    from tests.report_fixtures import write_fixture_store

    write_fixture_store(tmp_path / "results.sqlite", "quick")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "COLUMNS": "40"}
    env.pop("PYTHONIOENCODING", None)
    proc = subprocess.run([sys.executable, "-m", "vswbench", "compare", str(tmp_path),
                           str(tmp_path)], capture_output=True, env=env, timeout=120)
    err = proc.stderr.decode("ascii", "replace")
    assert proc.returncode == 0, err
    assert "This is a bug" not in err and "Traceback" not in err
    assert b"comparisons" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "vswbench", "report", str(tmp_path), "--print",
                           "text"], capture_output=True, env=env, timeout=120)
    err = proc.stderr.decode("ascii", "replace")
    assert proc.returncode == 0 and "This is a bug" not in err and "Traceback" not in err, err
    assert b"baseline memif \xe2\x89\xa5 10.7" in proc.stdout or \
        b"baseline memif \\u2265 10.7" in proc.stdout
