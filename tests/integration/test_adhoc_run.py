"""`vswbench run --switches bridge,xdp --sizes 64` (issue 44, part 5): an ad-hoc campaign of two
kernel switches at one size, with the quick suite's methodology (its budget scaled down to two
switches and one size), ends in the first screen (the verdict naming both, one row per switch,
no line wider than the 80 columns it was drawn for) and a report; nothing it made is left.
Needs root (builds testbeds); about a minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.results.store import ResultStore

VSWBENCH = Path(sys.executable).parent / "vswbench"


@pytest.mark.timeout(400)
def test_switches_and_sizes_run_quick_and_end_in_a_first_screen(root, engine, tmp_path) -> None:
    out = tmp_path / "adhoc"
    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run([str(VSWBENCH), "run", "--switches", "bridge,xdp", "--sizes", "64",
                           "--out", str(out)], capture_output=True, text=True, timeout=380,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("64 B, kernel switches"))
    end = next(i for i, line in enumerate(lines) if line.startswith("report: "))
    screen = "\n".join(lines[title:end])
    print(screen)
    wide = [line for line in lines[:end] if len(line) > 80]     # the paths after it: as long
    assert not wide, wide                                       # as they are
    for name in ("bridge", "xdp"):
        assert any(line.split()[1:2] == [name] for line in lines[title:]), screen
    verdict = " ".join(lines[title + 1:title + 3])
    assert "bridge" in verdict and "xdp" in verdict, screen
    assert (out / "report.html").is_file()
    assert f"report: {out / 'report.html'}" in proc.stdout
    with ResultStore(out / "results.sqlite", create=False) as store:
        (run,) = store.runs()
        kinds = {(p.params["switch"], p.kind) for p in store.points() if p.status == "done"}
    assert run.status == "done"
    assert {("bridge", "search"), ("xdp", "search"), ("bridge", "rounds"),
            ("xdp", "rounds")} <= kinds
    assert not [ns for ns in list_namespaces() if ns.startswith(run.run_id)]


def test_an_unknown_switch_gets_the_choices_and_exit_2(tmp_path) -> None:
    out = tmp_path / "never"
    proc = subprocess.run([str(VSWBENCH), "run", "--switches", "bridge,xpd", "--sizes", "64",
                           "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--switches: unknown switch 'xpd' (did you mean 'xdp'?): choose from" in proc.stderr
    assert not out.exists()
