"""`vswbench clean` against planted state and decoy names (issue 30: S4, D5, TMPDIR, damaged and
untrusted state files). Each test keeps its state files in a private VSWBENCH_STATE_DIR and
narrows every removal to its own run ids (--prefix), so other sessions' objects are never at risk;
the decoys are removed in teardown."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.run.ids import new_run_id
from vswbench.run.procs import RecordedProcess
from vswbench.run.procs import identify
from vswbench.run.state import RunState
from vswbench.run.state import process_start_time
from vswbench.run.statefile import ensure_state_dir

DPDK_RUN = Path("/var/run/dpdk")


@pytest.fixture
def private_state(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "state"
    monkeypatch.setenv("VSWBENCH_STATE_DIR", str(directory))
    return ensure_state_dir(directory)


def vswbench(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**(os.environ if env is None else env), "COLUMNS": "1000"}  # paths on one line
    return subprocess.run([sys.executable, "-m", "vswbench", *argv], capture_output=True,
                          text=True, timeout=120, env=env)


def dead_run(run_id: str, processes: list[RecordedProcess] = (),
             temp_dirs: list[str] = ()) -> RunState:
    """A trusted state file as a killed run leaves it (its owner, this PID with another start
    time, is gone): what a local attacker could plant before the state directory was private."""
    state = RunState(run_id, os.getpid(), (process_start_time(os.getpid()) or 0) + 1, time.time(),
                     list(temp_dirs), list(processes))
    state.path = Path(os.environ["VSWBENCH_STATE_DIR"]) / f"{run_id}.json"
    state.save()
    return state


def sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])


def wait_for(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def links() -> str:
    return run(["ip", "-br", "link", "show"])


@pytest.mark.timeout(120)
def test_decoys_named_like_a_run_survive_clean(root, private_state):
    """D5: namespaces vsbcafebabe and vsb12abnotmine, veths vsbbeefeth0/1, /tmp/vsb-vsbcafe-mydata
    with a user's notes.txt, /var/run/dpdk/vsbdpdk1-notmine survive; a real leftover of the same
    run ids beside them is removed."""
    decoy_ns = ["vsbcafebabe", "vsb12abnotmine"]
    real_ns = ["vsbcafetester", "vsb12absink"]
    mydata = Path("/tmp/vsb-vsbcafe-mydata")
    dpdk_decoy, dpdk_real = DPDK_RUN / "vsbdpdk1-notmine", DPDK_RUN / "vsbdpdk999999"
    taken = [n for n in decoy_ns + real_ns if namespace_exists(n)]
    taken += [n for n in ("vsbbeefeth0", "vsbbeefw1") if n in links()]
    taken += [str(p) for p in (mydata, dpdk_decoy, dpdk_real) if p.exists()]
    if taken:
        pytest.skip(f"already on this host: {taken}")
    real_tmp = None
    made_dpdk_run = not DPDK_RUN.exists()
    try:
        for ns in decoy_ns + real_ns:
            run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", "vsbbeefeth0", "type", "veth", "peer", "name", "vsbbeefeth1"])
        run(["ip", "link", "add", "vsbbeefw1", "type", "veth", "peer", "name", "vsbbeefw2"])
        mydata.mkdir()
        (mydata / "notes.txt").write_text("my notes\n")
        real_tmp = Path(tempfile.mkdtemp(prefix="vsb-vsbcafe-", dir="/tmp"))
        for path in (dpdk_decoy, dpdk_real):
            path.mkdir(parents=True)
            (path / "config").write_text("")

        preview = vswbench("clean", "--dry-run")
        assert preview.returncode == 0, preview.stderr
        for name in ["vsbcafebabe", "vsb12abnotmine", "vsbbeefeth0", "vsbbeefeth1",
                     "vsbdpdk1-notmine"]:
            assert name not in preview.stdout, preview.stdout
            assert f"left {name} alone" in preview.stderr
        assert str(mydata) not in preview.stdout
        assert "would remove namespace vsbcafetester" in preview.stdout
        assert f"would remove directory {real_tmp}" in preview.stdout
        assert f"would remove DPDK leftover {dpdk_real}" in preview.stdout

        for prefix in ("vsbcafe", "vsb12ab", "vsbbeef", "vsbdpdk1-", "vsbdpdk999999"):
            result = vswbench("clean", "--prefix", prefix)
            assert result.returncode == 0, result.stderr
            assert "Traceback" not in result.stderr
        assert set(decoy_ns) <= set(list_namespaces())
        assert not set(real_ns) & set(list_namespaces())
        assert "vsbbeefeth0" in links() and "vsbbeefeth1" in links()
        assert "vsbbeefw1" not in links()
        assert (mydata / "notes.txt").read_text() == "my notes\n"
        assert not real_tmp.exists()
        assert (dpdk_decoy / "config").exists() and not dpdk_real.exists()
    finally:
        remove_what_it_made(decoy_ns + real_ns, [mydata, real_tmp, dpdk_decoy, dpdk_real],
                            made_dpdk_run)


def remove_what_it_made(namespaces: list[str], paths: list[Path | None],
                        made_dpdk_run: bool) -> None:
    """The decoy test's namespaces, veths and directories gone, whatever clean left."""
    for ns in namespaces:
        if namespace_exists(ns):
            run(["ip", "netns", "delete", ns], check=False)
    for link in ("vsbbeefeth0", "vsbbeefw1"):
        run(["ip", "link", "del", link], check=False)
    for path in paths:
        if path is not None:
            subprocess.run(["rm", "-rf", "--", str(path)], check=False)
    if made_dpdk_run and DPDK_RUN.is_dir() and not any(DPDK_RUN.iterdir()):
        DPDK_RUN.rmdir()


@pytest.mark.timeout(120)
def test_a_stranger_named_in_a_state_file_is_not_signalled(root, private_state):
    """S4: a live process not started by vswbench, recorded with start_time null (as vswbench
    itself writes for a child that has already exited) or under another executable, is left
    running, and clean says so; the recorded process that matches in full is stopped."""
    run_id = str(new_run_id())
    stranger, impostor, ours = sleeper(), sleeper(), sleeper()
    try:
        exe = os.path.realpath(sys.executable)
        dead_run(run_id, [
            RecordedProcess(stranger.pid, None, ["vswbench-engine", "sink"], exe=exe),
            RecordedProcess(impostor.pid, process_start_time(impostor.pid),
                            ["vswbench-engine", "sink"], exe="/usr/local/bin/vswbench-engine"),
            RecordedProcess.of(ours.pid, ours.args)])
        result = vswbench("clean", "--prefix", run_id)
        assert result.returncode == 0, result.stderr
        assert ours.wait(timeout=30) != 0, "the process recorded in full is ours to stop"
        assert stranger.poll() is None, "a process with no recorded start time was signalled"
        assert impostor.poll() is None, "a process with another executable was signalled"
        assert f"left process {stranger.pid} of run {run_id}" in result.stderr
        assert "no start time was recorded" in result.stderr
        assert "not /usr/local/bin/vswbench-engine as recorded" in result.stderr
    finally:
        for proc in (stranger, impostor, ours):
            if proc.poll() is None:
                proc.kill()  # our own child, by PID
                proc.wait()


CHILD = """
import sys, time
from vswbench.run.scope import run_scope
with run_scope() as run:
    print(run.id, run.temp_dir(), flush=True)
    time.sleep(300)
"""


@pytest.mark.timeout(120)
def test_a_temp_dir_under_tmpdir_is_found_after_kill_9(root, private_state, tmp_path):
    """TMPDIR=X, kill -9, then clean (without that TMPDIR): X/vsb-<run id>-... is removed through
    the state file; X/vsb-<run id>-mydata of a user, named like it but not made by the run, stays."""
    elsewhere = tmp_path / "x"
    elsewhere.mkdir()
    env = {**os.environ, "TMPDIR": str(elsewhere)}
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        run_id, made = child.stdout.readline().split()
        child.kill()                 # SIGKILL: no cleanup of its own
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    made = Path(made)
    assert made.parent == elsewhere and made.is_dir()
    user_dir = elsewhere / f"vsb-{run_id}-mydata"
    user_dir.mkdir()
    (user_dir / "notes.txt").write_text("mine")
    env.pop("TMPDIR")
    result = vswbench("clean", "--prefix", run_id, env=env)
    assert result.returncode == 0, result.stderr
    assert f"removed directory {made}" in result.stdout
    assert not made.exists()
    assert (user_dir / "notes.txt").exists()
    assert not (private_state / f"{run_id}.json").exists()


DAMAGED = ("5", "null", '"x"', "{not json", '{"run_id": 5}',
           '{"run_id": "vsb%s", "owner_pid": "1", "owner_start_time": 1, "created": 1}')


@pytest.mark.timeout(120)
def test_a_damaged_state_file_is_reported_and_skipped(root, private_state):
    """"This is a bug" (rc 1) for a state file holding 5, null, "x": now reported, skipped, and
    neither `clean --dry-run`, `clean` nor a run is blocked. The damaged files lie side by side,
    one a run id: one dry run reports each, each run's `clean --prefix` its own, one trial runs."""
    paths: dict[str, tuple[Path, str]] = {}
    while len(paths) < len(DAMAGED):
        run_id = str(new_run_id())
        if run_id not in paths:
            content = DAMAGED[len(paths)]
            paths[run_id] = (private_state / f"{run_id}.json", content)
            paths[run_id][0].write_text(content.replace("vsb%s", run_id))
            paths[run_id][0].chmod(0o600)
    dry = vswbench("clean", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "bug" not in dry.stderr
    for run_id, (path, content) in paths.items():
        assert f"skipped state file {path}: damaged" in dry.stderr, (content, dry.stderr)
        result = vswbench("clean", "--prefix", run_id)
        assert result.returncode == 0, (content, result.stderr)
        assert f"skipped state file {path}: damaged" in result.stderr, (content, result.stderr)
        assert "bug" not in result.stderr, content
        assert path.exists(), f"a damaged file ({content}) is reported, not removed"
    trial = vswbench("trial", "--switch", "veth", "--rate", "1k", "--duration", "0.2",
                     "--warmup", "0")
    assert trial.returncode == 0, trial.stderr


@pytest.mark.timeout(120)
def test_a_state_directory_others_can_write_is_not_trusted(root, private_state, run_id):
    """A 0777 state directory (as made under umask 000 before): its files are not read, so a
    planted file naming a live process matched in full still gets it no signal, and a run
    refuses to use the directory (exit 2, before any namespace) saying how to fix it."""
    victim = sleeper()
    try:
        dead_run(str(run_id), [RecordedProcess.of(victim.pid, victim.args)])
        private_state.chmod(0o777)
        result = vswbench("clean", "--prefix", str(run_id))
        assert result.returncode == 0, result.stderr
        assert "not trusted" in result.stderr and "chmod 700" in result.stderr
        assert victim.poll() is None and identify(RecordedProcess.of(victim.pid, [])).alive
        before = set(list_namespaces())
        trial = vswbench("trial", "--switch", "veth", "--rate", "1k", "--duration", "0.2",
                         "--warmup", "0")
        assert trial.returncode == 2, trial.stderr
        assert "state directory" in trial.stderr and "writable by" in trial.stderr
        assert len(trial.stderr.strip().splitlines()) == 1
        assert not {n for n in set(list_namespaces()) - before if n.startswith("vsb")}
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
