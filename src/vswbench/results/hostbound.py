"""Did a search measure the switch or the host? The share of its trial time the stall monitor
saw a CPU of the path stopped, and the share of its departures the tester skipped in its own
gaps (a stall of the tester's CPU).

On two vCPUs a DPDK switch's poll loop and the DPDK tester's each hold one CPU; anything else
that runs there (the host's stalls, the controller, a kernel thread) stops one of them. One
quick run's testpmd search at 64 B (issue 43) had its path stopped for up to 474 ms of a trial's
window and the tester skipping up to 405,712 departures a trial: its figure was the host's.
A search whose tester skipped more than HOST_BOUND_SHARE of its departures is "host-bound": the
load it asked for was never offered, because the tester's own CPU stopped (the switch leaves
that CPU alone). The stopped time of the path's CPUs is shown beside it, not judged: a switch's
own threads waiting for each other on one core (OVS's handlers and PMD, NAPI at FIFO priority
preempting a PMD) count there too. The verdict says so with these figures, and without paired
rounds a host-bound search is never ranked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vswbench.jsonvalues import number

HOST_BOUND_SHARE = 0.25


@dataclass(frozen=True)
class HostBound:
    stalled_share: float            # the worst CPU's stopped time over the trials' windows
    skipped_share: float            # departures the tester skipped over those it was due
    trials: int

    @property
    def bound(self) -> bool:
        return self.skipped_share > HOST_BOUND_SHARE

    def describe(self) -> str:
        return (f"host-bound: its tester skipped {self.skipped_share * 100:.0f} % of the "
                f"departures its search asked for, a CPU of its path stopped "
                f"{self.stalled_share * 100:.0f} % of the trial time ({self.trials} trials)")


def host_bound(result: dict[str, Any]) -> HostBound | None:
    """The search result's host-bound figures (None: no trial carried the stall monitor's)."""
    window = stalled = due = skipped = 0.0
    trials = 0
    for t in result.get("trials") or []:
        if not isinstance(t, dict):
            continue
        brief = t.get("stalls")
        if not isinstance(brief, dict):
            continue
        span = number(brief.get("window_s")) or 0.0
        cpus = brief.get("cpus")
        worst = max((number(c.get("total_us")) or 0.0 for c in cpus.values()
                     if isinstance(c, dict)), default=0.0) if isinstance(cpus, dict) else 0.0
        window += span
        stalled += min(worst / 1e6, span)
        skip = number(t.get("tx_skipped")) or 0.0
        skipped += skip
        due += (number(t.get("intended_count")) or 0.0)
        trials += 1
    if trials == 0 or window <= 0:
        return None
    return HostBound(stalled / window, skipped / due if due > 0 else 0.0, trials)
