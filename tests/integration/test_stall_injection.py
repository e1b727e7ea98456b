"""The host-stall detector validated by injection (issue 29): a SCHED_FIFO 99 busy loop stalls the
switch's CPU for 2 ms every 250 ms (stall_hog.py, started and stopped by PID) while trials run
through veth with its NAPI thread on that CPU.

- Injected: the stall monitor must report at least 90 % of the injected stalls that fell inside a
  trial while traffic flowed (a burst during which the tester's own CPU was stopped delays no
  path work: no frame arrives, nothing waits). Every trial that lost frames while bursts hit
  it is classified "host stall" unless it lost more than STALL_LOSS_FACTOR x what its seen stalls
  can cost (then something else cost frames too, and the classifier rightly counts the trial):
  13-20 of 20 were flagged in nine quiet runs, the rest lost more than twice their stalls' frames.
- Without injection: at most 5 % of trials flagged, or, on a machine that other work loads, every
  flagged trial beyond those 5 % corroborated by the kernel's own accounting, independent of the
  monitor: the run-queue delay (/proc/PID/schedstat) of the thread the monitor saw waiting, or the
  steal time of the CPU it saw stopped, during that trial. A stop the monitor read off the
  hypervisor's steal clock is the kernel's account itself (on this VM most quiet trials flagged
  are such stops of 1.5-4 ms, below /proc/stat's 10 ms step): what the monitor read of that
  clock over the quiet phase must not exceed the steal /proc/stat accounted meanwhile.

The flag rates are printed as one summary line (pytest -s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vswbench.engine.params import TrialParams
from vswbench.engine.stalls import Stall
from vswbench.host.cpustat import read_proc_stat
from vswbench.measure import hoststall
from vswbench.measure.hoststall import STALL_LOSS_FACTOR
from vswbench.measure.hoststall import TRAFFIC_SLACK_S
from vswbench.measure.session import ControlSession
from vswbench.measure.session import SessionTrial
from vswbench.run.scope import run_scope
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.catalog import all_switches
from vswbench.testbed.build import Testbed

TESTER_CPU, SWITCH_CPU = 0, 1
PLACEMENT = Placement(TESTER_CPU, SWITCH_CPU, (SWITCH_CPU,))
RATE = 200_000            # 2 ms at 200 kpps = 400 frames > veth's 256-frame ring
TRIALS = 20
QUIET_TRIALS = 20
TRIAL_S = 0.5
TRAFFIC_START_S = 0.02
HOG = Path(__file__).parent / "stall_hog.py"


class Hog:
    """stall_hog.py as a child process; stopped by its PID; its bursts are the ground truth."""

    def __init__(self, cpu: int, busy_ms: float = 2.0, period_ms: float = 250.0) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HOG), str(cpu), str(busy_ms),
                                      str(period_ms)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert json.loads(first) == {"ready": True}, first

    def stop(self) -> list[tuple[int, int]]:
        self.proc.terminate()          # SIGTERM to our own child, by PID
        out, _ = self.proc.communicate(timeout=10)
        return [(d["start_ns"], d["end_ns"]) for d in map(json.loads, out.splitlines())]


def run_delays(comms: tuple[str, ...]) -> dict[str, int]:
    """Nanoseconds each thread whose name starts with one of `comms` spent runnable but waiting
    (the second field of /proc/PID/task/TID/schedstat), by thread name."""
    found: dict[str, int] = {}
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        try:
            comm = (task / "comm").read_text().strip()
            if comm.startswith(comms):
                found[comm] = found.get(comm, 0) + int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return found


def measured(session: ControlSession, n: int, comms: tuple[str, ...]
             ) -> list[tuple[SessionTrial, dict[str, int], dict[int, int]]]:
    """n trials, each with the run-queue delay of the path's threads and the steal time (ticks)
    of each CPU during it."""
    out = []
    for _ in range(n):
        d0, s0 = run_delays(comms), read_proc_stat()
        t = session.measure(RATE, TRIAL_S)
        d1, s1 = run_delays(comms), read_proc_stat()
        out.append((t, {k: d1[k] - d0.get(k, 0) for k in d1},
                    {c: s1[c].steal - s0[c].steal for c in s1 if c in s0}))
    return out


STEAL_TICK_US = 10_000    # /proc/stat counts steal in 1/100 s


def corroborated(trial: SessionTrial, delays: dict[str, int], steal: dict[int, int],
                 stalls: list[Stall]) -> bool | None:
    """Does the kernel's own accounting show the stall that flagged this trial? A thread's wait:
    its run-queue delay (schedstat, ns) covers at least half of it. A CPU the hypervisor stopped
    ("steal": the monitor read the steal clock's growth): that clock is the kernel's account, and
    the phase's steal total checks the monitor's readings of it (phase_steal). A CPU whose timer
    fired late ("vcpu") or whose NAPI polling stopped ("napi"): the steal clock of that CPU grew
    by at least half as much during the trial, or, for stalls of two /proc/stat steps or more,
    /proc/stat's steal grew (None: neither shows it, and the stall is too short to check)."""
    result = trial.result.stalls
    assert result is not None and result.events
    event = next(e for e in result.events if e[3] * 1e-6 * RATE > 256)
    cpu, kind, _, len_us, comm = event[:5]
    if kind == "runq":
        return any(k.startswith(comm) and v >= 0.5 * len_us * 1000 for k, v in delays.items())
    if kind == "steal":
        return True
    w0, w1 = trial.window_ns
    stolen_us = sum(s.len_us for s in stalls
                    if s.cpu == cpu and s.kind == "steal" and s.start_ns < w1 and s.end_ns > w0)
    if stolen_us >= 0.5 * len_us:
        return True
    if len_us < 2 * STEAL_TICK_US:
        return None
    return steal.get(cpu, 0) > 0


def phase_steal(stalls: list[Stall], t0_ns: int, t1_ns: int, ticks: dict[int, int]
                ) -> dict[int, tuple[float, float]]:
    """Per CPU: the steal the monitor reported between t0 and t1 (its "steal" stalls, ms) and the
    steal /proc/stat accounted meanwhile (ms). Both read the hypervisor's steal clock; the
    monitor's share cannot exceed the kernel's total by more than /proc/stat's resolution."""
    out = {}
    for cpu, n in ticks.items():
        seen = sum(s.len_us for s in stalls
                   if s.cpu == cpu and s.kind == "steal" and t0_ns <= s.start_ns and s.end_ns <= t1_ns)
        out[cpu] = (seen / 1000, n * STEAL_TICK_US / 1000)
    return out


@pytest.mark.timeout(300)
def test_injected_stalls_are_flagged_and_quiet_trials_are_not(root, engine):
    veth = all_switches()["veth"]
    with run_scope() as run:
        comms = (f"napi/{run.id}", "vswbench-engin")
        with (Testbed(parse("p2p"), veth, run, PLACEMENT) as tb,
              ControlSession(tb, TrialParams(64, io="xdplive")) as session):
            assert session.monitor is not None and session.monitor.running, \
                session.monitor.reason if session.monitor else "no monitor"
            # the tester at SCHED_FIFO 1 (our own child, by PID): other work on its CPU would
            # otherwise stop the traffic often, and a burst without traffic delays nothing.
            # Half-second trials with the session's pauses between them keep it under RT
            # throttling (950 ms a second), which would stop it for 50 ms: a stall of its own
            assert session.driver is not None
            os.sched_setscheduler(session.driver.pid, os.SCHED_FIFO, os.sched_param(1))
            session.warm_up(10_000, 0.3)
            q0_ns, q0_stat = time.monotonic_ns(), read_proc_stat()
            quiet = measured(session, QUIET_TRIALS, comms)
            q1_ns, q1_stat = time.monotonic_ns(), read_proc_stat()
            hog = Hog(SWITCH_CPU)
            try:
                injected = [t for t, _, _ in measured(session, TRIALS, comms)]
            finally:
                bursts = hog.stop()
            stalls = session.monitor.stalls()

    def overlapping(cpu: int, b: tuple[int, int], min_us: float) -> bool:
        return any(s.cpu == cpu and s.start_ns < b[1] and s.end_ns > b[0] and s.len_us >= min_us
                   for s in stalls)

    # ground truth: the bursts inside a trial's traffic while the tester ran (nothing waits
    # otherwise); the traffic is the first TRIAL_S of the trial's window, less its first
    # TRAFFIC_START_S: the window opens when the command is sent, the frames follow a few ms later
    traffic = [(t.window_ns[0] + int(TRAFFIC_START_S * 1e9), t.window_ns[0] + int(TRIAL_S * 1e9))
               for t in injected]
    inside = [b for b in bursts if any(w0 <= b[0] and b[1] <= w1 for w0, w1 in traffic)]
    with_traffic = [b for b in inside if not overlapping(TESTER_CPU, (b[0] - 1_000_000, b[1]), 1000)]
    seen = [b for b in with_traffic if overlapping(SWITCH_CPU, b, 500)]
    seen_all = [b for b in inside if overlapping(SWITCH_CPU, b, 500)]
    lossy_hit = [t for t in injected if t.result.lost > 0]
    rejected = [t for t in lossy_hit if t.host_stall]
    flagged_quiet = [(t, d, s) for t, d, s in quiet if t.host_stall]
    checks = [(t, corroborated(t, d, s, stalls)) for t, d, s in flagged_quiet]
    unexplained = [t for t, ok in checks if ok is False]
    uncheckable = [t for t, ok in checks if ok is None]
    steal_ticks = {c: q1_stat[c].steal - q0_stat[c].steal for c in q1_stat if c in q0_stat}
    quiet_steal = phase_steal(stalls, q0_ns, q1_ns, steal_ticks)
    print(f"\nstall injection: {len(seen)}/{len(with_traffic)} injected stalls seen while traffic "
          f"flowed ({100 * len(seen) / max(1, len(with_traffic)):.0f} %; {len(seen_all)}/"
          f"{len(inside)} of all inside trials); {len(rejected)}/{len(lossy_hit)} trials that "
          f"lost frames under injection flagged host stall; without injection "
          f"{len(flagged_quiet)}/{len(quiet)} flagged, {len(unexplained)} not corroborated by "
          f"schedstat/steal, {len(uncheckable)} CPU stops too short for steal's resolution; "
          f"steal without injection, monitor/kernel: "
          + ", ".join(f"CPU {c} {m:.1f}/{k:.0f} ms" for c, (m, k) in sorted(quiet_steal.items())))
    for phase, trials in (("injected", injected), ("quiet", [t for t, _, _ in quiet])):
        for t in trials:
            print(f"  {phase:8s} {t.result.lost:6d} lost  {t.host_stall or '-'}")
    for t in unexplained:
        print(f"  not corroborated: {t.host_stall}")
    for b in with_traffic:
        if b not in seen:
            w0 = next(w0 for w0, w1 in traffic if w0 <= b[0] <= w1)
            near = [(s.cpu, s.kind, round((s.start_ns - b[0]) / 1e6, 2), round(s.len_us / 1e3, 2))
                    for s in stalls if s.start_ns < b[1] + 2e6 and s.end_ns > b[0] - 2e6]
            print(f"  missed burst at {(b[0] - w0) / 1e6:.0f} ms of its trial; near: {near}")
    assert len(with_traffic) >= TRIALS, (len(with_traffic), len(inside), len(bursts))
    assert len(seen) >= 0.9 * len(with_traffic)
    assert lossy_hit, "the injected stalls cost no frames: the test's rate is too low to show them"
    # a lossy trial left unflagged must be one the classifier leaves on purpose: it lost more
    # than STALL_LOSS_FACTOR x the frames its seen stalls put over the ring (something besides
    # the stall cost frames). Here 0-7 of 20 trials did, in nine runs on a quiet machine (the VM
    # also loses frames with no stall seen: quiet trials lost up to 3,937); a missed stall would
    # fail the first assertion, a missed classification this one
    unflagged = [t for t in lossy_hit if not t.host_stall]
    for t in unflagged:
        stalled = t.result.stalls
        assert stalled is not None and stalled.monitored
        # the classifier's own view: stalls of the tester's own core skip departures instead
        # of costing the switch frames (tester_only_cpus), so they explain no loss
        over = stalled.frames_over_ring(RATE, 256, (t.result.duration_s + TRAFFIC_SLACK_S) * 1000,
                                        hoststall.tester_only_cpus(t.result))
        assert t.result.lost > STALL_LOSS_FACTOR * over, (t.result.lost, over)
    assert rejected, "no trial the injected stalls cost frames was flagged"
    # a quiet machine flags at most 5 %; a machine others load may flag more, but only trials
    # whose stall the kernel's accounting confirms (or cannot resolve: short CPU stops)
    assert len(flagged_quiet) <= 0.05 * len(quiet) or len(unexplained) <= 0.05 * len(quiet)
    # the hypervisor's stops the monitor read off the steal clock add up to no more than the
    # kernel's own steal total over the quiet phase (/proc/stat: 10 ms steps, and it may lag the
    # clock by one accounting tick at each end)
    for cpu, (monitor_ms, kernel_ms) in quiet_steal.items():
        assert monitor_ms <= kernel_ms + 2 * STEAL_TICK_US / 1000, (cpu, monitor_ms, kernel_ms)
    # late timers and stopped polls that neither steal record shows: 0-1 of 20 in two runs here
    # (CI's host had 13 of 20 unconfirmable when the steal clock's records did not count)
    assert len(uncheckable) <= 0.5 * len(quiet), "too many unconfirmable CPU stops"
    # no wait longer than the whole window: a stale wake-up would show as one
    assert all(e[3] <= t.result.stalls.window_s * 1e6 + 1 for t in injected
               for e in t.result.stalls.events)
