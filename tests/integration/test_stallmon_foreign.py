"""The stall monitor charges a watched thread's wait only with the time its CPU ran foreign work
(engine/README.md, Stall monitor): two threads of the path that share a core by placement take
turns, and that is the configuration's cost, not a host stall.

Two busy loops share CPU 1 (our own children, stopped by PID). Watching both, their turns are not
stalls; watching only one, the other's turns are (about half the time). Other work on the machine
is foreign in both runs alike, so the test compares the two runs, not a run with zero."""

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


def runq_wait_s(watch: list[int], names: tuple[str, ...]) -> tuple[float, set[str]]:
    """Seconds of runq stalls of the named threads on CPU over WATCH_S, and who held the CPU."""
    with StallMonitor([CPU], watch_pids=watch) as mon:
        if not mon.running:
            pytest.skip(f"stall monitor unavailable: {mon.reason}")
        t0 = time.monotonic_ns()
        time.sleep(WATCH_S)     # the window the monitor watches, not a wait for some state
        t1 = time.monotonic_ns()
        report = mon.report(t0, t1)
        stalls = [s for s in mon.stalls() if s.kind == "runq" and s.comm in names
                  and t0 <= s.start_ns <= t1]
    assert report.monitored, report.reason
    return sum(s.len_us for s in stalls) / 1e6, {s.held_by for s in stalls}


def test_path_threads_taking_turns_are_not_stalls(root, engine):
    if (os.cpu_count() or 1) <= CPU:
        pytest.skip(f"needs CPU {CPU}")
    names = ("vsbspinA", "vsbspinB")
    with spinners(*names) as (a, b):
        both, _ = runq_wait_s([a, b], names)
        one, held = runq_wait_s([a], names[:1])
    print(f"\nrunq stall time of the watched spinners over {WATCH_S:g} s: "
          f"both watched {both:.3f} s, one watched {one:.3f} s (held by {sorted(held)})")
    # watching one, the other's turns (about half the CPU) are foreign
    assert one >= 0.25 * WATCH_S, one
    assert "vsbspinB" in held
    # watching both, only the machine's other work is foreign: far less
    assert both <= 0.5 * one, (both, one)
