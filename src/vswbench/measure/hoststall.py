"""Host stalls told apart from the switch's limit.

A session runs the engine's stall monitor (engine/stalls.py) over the CPUs of its path for as long
as it lives; each trial records what the monitor saw during it (TrialResult.stalls) and is
classified here: a trial that lost frames while a stall long enough to explain the loss hit a CPU
of the path (the stall's length x the offered rate > the path's ring, Switch.ingress_ring_frames)
is a "host stall" trial (TrialResult.host_stall says which stall). The classification never looks
at where the switch dropped: only at the monitor's stalls, the rate and the ring.

What a search does with a host-stall trial is its stall policy (`stall_policy`, the environment's
VSWBENCH_STALL_POLICY):

    excise   (default) the trial counts for the search with the loss its stall explains taken out:
             a trial flagged here lost at most STALL_LOSS_FACTOR x the frames its stalls cost, so
             it counts as a trial without loss, marked "excised". No time is spent repeating it,
             unless its path was stalled for more than MAX_EXCISE_SHARE of the trial: then it is
             repeated as under `repeat`.
    repeat   the trial is repeated, at most MAX_STALL_REPEATS times per trial and
             MAX_STALL_REPEATS_PER_SEARCH per search; past that it counts as measured (lossy).

Why excise by default: on this VM a CPU of the path stops for 1-5 ms in a third of the
quarter-second trials or more, and in runs where it stops in most of them every repeat stalls
again; the search then spends its repeats in a few loads and takes the NDR down to where a stall's
frames fit the ring (256 frames / 3 ms: about 85 kpps), whatever the switch. Excising can raise a
search's NDR above the switch's own by at most the share of a trial its stalls explain
(STALL_LOSS_FACTOR x their summed length / the trial's: 2 x 4 ms / 250 ms = 3.2 %, below the quick
preset's 5 % width), since a load beyond the switch's limit loses frames all trial long. RFC 2544's
NDR with every trial counted (classic_ndr_pps) stays beside the NDR, and every excised trial is
kept, marked.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from vswbench.engine.stalls import StallMonitor
from vswbench.errors import UsageError
from vswbench.measure.trial import TrialResult
from vswbench.testbed.build import Testbed

MAX_STALL_REPEATS = 3   # a trial hit by a host stall is repeated at most this often
# and a search repeats at most this many in all: on this VM a CPU of the path stops for 0.5-3 ms
# in a third of the quarter-second trials at high load, and repeating every one doubled quick's
# searches (testpmd 64 B: 161 trials, 98 rejected); past it, a host-stall trial counts as measured
# (marked, and said in the search's notes)
MAX_STALL_REPEATS_PER_SEARCH = 8
# The stalls explain a loss only up to this multiple of the frames they can cost (length x rate
# beyond the ring, summed): a trial that lost far more was over the switch's own limit, stalls
# or not (a switch near its limit also needs time to work off the backlog a stall leaves).
STALL_LOSS_FACTOR = 2.0
# Stalls that begin later than the trial's duration + this after its window opened (the drain,
# the counter samples) cannot cost its frames: they are recorded, not used to explain a loss.
TRAFFIC_SLACK_S = 0.02


STALL_POLICIES = ("excise", "repeat")


def stall_policy() -> str:
    """The stall policy of this process's searches (VSWBENCH_STALL_POLICY, default excise)."""
    policy = os.environ.get("VSWBENCH_STALL_POLICY", "excise").strip().lower() or "excise"
    if policy not in STALL_POLICIES:
        raise UsageError(f"VSWBENCH_STALL_POLICY={policy!r}: choose from "
                         f"{', '.join(STALL_POLICIES)} (or leave it unset: excise)")
    return policy


def path_cpus(testbed: Testbed) -> list[int]:
    """The CPUs the path runs on: the tester's, the switch's and the network functions'; every
    CPU this process may use where the placement leaves one to the scheduler."""
    p = testbed.placement
    chosen = [*p.tester_cpus, *p.switch_cpus, *p.nf_cpus]
    if any(c is None for c in (p.tester_cpu, p.switch_cpu)):
        return sorted(os.sched_getaffinity(0))
    return sorted({c for c in chosen if c is not None})


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def open_monitor(testbed: Testbed, pids: Sequence[int] = ()) -> StallMonitor:
    """A started stall monitor for this testbed: it watches the switch's NAPI threads (by name:
    napi/<run id>...), its daemons and the given processes (all their threads)."""
    switch = testbed.switch
    daemons: list[int] = []
    getter = getattr(switch, "daemon_pids", None)
    found = getter() if callable(getter) else {}
    daemons += [int(v) for v in (found.values() if isinstance(found, dict) else found)]
    threads = getattr(switch, "cpu_threads", None)
    if callable(threads):
        daemons += [int(v) for v in threads().values()]
    watched = [t for pid in (*daemons, *pids) for t in _threads(pid)]
    run = testbed.run
    return StallMonitor(path_cpus(testbed), watch_pids=watched,
                        watch_comms=[f"napi/{run.id}"], registry=run.registry,
                        state=run.state).start()


def tester_only_cpus(result: TrialResult) -> tuple[int, ...]:
    """The CPUs only the tester's generator uses: a stall there cannot cost the switch frames
    (the engine skips the departures due in its gaps instead of sending them back to back
    afterwards, engine --gap-us, where the switch leaves the tester's core alone:
    Switch.tester_cpu_free), so it never explains a loss. Only with the in-kernel tester
    (io xdplive), whose receiving runs where the switch delivers; a polling tester (afpacket,
    afxdp, dpdk) receives on its own CPU, and a stall there fills the switch's transmit ring."""
    skipping = any("--gap-us" in e.get("args", ()) for e in result.engines.values())
    if result.spec.get("io") != "xdplive" or not skipping:
        return ()
    tester, switch = result.placement.get("tester_cpu"), result.placement.get("switch_cpu")
    nfs = result.placement.get("nf_cpus") or []
    if not isinstance(tester, int) or tester == switch or tester in nfs:
        return ()
    return (tester,)


def explaining_stall(result: TrialResult, ring_frames: int) -> str | None:
    """Why this trial is a host-stall trial (None when it is not): it lost frames and a stall of
    the path's CPUs was long enough to explain that loss."""
    stalls = result.stalls
    if stalls is None or not stalls.monitored or result.lost <= 0:
        return None
    rate = result.offered_pps or result.tx_pps
    until_ms = (result.duration_s + TRAFFIC_SLACK_S) * 1000
    skip = tester_only_cpus(result)
    event = stalls.explaining(rate, ring_frames, until_ms, skip)
    over = stalls.frames_over_ring(rate, ring_frames, until_ms, skip)
    if event is None or result.lost > STALL_LOSS_FACTOR * over:
        return None
    cpu, kind, offset_ms, len_us = event[0], event[1], event[2], event[3]
    what = {"vcpu": "the CPU stopped",
            "steal": "the hypervisor ran another vCPU",
            "napi": "its NAPI polling stopped with frames waiting"}.get(
                kind, f"{event[4] or 'a thread'} waited")
    return (f"host stall: CPU {cpu} {len_us / 1000:.2f} ms at {offset_ms:.0f} ms ({what}; "
            f"{len_us * 1e-6 * rate:.0f} frames at {rate:,.0f} pps > the {ring_frames}-frame ring)")


# A host-stall trial is excised only while its path was stalled for at most this share of the
# trial: a trial stalled for longer measured the machine, not the switch, and is measured again
# (within the search's stall repeats) instead of counting as lossless. Under heavy load (other
# jobs on both cores) the classifier otherwise excised trials that lost 86-97 % of their frames.
MAX_EXCISE_SHARE = 0.10


def excisable(result: TrialResult) -> bool:
    """May this host-stall trial count with its stall's loss taken out (policy excise)?"""
    stalls = result.stalls
    if result.host_stall is None or stalls is None or not stalls.monitored:
        return False
    if result.host_stall.startswith("tester gap"):
        return False
    until_ms = (result.duration_s + TRAFFIC_SLACK_S) * 1000
    stalled = stalls.stalled_ms(until_ms, tester_only_cpus(result))
    return stalled <= MAX_EXCISE_SHARE * result.duration_s * 1000


# A trial whose generator skipped more than this share of its departures (engine --gap-us: its CPU
# did not run for longer than the gap limit, so the frames due then were never sent, rather than
# sent back to back afterwards into the switch's ring) did not offer its load: it is measured
# again, within the search's stall repeats.
TESTER_SKIP_LIMIT = 0.05


def unoffered_load(result: TrialResult, intended_frames: int) -> str | None:
    """Why this trial did not offer its load (None when it did): its tester skipped more than
    TESTER_SKIP_LIMIT of the departures in its own gaps."""
    skipped = result.tx_skipped
    if intended_frames <= 0 or skipped <= TESTER_SKIP_LIMIT * intended_frames:
        return None
    longest = (result.tester_gap_max_us or 0) / 1000
    return (f"tester gap: the generator's CPU did not run it for up to {longest:.2f} ms "
            f"({result.tester_gaps} gaps); {skipped:,} of {intended_frames:,} departures "
            f"({100 * skipped / intended_frames:.1f} %) skipped, never sent")


def classify(result: TrialResult, ring_frames: int) -> None:
    result.host_stall = explaining_stall(result, ring_frames)
