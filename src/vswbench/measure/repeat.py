"""Repetitions: statistics over N repeated trials or searches (median, CI, CV, worst and best of
N, noise warnings: one implementation for `vswbench trial --repeat` and `vswbench search
--repeat`), and the search's repeat loop with the VM steal time measured over it (/proc/stat).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Container
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.measure.search import Preset
from vswbench.measure.search import SearchResult
from vswbench.measure.search import search
from vswbench.measure.session import SessionTrial
from vswbench.measure.session import TrialSession
from vswbench.measure.stats import noise_warning
from vswbench.measure.stats import steal_fraction
from vswbench.measure.stats import summarize
from vswbench.measure.trial import TrialResult

PROC_STAT = Path("/proc/stat")
TRIAL_METRICS = ("achieved_pps", "loss_ratio", "p50_us", "p99_us", "cycles_per_packet")
SEARCH_METRICS = ("ndr_pps", "pdr_pps")


def metric_statistics(values: Mapping[str, Sequence[float]], *,
                      higher_is_better: Container[str], unwarned: Container[str] = (),
                      steal: float | None = None) -> tuple[dict[str, Any], list[str]]:
    """Each metric's summary over its repetitions with the worst and best of N (metrics without
    values are left out), and a noise warning for each noisy metric but the `unwarned`."""
    stats: dict[str, Any] = {}
    warnings = []
    for metric, vals in values.items():
        if not vals:
            continue
        s = summarize(vals)
        better = metric in higher_is_better
        stats[metric] = {**s.to_json(), "worst_of_n": s.worst(higher_is_better=better),
                         "best_of_n": s.best(higher_is_better=better)}
        if metric in unwarned:
            continue
        w = noise_warning(metric, s, steal_fraction=steal)
        if w:
            warnings.append(w)
    return stats, warnings


def trial_statistics(results: Sequence[TrialResult]) -> tuple[dict[str, Any], list[str]]:
    """Summary of each metric over repeated trials, and noise warnings (no steal measured)."""
    values: dict[str, list[float]] = {m: [] for m in TRIAL_METRICS}
    for r in results:
        for metric, value in (("achieved_pps", r.achieved_pps), ("loss_ratio", r.loss_ratio),
                              ("p50_us", r.latency_us.get("p50")),
                              ("p99_us", r.latency_us.get("p99")),
                              ("cycles_per_packet", r.cycles_per_packet)):
            if value is not None:
                values[metric].append(float(value))
    return metric_statistics(values, higher_is_better={"achieved_pps"}, unwarned={"loss_ratio"})


def search_statistics(results: Sequence[SearchResult],
                      steal: float | None) -> tuple[dict[str, Any], list[str]]:
    """Summary of the NDR and PDR over repeated searches, and noise warnings naming the steal."""
    values = {m: [v for r in results if (v := getattr(r, m)) is not None] for m in SEARCH_METRICS}
    return metric_statistics(values, higher_is_better=SEARCH_METRICS, steal=steal)


@dataclass(frozen=True)
class RepeatedSearch:
    results: list[SearchResult]
    steal: float | None          # share of CPU time stolen by the hypervisor over the searches


def repeat_search(session: TrialSession, p: Preset, repeat: int, *, min_load: float,
                  max_load: float, generator_ceiling: float | None,
                  say: Callable[[str], None],
                  progress: Callable[[SessionTrial], None]) -> RepeatedSearch:
    """`repeat` searches one after the other in one session, each with the trial list emptied,
    and the steal time over them all."""
    results = []
    stat0 = PROC_STAT.read_text()
    for i in range(repeat):
        say(f"search {i + 1}/{repeat} ({p.name}: {p.description})")
        session.trials.clear()
        results.append(search(session, p, min_load=min_load, max_load=max_load,
                              generator_ceiling=generator_ceiling, progress=progress))
    return RepeatedSearch(results, steal_fraction(stat0, PROC_STAT.read_text()))


def search_json(repeated: RepeatedSearch, env: dict[str, Any],
                notes: list[str]) -> dict[str, Any]:
    """The median search's record with the environment and, over several searches, the
    statistics, warnings and each search's summary (without its trials)."""
    results = repeated.results
    ordered = sorted(results, key=lambda r: r.ndr_pps or 0.0)
    chosen = ordered[len(ordered) // 2]
    data = {**env, **chosen.to_json()}
    data["notes"] = [*notes, *data["notes"]]
    data["ndr"] = chosen.describe_ndr()
    data["repetitions"] = len(results)
    data["steal_fraction"] = repeated.steal
    if len(results) > 1:
        data["statistics"], data["warnings"] = search_statistics(results, repeated.steal)
        data["searches"] = [{k: v for k, v in r.to_json().items() if k != "trials"}
                            for r in results]
        data["total_trial_seconds"] = round(sum(r.trial_seconds for r in results), 3)
    return data
