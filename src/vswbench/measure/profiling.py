"""`--profile`: which cores a trial's profile covers, and the honest-CPU cross-check of the
scheduler's accounting (/proc/stat, tick-sampled without CONFIG_IRQ_TIME_ACCOUNTING) against perf
sampling on the same trial (Emmerich et al. Fig. 12, Guideline 3).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from vswbench.host.perf import PerfRecorder
from vswbench.testbed.build import Testbed

DIFFER = 0.10          # scheduler and perf CPU further apart than this (relative) are flagged


def profile_cpus(testbed: Testbed) -> list[int]:
    """The cores the testbed uses (tester, switch, NFs); every core when any is unpinned."""
    p = testbed.placement
    if p.tester_cpu is None or p.switch_cpu is None:
        return list(range(os.cpu_count() or 1))
    cpus = [*p.tester_cpus, *p.switch_cpus, *p.nf_cpus]
    return sorted({c for c in cpus if c is not None})


def cpu_check(result: Any, profile: dict[str, Any]) -> dict[str, Any]:
    """Per profiled core the busy share by /proc/stat and by perf, and cycles per packet over
    those cores both ways; `differ` when they are more than 10 % apart."""
    per_core = {}
    sched_s = perf_s = 0.0
    for cpu, core in profile["cores"].items():
        usage = result.cpu.get(cpu)
        if usage is None or not core["samples"]:
            continue
        perf_busy = core.get("busy")
        if perf_busy is None:
            continue
        window = usage["busy_s"] / usage["busy"] if usage["busy"] else None
        per_core[cpu] = {"scheduler_busy": usage["busy"], "scheduler_softirq": usage["softirq"],
                         "perf_busy": round(perf_busy, 4),
                         "differ": _differ(usage["busy"], perf_busy)}
        if window:
            sched_s += usage["busy_s"]
            perf_s += perf_busy * window
    packets = max(0, result.tx_frames - result.lost)      # forwarded, as cycles_per_packet
    cpp_sched = sched_s * result.tsc_hz / packets if packets and sched_s else None
    cpp_perf = perf_s * result.tsc_hz / packets if packets and perf_s else None
    return {"per_core": per_core, "cycles_per_packet_scheduler": _round(cpp_sched),
            "cycles_per_packet_perf": _round(cpp_perf),
            "differ": (_differ(cpp_sched, cpp_perf) if cpp_sched and cpp_perf else None)}


def _differ(a: float | None, b: float | None) -> bool | None:
    if a is None or b is None:
        return None
    base = max(abs(a), abs(b))
    return bool(base and abs(a - b) / base > DIFFER)


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


@contextmanager
def profiled(testbed: Testbed, enabled: bool) -> Iterator[Callable[[Any], None]]:
    """`with profiled(tb, on) as attach: result = ...; attach(result)`: perf records the
    testbed's cores around the block; attach stores the profile and the CPU cross-check in the
    TrialResult (a no-op when not enabled)."""
    if not enabled:
        yield lambda result: None
        return
    pending: list[Any] = []
    from vswbench.switches.catalog import daemon_comms

    with PerfRecorder(testbed.run, profile_cpus(testbed), daemons=daemon_comms()) as rec:
        yield pending.append
    if rec.profile is not None:
        for result in pending:
            data = rec.profile.to_json()
            data["cpu_check"] = cpu_check(result, data)
            result.profile = data
