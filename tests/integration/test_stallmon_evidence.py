"""What the stall monitor takes as a CPU that did not run (engine/README.md, Stall monitor).

- `steal`: where the kernel accounts the hypervisor's steal clock per run queue
  (CONFIG_PARAVIRT_TIME_ACCOUNTING, reached through CONFIG_FAIR_GROUP_SCHED), the programs read
  it at every context switch and heartbeat: a busy CPU gives readings.
- `vcpu`: the heartbeat skips whole periods on a CPU that switches tasks all the time; a gap with
  a context switch or a NAPI poll inside is not a stopped CPU.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vswbench.engine.stalls import STALL_PERIOD_US
from vswbench.engine.stalls import StallMonitor

CPU = 1
SPIN = ("import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); print('ready', flush=True)\n"
        "while True: pass")


def kernel_config(name: str) -> bool | None:
    """Whether the running kernel was built with `name` (None: /proc/config.gz not readable)."""
    try:
        text = gzip.decompress(Path("/proc/config.gz").read_bytes()).decode()
    except OSError:
        return None
    return f"{name}=y" in text.splitlines()


@contextmanager
def child(code: str) -> Iterator[int]:
    """A child running `code` on CPU, stopped by its PID (ours)."""
    p = subprocess.Popen([sys.executable, "-c", code, str(CPU)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        yield p.pid
    finally:
        p.terminate()
        p.wait(timeout=10)


def needs_cpu() -> None:
    if (os.cpu_count() or 1) <= CPU:
        pytest.skip(f"needs CPU {CPU}")


def test_steal_is_read_where_the_kernel_accounts_it(root, engine):
    needs_cpu()
    configs = [kernel_config(c) for c in ("CONFIG_PARAVIRT_TIME_ACCOUNTING",
                                          "CONFIG_FAIR_GROUP_SCHED")]
    if not all(configs):
        pytest.skip(f"the kernel does not account steal per run queue ({configs})")
    with child(SPIN), StallMonitor([CPU]) as mon:
        if not mon.running:
            pytest.skip(mon.reason)
        time.sleep(0.5)
    assert mon.final is not None
    (cpu,) = mon.final["cpus"]
    # every heartbeat of a busy CPU reads it: about 1000 in half a second
    assert cpu["steal_reads"] >= 0.5 * cpu["ticks"] > 0, cpu
    assert "steal" in cpu, cpu


def test_a_cpu_that_switches_tasks_is_not_a_stopped_cpu(root, engine):
    """Traffic through the bridge at about half its NDR: the switch's CPU runs its NAPI thread,
    sleeps and wakes thousands of times a second. Counted from the timer alone, 98 of 130 of its
    `vcpu` stalls here were whole periods (±25 us); counted from the last sign of running, a
    late timer's stall is as long as the CPU did not run, whatever the period."""
    needs_cpu()
    out = subprocess.run([sys.executable, "-m", "vswbench", "trial", "--switch", "bridge",
                          "--size", "64", "--rate", "250k", "--duration", "1", "--repeat", "3",
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    trials = json.loads(out.stdout)["trials"]
    if not all(t["stalls"]["monitored"] for t in trials):
        pytest.skip(trials[0]["stalls"]["reason"])
    lengths = [e[3] for t in trials for e in t["stalls"]["events"] if e[1] == "vcpu"]
    whole = [x for x in lengths if x >= STALL_PERIOD_US
             and min(x % STALL_PERIOD_US, -x % STALL_PERIOD_US) <= 25]
    # chance alone puts about 10 % of arbitrary lengths within 25 us of a whole period
    assert len(whole) <= max(2, 0.3 * len(lengths)), sorted(round(x) for x in lengths)
