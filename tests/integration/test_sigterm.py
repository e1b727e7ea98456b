"""SIGTERM ends every measuring command as Ctrl-C does (issue 30): exit 130, one line saying so,
the partial result a search had, nothing left behind (namespaces, state file, the store's lock),
and a campaign's run marked interrupted; also when the signal comes during the engine probe,
before anything is built. Each moment is reached by polling the command's own output or the
store, never by sleeping a guess."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vswbench.engine.process import find_engine
from vswbench.host.netns import list_namespaces
from vswbench.run.state import state_dir

TINY = ["--switch", "veth", "--warmup", "0"]
SPEC = """
[campaign]
name = "vsbtest-sigterm"

[[study]]
kind = "trial"
switch = "veth"
scenario = "p2p"
rate = ["10k", "20k", "30k", "40k"]
duration = 1
"""
FAKE_ENGINE = """#!{python}
import os, sys, time
if sys.argv[1:2] == ["probe"]:       # the probe hangs: the test signals vswbench meanwhile
    open({marker!r}, "w").close()
    time.sleep(300)
os.execv({engine!r}, [{engine!r}, *sys.argv[1:]])
"""


def start(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vswbench", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def read_until(stream, needle: str, proc: subprocess.Popen) -> list[str]:
    """Lines of `stream` up to the first containing `needle` (the command must still run)."""
    lines: list[str] = []
    for line in stream:
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{proc.args[3:]} ended (rc {proc.wait()}) before {needle!r}: {lines}")


def wait_for(predicate, what: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the command ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def terminate(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)     # our own child, by PID
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, err


def run_id_of(lines: list[str]) -> str:
    for line in lines:
        if line.startswith("run vsb"):
            return line.split()[1].rstrip(":")
    raise AssertionError(f"no run id in {lines}")


def assert_interrupted(proc: subprocess.Popen, err: str, run_id: str | None) -> None:
    assert proc.returncode == 130, err
    assert "vswbench: error: interrupted by SIGTERM; everything this run created has been " \
           "removed" in err
    assert "Traceback" not in err and "bug" not in err
    if run_id is not None:
        assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
        assert not (state_dir() / f"{run_id}.json").exists()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("moment", ["testbed ready", "first trial"])
def test_search_sigterm_prints_its_bounds_and_removes_everything(root, engine, moment):
    proc = start("search", *TINY, "--no-calibration", "--min-load", "1k", "--max-load", "10k",
                 "--trial-duration", "0.5")
    lines = read_until(proc.stderr, "ready", proc)
    if moment == "first trial":
        lines += read_until(proc.stderr, " pps ", proc)
    out, err = terminate(proc)
    assert_interrupted(proc, err, run_id_of(lines))
    summary = "interrupted after 1 trials" if moment == "first trial" else "interrupted "
    assert summary in "".join(lines) + err + out


@pytest.mark.timeout(120)
def test_trial_sigterm_while_measuring(root, engine):
    proc = start("trial", *TINY, "--rate", "1k", "--duration", "60")
    lines = read_until(proc.stderr, "ready", proc)
    out, err = terminate(proc)
    assert_interrupted(proc, err, run_id_of(lines))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["sweep", "latency"])
def test_other_measuring_commands_take_the_same_path(root, engine, command):
    argv = {"sweep": ["--points", "3", "--duration", "30", "--max-load", "10k", "--min-load",
                      "1k", "--no-calibration"],
            "latency": ["--ndr", "10k", "--at", "50", "--duration", "30", "--no-calibration"]}
    proc = start(command, *TINY, *argv[command])
    lines = read_until(proc.stderr, "ready", proc)
    out, err = terminate(proc)
    assert_interrupted(proc, err, run_id_of(lines))


def store_runs(db: Path) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("select run_id, status from runs").fetchall()
    except sqlite3.Error:
        return []


def done_points(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("select count(*) from points where status='done'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.timeout(240)
def test_campaign_sigterm_marks_the_run_interrupted_and_releases_the_lock(root, engine,
                                                                          tmp_path):
    spec = tmp_path / "sigterm.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    db = out / "results.sqlite"
    proc = start("run", str(spec), "--out", str(out), "--no-report")
    wait_for(lambda: done_points(db) >= 1, "the first stored point", proc, timeout=120)
    _, err = terminate(proc)
    assert_interrupted(proc, err, None)
    runs = store_runs(db)
    assert [status for _, status in runs] == ["interrupted"], runs
    assert not [ns for ns in list_namespaces() if ns.startswith(runs[0][0])]
    assert not (out / "results.sqlite.lock").exists()
    assert done_points(db) >= 1, "the points measured before the signal are kept"


@pytest.mark.timeout(120)
def test_campaign_sigterm_during_the_engine_probe_leaves_no_lock(root, engine, tmp_path):
    """The probe (the engine's TSC frequency for the run's fingerprint) is the first thing a run
    does with the store locked: a SIGTERM there leaves no lock and no run marked running."""
    marker = tmp_path / "probing"
    fake = tmp_path / "vswbench-engine"
    fake.write_text(FAKE_ENGINE.format(python=sys.executable, marker=str(marker),
                                       engine=str(find_engine())))
    fake.chmod(0o755)
    spec = tmp_path / "sigterm.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    proc = start("run", str(spec), "--out", str(out), "--no-report",
                 env={**os.environ, "VSWBENCH_ENGINE": str(fake)})
    wait_for(marker.exists, "the engine probe", proc)
    _, err = terminate(proc)
    assert_interrupted(proc, err, None)
    assert not (out / "results.sqlite.lock").exists()
    assert "running" not in [status for _, status in store_runs(out / "results.sqlite")]
