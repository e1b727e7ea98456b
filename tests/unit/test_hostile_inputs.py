"""Issue 47, finding 1: every file vswbench reads goes through one bounded reader (saferead): a
regular file only, at most its kind's cap, opened without blocking. Every option and argument
that takes an input file is walked with /dev/zero, a FIFO with no writer, /dev/urandom and a
2 GB sparse file: each is refused with exit 2 within 5 s (a SIGALRM here, `timeout 5` for the
child-process cases), naming the file, with no traceback. On 4df8ce3 `--inventory /dev/zero`
read until the OOM killer came and `--inventory FIFO` waited for ever."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from vswbench.cli import app as cli
from vswbench.errors import UsageError

try:
    from vswbench import saferead
except ImportError:          # 4df8ce3, where the matrix above is to fail, not to be skipped
    saferead = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
SPEC = ('[campaign]\nname = "t"\n[[study]]\nkind = "search"\nswitch = "veth"\n'
        'size = [64]\n')
KINDS = ("zero", "fifo", "urandom", "sparse")
SPARSE = 2 << 30
MEMORY_CAP = 6 << 30         # this process's address space while a case runs


def hostile(kind: str, where: Path) -> Path:
    """/dev/zero, /dev/urandom, a FIFO or a 2 GB sparse file, at `where` when it must be there
    (a device is made there with mknod as root, else the test is skipped)."""
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "sparse":
        with open(where, "wb") as f:
            f.truncate(SPARSE)
    else:
        dev = os.stat(f"/dev/{kind}").st_rdev
        if os.geteuid() != 0:
            pytest.skip("a device node in a results directory needs root (mknod)")
        os.mknod(where, 0o600 | stat.S_IFCHR, dev)
    return where


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """A TimeoutError if the block takes longer (a read of /dev/zero or a FIFO's open are
    interrupted by the signal), and a MemoryError rather than the OOM killer if it reads
    without limit (a regression must not take this shared machine's memory)."""
    def fire(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, fire)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = MEMORY_CAP if hard == resource.RLIM_INFINITY else min(MEMORY_CAP, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, old)


def spec_file(tmp: Path, extra: str = "") -> Path:
    path = tmp / "tiny.toml"
    path.write_text(SPEC + extra)
    return path


def direct(kind: str, tmp: Path) -> Path:
    """The hostile file as a path given on the command line (devices: the real ones)."""
    return Path(f"/dev/{kind}") if kind in ("zero", "urandom") else hostile(kind, tmp / kind)


def store_dir(kind: str, tmp: Path) -> Path:
    """A results directory whose results.sqlite is the hostile file."""
    d = tmp / "res"
    d.mkdir()
    hostile(kind, d / "results.sqlite")
    return d


# Every option or argument that takes an input file: (name, argv maker). The maker gets the
# hostile kind and a temp directory; it returns the argv and the path the error must name.
Case = Callable[[str, Path], tuple[list[str], Path]]


def _spec_arg(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["run", str(f), "--dry-run"], f


def _inventory(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["run", str(spec_file(t)), "--inventory", str(f), "--dry-run"], f


def _history_opt(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["run", str(spec_file(t)), "--history", str(f), "--dry-run"], f


def _switch_file(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["switches", "--switch-file", str(f), "--json"], f


def _trial_switch_file(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["trial", "--switch-file", str(f), "--switch", "veth", "--rate", "0"], f


def _ab_switch_file(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)       # side B's missing file is refused next: nothing is ever measured
    return ["ab", "--a-switch-file", str(f), "--b-switch-file", str(t / "none.toml")], f


def _spec_switch_path(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    spec = t / "own.toml"
    spec.write_text(SPEC.replace('switch = "veth"', 'switch = "mine"')
                    + f'[switch]\nmine = "{f}"\n')
    return ["run", str(spec), "--dry-run"], f


def _trend(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["trend", str(f)], f


def _model(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["model", "predict", "--model", str(f), "--chain", "2", "--placement", "default"], f


def _merge(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["merge", str(f), "-o", str(t / "merged")], f


def _report_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    return ["report", str(d), "--print", "text"], d / "results.sqlite"


def _export_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    return ["export", str(d), "--to", str(t / "x.csv")], d / "results.sqlite"


def _compare_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    (t / "other").mkdir()
    return ["compare", str(d), str(d)], d / "results.sqlite"


def _papers_readme(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["papers", "table", str(t), "--readme", str(f)], f


def _history_add(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    from tests.report_fixtures import write_fixture_store

    write_fixture_store(t / "res" / "results.sqlite", "quick")
    return ["history", "add", str(t / "res"), "--history", str(f)], f


def _history_list(k: str, t: Path) -> tuple[list[str], Path]:
    f = direct(k, t)
    return ["history", "list", "--history", str(f)], f


def _history_add_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    return ["history", "add", str(d), "--history", str(t / "h.sqlite")], d / "results.sqlite"


def _model_fit_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    return ["model", "fit", str(d)], d / "results.sqlite"


def _model_delay_store(k: str, t: Path) -> tuple[list[str], Path]:
    d = store_dir(k, t)
    return ["model", "delay", str(d), "--out", str(t / "models")], d / "results.sqlite"


CASES: dict[str, Case] = {
    "run SPEC": _spec_arg, "run --inventory": _inventory, "run --history": _history_opt,
    "switches --switch-file": _switch_file, "trial --switch-file": _trial_switch_file,
    "ab --a-switch-file": _ab_switch_file, "spec switch.NAME = PATH": _spec_switch_path,
    "trend HISTORY_FILE": _trend, "model predict --model": _model, "merge STORES": _merge,
    "report DIR (its store)": _report_store, "export DIR (its store)": _export_store,
    "compare RUNS (a store)": _compare_store, "papers --readme": _papers_readme,
    "history add --history": _history_add, "history list --history": _history_list,
    "history add DIRS (a store)": _history_add_store, "model fit RESULTS_DIR": _model_fit_store,
    "model delay RESULTS_DIR": _model_delay_store,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_input_file_option_refuses_hostile_files(case: str, kind: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    argv, named = CASES[case](kind, tmp_path)
    start = time.monotonic()
    with deadline(5):
        status = cli.main(argv)
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert status == 2, f"{argv}: exit {status}\n{err}"
    assert str(named) in err or named.name in err, err
    assert "Traceback" not in err
    assert took < 5


@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_inventory_device_and_fifo_exit_2_under_timeout_5(kind: str, tmp_path: Path) -> None:
    """The probe's own command line in a child process under `timeout` (on 4df8ce3 it was
    killed by the OOM killer after 107 s for /dev/zero, and hung on the FIFO). The limit is 5 s
    beyond what the interpreter takes to start and print its version on this machine now
    (another job may be loading it), so that the refusal itself has its 5 s."""
    f = direct(kind, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = [sys.executable, "-m", "vswbench"]
    start = time.monotonic()
    subprocess.run([*child, "--version"], capture_output=True, env=env, timeout=60, check=True)
    limit = 5 + int(time.monotonic() - start + 1)
    done = subprocess.run(["timeout", str(limit), *child, "run", str(spec_file(tmp_path)),
                           "--inventory", str(f), "--dry-run"],
                          capture_output=True, text=True, env=env, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (MEMORY_CAP, MEMORY_CAP)))
    assert done.returncode == 2, done.stderr
    assert f"--inventory {f}" in done.stderr and "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


# -- the reader itself ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_the_reader_refuses_each_hostile_kind_at_once(kind: str, tmp_path: Path) -> None:
    f = direct(kind, tmp_path)
    with deadline(5), pytest.raises(UsageError) as e:
        saferead.read_text(f, "inventory", "--inventory")
    message = str(e.value)
    assert f"--inventory {f}" in message
    assert ("2,147,483,648 bytes, larger than" in message if kind == "sparse"
            else "not a regular file" in message)


def test_the_reader_names_directories_sockets_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="a directory where a file is meant"):
        saferead.read_text(tmp_path, "JSON")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    try:
        with pytest.raises(UsageError, match="a socket, not a regular file"):
            saferead.check_input(tmp_path / "s", "store")
    finally:
        sock.close()
    with pytest.raises(UsageError, match="no such file"):
        saferead.read_bytes(tmp_path / "nothing", "switch file", "--switch-file")


def test_the_reader_reads_regular_files_within_the_cap(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("héllo\n")
    assert saferead.read_text(f, "JSON") == "héllo\n"
    f.write_bytes(b"x" * 11)
    with pytest.raises(UsageError, match="larger than 10"):
        saferead.read_bytes(f, "JSON", cap=10)
    f.write_bytes(b"\xff")
    with pytest.raises(UsageError, match="not UTF-8"):
        saferead.read_text(f, "JSON")
