"""`vswbench doctor`'s host-stall check: the engine's stall monitor (engine/stalls.py) over every
CPU for a few seconds, counting the times a busy CPU's own timer fired late (the vCPU stopped, or
interrupts were off). What a trial's path sees is recorded per trial; this is the machine's."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from dataclasses import field

from vswbench.engine.stalls import StallMonitor
from vswbench.engine.stalls import summarize

STALL_CHECK_S = 2.0


@dataclass
class StallCheck:
    seconds: float
    monitored: bool
    reason: str = ""
    # per CPU: stalls, stalls a second, longest (us)
    cpus: dict[str, dict[str, float]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        if not self.monitored:
            return [f"host stalls not measured: {self.reason}"]
        return [f"CPU {cpu}: {d['stalls']:.0f} stalls in {self.seconds:g} s "
                f"({d['per_s']:.1f} a second), longest {d['longest_us'] / 1000:.2f} ms"
                for cpu, d in sorted(self.cpus.items(), key=lambda kv: int(kv[0]))]


def check_stalls(seconds: float = STALL_CHECK_S) -> StallCheck:
    cpus = sorted(os.sched_getaffinity(0))
    monitor = StallMonitor(cpus).start()
    if monitor.proc is None:
        return StallCheck(seconds, False, monitor.reason)
    t0 = time.monotonic_ns()
    try:
        time.sleep(seconds)   # the measurement window itself, not a wait for some state
    finally:
        t1 = time.monotonic_ns()
        stalls = monitor.stalls()
        monitor.stop()
    report = summarize(stalls, t0, t1, cpus)
    window = (t1 - t0) / 1e9
    return StallCheck(round(window, 2), True, cpus={
        cpu: {"stalls": c.stalls, "per_s": round(c.stalls / window, 2),
              "longest_us": c.longest_us} for cpu, c in report.cpus.items()})
