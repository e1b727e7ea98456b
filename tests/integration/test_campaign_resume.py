"""`vswbench run`: every point is stored the moment it ends; a run killed midway and run again
finishes without redoing or losing any point; a switch that cannot run is recorded as skipped."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.results.store import ResultStore

VSWBENCH = Path(sys.executable).parent / "vswbench"
SPEC = """
[campaign]
name = "vsbtest-resume"

[[study]]
kind = "trial"
switch = "veth"
scenario = "p2p"
rate = ["10k", "20k", "30k", "40k"]
duration = 0.5
"""


def done_points(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("select count(*) from points where status='done'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.timeout(300)
def test_killed_run_resumes_without_redoing_or_losing_points(root, engine, tmp_path):
    spec = tmp_path / "resume.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    db = out / "results.sqlite"
    argv = [str(VSWBENCH), "run", str(spec), "--out", str(out), "--no-report"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while done_points(db) < 2:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no points stored in time"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)   # by our own child's PID
        proc.wait()
    with ResultStore(db, create=False) as store:
        first = {p.key: p for p in store.points() if p.status == "done"}
        run_id = store.runs()[0].run_id
    assert 2 <= len(first) < 4
    clean = subprocess.run([str(VSWBENCH), "clean", "--prefix", run_id], capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    again = subprocess.run(argv, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{len(first)} already done" in again.stdout
    with ResultStore(db, create=False) as store:
        points = {p.key: p for p in store.points()}
        runs = store.runs()
    assert len(points) == 4 and all(p.status == "done" for p in points.values())
    for key, before in first.items():        # not redone: same run, same timestamps
        assert points[key].run_id == before.run_id and points[key].finished == before.finished
    assert len(runs) == 2 and runs[-1].status == "done"
    assert not [ns for ns in list_namespaces() if ns.startswith(runs[-1].run_id)]


@pytest.mark.timeout(120)
def test_unavailable_switch_is_recorded_as_skipped(root, engine, tmp_path, monkeypatch):
    from vswbench.campaign.runner import CampaignRunner
    from vswbench.campaign.spec import parse_spec
    from vswbench.switches.base import Availability
    from vswbench.switches.catalog import all_switches

    veth = all_switches()["veth"]
    monkeypatch.setattr(veth, "availability", classmethod(
        lambda cls: Availability(False, "veth missing in this test", "none")))
    spec = parse_spec(SPEC.replace('rate = ["10k", "20k", "30k", "40k"]', 'rate = "10k"'))
    summary = CampaignRunner(spec, tmp_path).run()
    assert (summary.done, summary.skipped) == (0, 1)
    with ResultStore(summary.store, create=False) as store:
        (point,) = store.points()
    assert point.status == "skipped" and "veth missing" in (point.error or "")
