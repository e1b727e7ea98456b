"""Run state files trust nothing they read (issue 30, S4 and "This is a bug" on state files)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.run import procs
from vswbench.run.procs import RecordedProcess
from vswbench.run.procs import identify
from vswbench.run.procs import signal_if_same
from vswbench.run.scope import run_scope
from vswbench.run.state import RunState
from vswbench.run.state import StateDirError
from vswbench.run.state import read_states

DAMAGED = ["5", "null", '"x"', "{", "[]", "\xff", "{}",
           '{"run_id": "vsb0001", "owner_pid": "1", "owner_start_time": 1, "created": 1}',
           '{"run_id": "vsb0001", "owner_pid": 1, "owner_start_time": null, "created": 1,'
           ' "processes": [5]}',
           '{"run_id": "vsb0001", "owner_pid": 1, "owner_start_time": null, "created": 1,'
           ' "processes": [{"pid": true, "start_time": 1, "argv": []}]}',
           '{"run_id": "vsb0001", "owner_pid": 1, "owner_start_time": null, "created": 1,'
           ' "processes": [{"pid": 7, "start_time": 1, "argv": "x"}]}',
           '{"run_id": "vsb0001", "owner_pid": 1, "owner_start_time": null, "created": 1,'
           ' "temp_dirs": ["relative"]}',
           '{"run_id": "vsb0002", "owner_pid": 1, "owner_start_time": null, "created": 1}',
           '{"run_id": "vsb0001", "owner_pid": 1, "owner_start_time": null, "created": NaN}',
           "[" * 100000]


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    directory = tmp_path / "state"
    monkeypatch.setenv("VSWBENCH_STATE_DIR", str(directory))
    return directory


def good_state(directory: Path, run_id: str = "vsb0003") -> Path:
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{run_id}.json"
    path.write_text(json.dumps({"run_id": run_id, "owner_pid": 1, "owner_start_time": None,
                                "created": 1.5, "temp_dirs": [], "processes": []}))
    path.chmod(0o600)
    return path


def test_created_private_whatever_the_umask(state_dir):
    old = os.umask(0)
    try:
        state = RunState.create("vsb0a0a")
        state.add_process(os.getpid(), ["python"])
    finally:
        os.umask(old)
    assert state_dir.stat().st_mode & 0o777 == 0o700
    assert state.path.stat().st_mode & 0o777 == 0o600
    assert state.path.stat().st_uid == os.geteuid()
    assert [p.name for p in state_dir.iterdir()] == ["vsb0a0a.json"], "no temp file left"
    loaded = RunState.load(state.path)
    assert loaded.processes[0].exe == os.path.realpath(sys.executable)
    state.remove()


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_directory_others_can_write_is_refused(state_dir, mode):
    state_dir.mkdir()
    state_dir.chmod(mode)
    good_state_path = state_dir / "vsb0003.json"
    good_state_path.write_text("{}")
    with pytest.raises(StateDirError, match=r"writable by .*chmod 700"):
        RunState.create("vsb0b0b")
    states, problems = read_states()
    assert states == [] and "not trusted" in problems[0]
    # run_scope refuses too (exit 2), nothing half-made
    with pytest.raises(StateDirError), run_scope():
        pass


def test_a_directory_of_another_owner_is_refused(state_dir):
    if os.geteuid() != 0:
        pytest.skip("needs root to chown")
    state_dir.mkdir(mode=0o700)
    os.chown(state_dir, 65534, 65534)
    with pytest.raises(StateDirError, match="owned by uid 65534"):
        RunState.create("vsb0b0b")
    assert "owned by uid 65534" in read_states()[1][0]


def test_a_link_as_the_directory_is_refused(state_dir, tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    state_dir.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StateDirError, match="symbolic link"):
        RunState.create("vsb0b0b")


@pytest.mark.parametrize("text", DAMAGED)
def test_a_damaged_state_file_is_reported_and_skipped(state_dir, text):
    good = good_state(state_dir)
    bad = state_dir / "vsb0001.json"
    bad.write_text(text, errors="surrogateescape") if text != "\xff" else bad.write_bytes(b"\xff")
    bad.chmod(0o600)
    states, problems = read_states()
    assert [s.path for s in states] == [good]
    assert len(problems) == 1 and problems[0].startswith(f"skipped state file {bad}: damaged")
    with run_scope() as run:   # never blocks another run
        assert run.state is not None and run.state.path.exists()


def test_untrusted_state_files_are_skipped(state_dir, tmp_path):
    good_state(state_dir)
    writable = good_state(state_dir, "vsb0004")
    writable.chmod(0o666)
    target = good_state(tmp_path, "vsb0005")
    (state_dir / "vsb0006.json").symlink_to(target)
    problems = read_states()[1]
    assert any(str(writable) in p and "writable by group and others" in p for p in problems)
    assert any("vsb0006.json" in p and "symbolic link" in p for p in problems)
    assert [s.run_id for s in read_states()[0]] == ["vsb0003"]


def fake_proc(root: Path, pid: int, start: int | None, exe: str) -> Path:
    d = root / str(pid)
    d.mkdir(parents=True)
    fields = ["S"] + ["0"] * 18 + [str(start)] + ["0"] * 5
    (d / "stat").write_text(f"{pid} (my (odd) name) {' '.join(fields)}\n")
    (d / "exe").symlink_to(exe)
    return root


def test_identify_needs_pid_start_time_and_executable(tmp_path):
    proc = fake_proc(tmp_path, 4242, 777, "/usr/bin/vswbench-engine")
    same = RecordedProcess(4242, 777, ["vswbench-engine"], exe="/usr/bin/vswbench-engine")
    assert identify(same, proc).same
    no_start = RecordedProcess(4242, None, ["vswbench-engine"], exe="/usr/bin/vswbench-engine")
    found = identify(no_start, proc)
    assert not found.same and found.alive and "no start time was recorded" in found.reason
    other_start = RecordedProcess(4242, 778, ["x"], exe="/usr/bin/vswbench-engine")
    assert "another process" in identify(other_start, proc).reason
    other_exe = RecordedProcess(4242, 777, ["x"], exe="/usr/sbin/sshd")
    assert "runs /usr/bin/vswbench-engine, not /usr/sbin/sshd" in identify(other_exe, proc).reason
    no_exe = RecordedProcess(4242, 777, ["x"])
    assert not identify(no_exe, proc).same
    gone = RecordedProcess(4343, 777, ["x"], exe="/usr/bin/vswbench-engine")
    assert identify(gone, proc) == procs.Identity(False, False, "no longer running")


def test_a_wrapper_is_recognised_once_it_has_become_its_program(tmp_path):
    """`ip netns exec NS PROG` is recorded while it may still be `ip`; later the same PID runs
    PROG: both are the recorded process."""
    argv = ["ip", "netns", "exec", "vsb1a2bsw", sys.executable, "-c", "pass"]
    rec = RecordedProcess(99, 5, argv, exe="/usr/sbin/ip", exec_target=procs.exec_target(argv))
    assert rec.exec_target == os.path.realpath(sys.executable)
    assert identify(rec, fake_proc(tmp_path / "a", 99, 5, "/usr/sbin/ip")).same
    assert identify(rec, fake_proc(tmp_path / "b", 99, 5, rec.exec_target)).same
    assert not identify(rec, fake_proc(tmp_path / "c", 99, 5, "/usr/bin/bash")).same


def test_a_stranger_with_no_recorded_start_time_is_not_signalled():
    """S4 at the lowest level: a live process, recorded with start_time null, gets no signal."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        rec = RecordedProcess(sleeper.pid, None, ["sleep"], exe=os.path.realpath(sys.executable))
        found = signal_if_same(rec, signal.SIGTERM)
        assert not found.same and found.alive
        assert sleeper.poll() is None
        full = RecordedProcess.of(sleeper.pid, ["sleep"])
        assert signal_if_same(full, signal.SIGTERM).same
        assert sleeper.wait(timeout=30) == -signal.SIGTERM
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
