"""Piped output is whole (issue 44, part 2): every command of the command table (cli/app.py),
its output sent into a pipe, prints whole lines: no cell cut to 80 columns, no line ending in an
ellipsis. Each runs as a user runs it (`vswbench ... | less`), as a subprocess whose stdout is a
pipe, on fixture stores (tests/report_fixtures.py, tests/history_fixtures.py: FIXTURES, NOT
MEASUREMENTS). Nothing needs root and nothing is measured: the commands that only measure are
listed in MEASURES with why, and the table must be covered by the two (a new command is added to
one of them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.history_fixtures import step_series
from tests.report_fixtures import write_fixture_store
from tests.unit.cli_commands import leaf_commands

ROOT = Path(__file__).resolve().parents[2]
ELLIPSES = ("…", "...")

# Commands that measure (they build a testbed as root, or wait for a controller): run with a pipe
# they would measure on the machine that runs the tests. Their printing goes through the same
# consoles (cli/common.py: out, err), which are checked here through the others.
MEASURES = {
    "clean": "removes network namespaces (root)", "demo": "measures", "trial": "measures",
    "search": "measures", "sweep": "measures", "latency": "measures", "b2b": "measures",
    "calibrate": "measures", "rule-update": "measures", "stream": "measures", "rr": "measures",
    "crr": "measures", "ab": "measures two sides in rounds",
    "agent": "the DUT side: reads its controller's requests on stdin",
    "papers report": "runs a paper's spec (measures)",
}


def _stores(base: Path) -> dict[str, Path]:
    quick = base / "quick"
    full = base / "full"
    write_fixture_store(quick / "results.sqlite", variant="quick")
    write_fixture_store(full / "results.sqlite", variant="full")
    nights = step_series(base / "nights", nights=3)
    history = base / "history.sqlite"
    return {"quick": quick, "full": full, "night0": nights[0], "night1": nights[1],
            "history": history, "base": base}


Case = Callable[[dict[str, Path]], list[list[str]]]

# Each command: the invocations (in order: a history is added before it is listed) that print
# what a user reads. A path is a fixture; nothing is written outside the test's directory.
CASES: dict[str, Case] = {
    "probe": lambda s: [["probe"]],
    "switches": lambda s: [["switches"]],
    "doctor": lambda s: [["doctor"]],
    "run": lambda s: [["run", "--suite", "quick", "--dry-run"],
                      ["run", str(ROOT / "specs" / "quick.toml"), "--dry-run"]],
    "report": lambda s: [["report", str(s["quick"]), "--print", "text"],
                         ["report", str(s["quick"]), "--print", "md"]],
    "show": lambda s: [["show", str(s["quick"])], ["show", str(s["quick"]), "--wide"],
                       ["show", str(s["quick"]), "--format", "md"]],
    "export": lambda s: [["export", str(s["quick"]), "--format", "csv"]],
    "compare": lambda s: [["compare", str(s["quick"]), str(s["full"])],
                          ["compare", str(s["night0"]), str(s["night1"])]],
    "merge": lambda s: [["merge", str(s["quick"]), str(s["night0"]), "--out",
                         str(s["base"] / "merged")]],
    "history add": lambda s: [["history", "add", "--history", str(s["history"]),
                               str(s["night0"]), str(s["night1"])]],
    "history list": lambda s: [["history", "list", "--history", str(s["history"])]],
    "history show": lambda s: [["history", "show", "--history", str(s["history"]), "1"]],
    "trend": lambda s: [["trend", str(s["history"])]],
    "history remove": lambda s: [["history", "remove", "--history", str(s["history"]), "2"]],
    "model fit": lambda s: [["model", "fit", str(s["full"])]],
    "model predict": lambda s: [["model", "predict", "--chain", "2", "--placement", "s_core",
                                 "--results", str(s["full"])]],
    "model delay": lambda s: [["model", "delay", str(s["full"]), "--out",
                               str(s["base"] / "delay")]],
    "papers table": lambda s: [["papers", "table", str(s["full"])]],
}


def test_every_command_of_the_table_is_covered() -> None:
    commands = set(leaf_commands())
    assert set(CASES) | set(MEASURES) == commands, \
        "a command was added or renamed: give it a piped case in CASES, or say in MEASURES why not"
    assert not set(CASES) & set(MEASURES)


# Each command line as `vswbench ARGV | less` runs it: a process of its own whose stdout and stderr
# are pipes. The processes are forked from one that imported the CLI with its own stdout and stderr
# pipes (each import took 2 s of CPU, 25 of them most of this test's time), one after the other.
# Without the VM guest's boots that probe and doctor make (host/doctor.py vm_checks: a KVM and a
# TCG boot, half a minute): unit tests boot no VM (tests/unit/conftest.py no_vm_boots). Their
# answers stand in for a refusal's reason, as long as one (a row wider than 80 columns).
FORKS = """import json, os, sys, threading
import vswbench.host.doctor
why = "no: not booted in unit tests (tests/unit/test_piped_output.py stands in for vm_checks)"
vswbench.host.doctor.vm_checks = lambda: {"VM guest under KVM": why,
                                          "VM guest under TCG (emulated)": why}
from vswbench.cli.app import main


def drain(fd, into):
    with os.fdopen(fd, "rb") as f:
        into.append(f.read())


done = []
for argv in json.loads(sys.stdin.read()):
    sys.stdout.flush()
    sys.stderr.flush()
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        sys.argv = ["vswbench", *argv]
        sys.exit(main(argv))
    os.close(out_w)
    os.close(err_w)
    out, err = [], []
    readers = [threading.Thread(target=drain, args=(out_r, out)),
               threading.Thread(target=drain, args=(err_r, err))]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    done.append([argv, status, out[0].decode(), err[0].decode()])
sys.stdout.write(json.dumps(done))
"""


def _piped_all(argvs: list[list[str]],
               cwd: Path) -> list[tuple[list[str], subprocess.CompletedProcess[str]]]:
    """Each command line run in order, as described above, with what it printed and its exit
    status."""
    env = {**os.environ, "COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}
    env.pop("VSB_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", FORKS], cwd=cwd, env=env,
                          input=json.dumps(argvs), capture_output=True, text=True, timeout=480)
    assert done.returncode == 0, done.stderr
    return [(argv, subprocess.CompletedProcess(argv, code, out, err))
            for argv, code, out, err in json.loads(done.stdout)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[tuple[list[str], subprocess.CompletedProcess[str]]]:
    base = tmp_path_factory.mktemp("piped")
    stores = _stores(base)
    ordered = [argv for name in ("history add", "history list", "history show", "trend",
                                 "history remove") for argv in CASES[name](stores)]
    rest = [argv for name, case in CASES.items() if not name.startswith(("history", "trend"))
            for argv in case(stores)]
    runs = _piped_all([*ordered, *rest], base)     # in order: one history file
    assert [argv for argv, _ in runs] == [*ordered, *rest]
    return runs


def test_piped_output_has_whole_lines(runs) -> None:
    cut = []
    for argv, done in runs:
        assert "Traceback" not in done.stderr, (argv, done.stderr)
        assert done.returncode in (0, 1, 2, 3), (argv, done.returncode, done.stderr)
        for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
            cut += [f"vswbench {' '.join(argv)} ({stream}): {line!r}"
                    for line in text.splitlines() if line.rstrip().endswith(ELLIPSES)]
    assert not cut, "\n".join(cut)


def test_a_wide_table_is_not_cut_to_80_columns(runs) -> None:
    """The terminal says 80 columns (COLUMNS=80) but stdout is a pipe: the tables keep their
    natural width (the ranking and compare's rows are wider than 80), nothing folded."""
    widths = {argv[0]: max((len(line) for line in done.stdout.splitlines()), default=0)
              for argv, done in runs if done.returncode == 0}
    assert widths["report"] > 80 and widths["compare"] > 80, widths
    shown = [done.stdout for argv, done in runs if argv[0] == "show" and len(argv) == 2]
    assert shown and max(len(line) for line in shown[0].splitlines()) <= 80   # fitted to 80
