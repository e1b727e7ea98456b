"""The stall monitor charges a watched thread's wait only with the time its CPU ran foreign work
(engine/README.md, Stall monitor): two threads of the path that share a core by placement take
turns, and that is the configuration's cost, not a host stall.

Two busy loops A and B share CPU 1 (our own children, stopped by PID). Two monitors watch the
same second: one watches A and B, the other A alone. For the second, B's turns are foreign: A's
stalls grow by about B's share of the CPU. Other work on the machine is foreign to both alike (a
loaded machine gave 0.38 s of A's waits to it), so the test compares the two, not one with zero."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from vswbench.engine.stalls import StallMonitor

CPU = 1
WATCH_S = 1.0
SPIN = ("import ctypes, os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); "
        "ctypes.CDLL(None).prctl(15, sys.argv[2].encode(), 0, 0, 0); "
        "print('ready', flush=True)\nwhile True: pass")


@contextmanager
def spinners(*names: str) -> Iterator[list[int]]:
    procs = [subprocess.Popen([sys.executable, "-c", SPIN, str(CPU), name],
                              stdout=subprocess.PIPE, text=True) for name in names]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.terminate()          # our own children, by PID
            p.wait(timeout=10)


def runq_wait_s(monitor: StallMonitor, t0: int, t1: int, comm: str) -> tuple[float, set[str]]:
    """Seconds of the runq stalls of thread `comm` on CPU between t0 and t1, and who held it."""
    report = monitor.report(t0, t1)
    assert report.monitored, report.reason
    stalls = [s for s in monitor.stalls() if s.kind == "runq" and s.comm == comm
              and t0 <= s.start_ns <= t1]
    return sum(s.len_us for s in stalls) / 1e6, {s.held_by for s in stalls}


def test_path_threads_taking_turns_are_not_stalls(root, engine):
    if (os.cpu_count() or 1) <= CPU:
        pytest.skip(f"needs CPU {CPU}")
    with (spinners("vsbspinA", "vsbspinB") as (a, b),
          StallMonitor([CPU], watch_pids=[a, b]) as both_mon,
          StallMonitor([CPU], watch_pids=[a]) as one_mon):
        for mon in (both_mon, one_mon):
            if not mon.running:
                pytest.skip(f"stall monitor unavailable: {mon.reason}")
        t0 = time.monotonic_ns()
        time.sleep(WATCH_S)     # the window the monitors watch, not a wait for some state
        t1 = time.monotonic_ns()
        both, _ = runq_wait_s(both_mon, t0, t1, "vsbspinA")
        one, held = runq_wait_s(one_mon, t0, t1, "vsbspinA")
    print(f"\nrunq stall time of spinner A over {WATCH_S:g} s: A and B watched {both:.3f} s, "
          f"A alone watched {one:.3f} s (held by {sorted(held)})")
    # watched alone, A's waits while B ran (about half the CPU) are stalls too
    assert "vsbspinB" in held
    assert one - both >= 0.15 * WATCH_S, (both, one)
