"""`vswbench trial --profile`: per-core category shares, top functions and folded stacks in the
trial's JSON, and no perf process, perf.data or temp dir left behind, neither after a normal
end nor after Ctrl-C in the middle of the profiled trial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import processes_mentioning
from vswbench.host.perf import perf_problem
from vswbench.host.profile import CATEGORIES

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "vswbench", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{SRC}:{os.environ.get('PYTHONPATH', '')}"}


def _left(run_id: str) -> list[str]:
    left = processes_mentioning(run_id)
    left += [str(p) for p in Path("/tmp").glob(f"vsb-{run_id}*")]
    return left


@pytest.fixture
def perf(root, engine) -> None:
    problem = perf_problem()
    if problem:
        pytest.skip(problem)


def test_trial_profile_leaves_nothing(perf) -> None:
    proc = subprocess.run(_cli("trial", "--switch", "bridge", "--rate", "20k", "--duration",
                               "2", "--warmup", "0.5", "--profile", "--json"),
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_id = next(line.split()[1].rstrip(":") for line in proc.stderr.splitlines()
                  if line.startswith("run vsb"))
    data = json.loads(proc.stdout)
    prof = data["profile"]
    assert prof["event"] == "cpu-clock" and prof["cpus"] == [0, 1]
    for core in prof["cores"].values():
        assert core["samples"] > 100
        assert set(core["categories"]) == set(CATEGORIES)
        assert sum(core["categories"].values()) == pytest.approx(1.0, abs=0.02)
        assert core["top_functions"] and core["folded"]
        assert 0 <= core["busy"] <= 1
    check = prof["cpu_check"]
    assert check["cycles_per_packet_perf"] and check["cycles_per_packet_scheduler"]
    assert not _left(run_id), _left(run_id)


def test_ctrl_c_during_profiled_trial_leaves_nothing(perf) -> None:
    proc = subprocess.Popen(_cli("trial", "--switch", "bridge", "--rate", "10k", "--duration",
                                 "30", "--warmup", "0", "--profile"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=_env())
    try:
        run_id = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not run_id:
            line = proc.stderr.readline()   # type: ignore[union-attr]
            if line.startswith("run vsb"):
                run_id = line.split()[1].rstrip(":")
        assert run_id
        while time.monotonic() < deadline:   # until perf runs
            if any("perf record" in p for p in processes_mentioning(run_id)):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("perf never started")
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert not _left(run_id), _left(run_id)
