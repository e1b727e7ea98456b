"""The README's main job, end to end: `vswbench demo`, and its cleanup on Ctrl-C."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.run.state import state_dir

DEMO_NAMESPACE = re.compile(r"^vsb[0-9a-f]{4}[ab]$")  # a run's namespaces: <run id>a, <run id>b


def vsb_namespaces() -> set[str]:
    return {ns for ns in list_namespaces() if DEMO_NAMESPACE.match(ns)}


@pytest.mark.timeout(300)
def test_demo_writes_results_and_leaves_nothing(root, engine, probe_result, tmp_path):
    results = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "vswbench", "demo", "--duration", "1",
                           "--rtt-duration", "0.5", "--results-dir", str(results)],
                          capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    json_files = list(results.glob("demo-*.json"))
    html_files = list(results.glob("demo-*.html"))
    assert len(json_files) == 1 and len(html_files) == 1
    report = json.loads(json_files[0].read_text())
    usable = [b for b in probe_result.usable() if b in ("afpacket", "udp", "afxdp")]
    assert [r["backend"] for r in report["results"]] == usable
    for r in report["results"]:
        assert r["tx_kpps"] > 0 and r["rx_kpps"] > 0, r["backend"]
        assert 0 < r["rtt_p50_us"] <= r["rtt_p99_us"], r["backend"]
    run_id = report["run_id"]
    assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
    assert not (state_dir() / f"{run_id}.json").exists()


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130), (signal.SIGTERM, 130)])
@pytest.mark.timeout(120)
def test_demo_interrupted_removes_everything(root, engine, sig, status):
    before = vsb_namespaces()
    proc = subprocess.Popen([sys.executable, "-m", "vswbench", "demo", "--duration", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        created: set[str] = set()
        while len(created) < 2 and time.monotonic() < deadline and proc.poll() is None:
            created = vsb_namespaces() - before
            time.sleep(0.02)
        assert len(created) >= 2, "the demo did not create its namespaces"
        time.sleep(0.5)  # let it get into a measurement with engines running
        proc.send_signal(sig)  # our own child, by PID
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    assert "Traceback" not in err
    assert not (vsb_namespaces() & created), f"namespaces left behind after {sig.name}"
    run_id = next(iter(created))[:7]
    assert not (state_dir() / f"{run_id}.json").exists()
