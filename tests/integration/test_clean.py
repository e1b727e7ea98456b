"""(e) `vswbench clean` removes a killed run's leftovers and nothing else.

Other sessions may have their own vsb objects on this host, so the unrestricted command runs only as
--dry-run (same plan, nothing removed); the removal itself is narrowed to this test's run id."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.run.procs import RecordedProcess
from vswbench.run.state import RunState
from vswbench.run.state import process_start_time
from vswbench.run.state import state_dir
from vswbench.run.statefile import ensure_state_dir


def vswbench(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vswbench", *argv], capture_output=True,
                          text=True, timeout=120)


def delete_namespace(name: str) -> None:
    if namespace_exists(name):
        run(["ip", "netns", "delete", name], check=False)


def dead_run(run_id: str, processes: list[RecordedProcess], temp_dirs: list[str]) -> RunState:
    """A state file as a killed run leaves it: its owner (this PID, another start time) gone."""
    ensure_state_dir(state_dir())
    state = RunState(run_id, os.getpid(), (process_start_time(os.getpid()) or 0) + 1, time.time(),
                     temp_dirs, processes)
    state.path = state_dir() / f"{run_id}.json"
    state.save()
    return state


@pytest.mark.timeout(120)
def test_clean_removes_vsb_leftovers_and_nothing_else(root, run_id, tmp_path):
    leftover = run_id.name("tester")        # a killed run's namespace
    busy = run_id.name("sink")              # a vsb namespace with an unrecorded process in it
    other = "tst" + str(run_id)[3:] + "z"   # not ours: must survive
    lookalike = "vsb-user" + str(run_id)[3:]  # starts with vsb, but no run names things so
    root_link = run_id.ifname("w1")         # a veth left in the root namespace
    temp_dir = Path(f"/tmp/vsb-{run_id}-leftover")
    state_file = state_dir() / f"{run_id}.json"
    sleeper = stranger = None
    try:
        for ns in (leftover, busy, other, lookalike):
            run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", root_link, "type", "veth", "peer", "name", run_id.ifname("w2")])
        temp_dir.mkdir()
        (temp_dir / "junk").write_text("x")
        # A process of the killed run, recorded in its state file (whose owner is gone).
        sleeper = subprocess.Popen(["ip", "netns", "exec", leftover, sys.executable, "-c",
                                    "import time; time.sleep(300)"])
        stranger = subprocess.Popen(["ip", "netns", "exec", busy, sys.executable, "-c",
                                     "import time; time.sleep(300)"])
        deadline = time.monotonic() + 10
        while not run(["ip", "netns", "pids", busy]).split() and time.monotonic() < deadline:
            time.sleep(0.01)
        # written as a run writes it (its owner, this process, with another start time: gone)
        dead_run(str(run_id), [RecordedProcess.of(sleeper.pid, sleeper.args)], [str(temp_dir)])

        # Unrestricted, but only a dry run: other sessions' vsb objects on this host stay intact.
        preview = vswbench("clean", "--dry-run")
        assert preview.returncode == 0, preview.stderr
        assert f"would remove namespace {leftover}" in preview.stdout
        assert f"would stop process {sleeper.pid} of run {run_id}" in preview.stdout
        assert f"would remove link {root_link}" in preview.stdout
        assert f"would remove directory {temp_dir}" in preview.stdout
        assert other not in preview.stdout, "a non-vsb namespace must never be a candidate"
        assert f"left namespace {busy} alone" in preview.stderr
        assert lookalike not in preview.stdout, "a bare vsb prefix is not a run's object"
        assert f"left {lookalike} alone" in preview.stderr
        assert leftover in list_namespaces(), "a dry run removes nothing"

        result = vswbench("clean", "--prefix", str(run_id))

        assert result.returncode == 0, result.stderr
        assert f"removed namespace {leftover}" in result.stdout
        assert leftover not in list_namespaces()
        assert sleeper.wait(timeout=10) != 0, "the recorded process should have been stopped"
        assert busy in list_namespaces(), "a namespace with a live unrecorded process stays"
        assert stranger.poll() is None, "an unrecorded process is never killed"
        assert busy in result.stderr
        assert other in list_namespaces(), "a non-vsb namespace must be left alone"
        assert root_link not in run(["ip", "-br", "link", "show"])
        assert not temp_dir.exists()
        assert not state_file.exists()

        forced = vswbench("clean", "--force", "--prefix", str(run_id))
        assert forced.returncode == 0, forced.stderr
        assert busy not in list_namespaces()
        assert stranger.poll() is None, "--force removes the namespace, never the process"
    finally:
        for proc in (sleeper, stranger):
            if proc is not None and proc.poll() is None:
                proc.kill()  # our own child, by PID
                proc.wait()
        for ns in (leftover, busy, other, lookalike):
            delete_namespace(ns)
        run(["ip", "link", "del", root_link], check=False)
        state_file.unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", str(temp_dir)], check=False)


@pytest.mark.timeout(60)
def test_clean_with_nothing_to_do_says_so(root):
    result = vswbench("clean", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
