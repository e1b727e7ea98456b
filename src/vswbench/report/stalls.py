"""The report's sentence on host stalls: how much this machine stopped the path's CPUs during the
run's searches (engine/stalls.py records them per trial, measure/hoststall.py classifies), and how
many trials lost frames to a stall (and were excised or repeated)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vswbench.results.points import StoredResults
from vswbench.results.record import LoadPoint


def stall_totals(trials: Sequence[LoadPoint]) -> dict[str, Any]:
    """Per CPU: stalls, longest (us), seconds monitored; and the trials rejected."""
    cpus: dict[str, dict[str, float]] = {}
    seconds, monitored = 0.0, 0
    for t in trials:
        s = t.stalls
        if s is None:
            continue
        monitored += 1
        seconds += s.window_s
        for cpu, c in s.cpus.items():
            d = cpus.setdefault(cpu, {"stalls": 0.0, "longest_us": 0.0})
            d["stalls"] += float(c.stalls)
            d["longest_us"] = max(d["longest_us"], float(c.longest_us))
    return {"cpus": cpus, "seconds": seconds, "monitored": monitored,
            "rejected": sum(1 for t in trials if t.rejected),
            "excised": sum(1 for t in trials if t.excised),
            "skipped": sum(t.tx_skipped for t in trials),
            "gap_trials": sum(1 for t in trials if t.tx_skipped),
            "longest_gap_us": max((t.tester_gap_max_us or 0.0 for t in trials), default=0.0)}


def stall_sentences(data: StoredResults) -> list[str]:
    trials = [t for p in data.records("search") for t in p.measured.trials]
    if not trials:
        return []
    totals = stall_totals(trials)
    if not totals["monitored"]:
        return [("Host stalls: not monitored in this run (the engine's stall monitor needs root "
                 "and a build with BPF).")]
    secs = totals["seconds"] or 1.0
    per_cpu = "; ".join(
        f"CPU {cpu}: {d['stalls'] / secs:.1f} a second, longest {d['longest_us'] / 1000:.1f} ms"
        for cpu, d in sorted(totals["cpus"].items(), key=lambda kv: int(kv[0])))
    rejected, excised = totals["rejected"], totals["excised"]
    how = []
    if excised:
        how.append(f"{excised} counted with the stall's loss taken out (excised)")
    if rejected - excised:
        how.append(f"{rejected - excised} repeated")
    handled = f" ({', '.join(how)})" if how else ""
    gaps = ""
    if totals["skipped"]:
        gaps = (f" In {totals['gap_trials']} trial(s) the tester's own core stopped its generator "
                f"for more than 0.1 ms (longest {totals['longest_gap_us'] / 1000:.1f} ms): the "
                f"{totals['skipped']:,} departures due then were skipped, never sent (neither "
                "offered nor lost), not sent back to back into the switch's ring afterwards.")
    return [(f"Host stalls during the searches ({totals['monitored']} trials, {secs:.0f} s "
            f"monitored; a stall is a CPU of the path stopped, or the path's thread kept waiting, "
            f"for 0.1 ms or more): {per_cpu}. {rejected} trial(s) lost frames to a stall longer "
            f"than the path's ring holds{handled}: their searches' NDRs do not count that loss; "
            f"RFC 2544's NDR with every trial counted is stored beside each.{gaps}")]
