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
from functools import cached_property
from pathlib import Path
from typing import Any

from vswbench.measure.search import Preset
from vswbench.measure.search import SearchResult
from vswbench.measure.search import search
from vswbench.measure.session import SessionTrial
from vswbench.measure.session import TrialSession
from vswbench.measure.stats import Summary
from vswbench.measure.stats import noise_warning
from vswbench.measure.stats import steal_fraction
from vswbench.measure.stats import summarize
from vswbench.measure.trial import TrialResult

PROC_STAT = Path("/proc/stat")
TRIAL_METRICS = ("achieved_pps", "loss_ratio", "p50_us", "p99_us", "cycles_per_packet")
SEARCH_METRICS = ("ndr_pps", "pdr_pps")


def metric_summaries(values: Mapping[str, Sequence[float]]) -> dict[str, Summary]:
    """Each metric's summary over its repetitions (metrics without values are left out)."""
    return {metric: summarize(vals) for metric, vals in values.items() if vals}


def statistics_json(summaries: Mapping[str, Summary], *,
                    higher_is_better: Container[str]) -> dict[str, Any]:
    """The summaries as stored, each with the worst and best of N."""
    stats: dict[str, Any] = {}
    for metric, s in summaries.items():
        better = metric in higher_is_better
        stats[metric] = {**s.to_json(), "worst_of_n": s.worst(higher_is_better=better),
                         "best_of_n": s.best(higher_is_better=better)}
    return stats


def noise_warnings(summaries: Mapping[str, Summary], *, unwarned: Container[str] = (),
                   steal: float | None = None) -> list[str]:
    """A noise warning for each noisy metric but the `unwarned`."""
    found = (noise_warning(metric, s, steal_fraction=steal)
             for metric, s in summaries.items() if metric not in unwarned)
    return [w for w in found if w]


@dataclass(frozen=True)
class TrialStatistics:
    """`vswbench trial --repeat`: each metric's summary over the trials (metrics without values
    left out) and the noise warnings (no steal measured)."""
    summaries: dict[str, Summary]
    warnings: list[str]

    def to_json(self) -> dict[str, Any]:
        """The summaries as stored, each with the worst and best of N."""
        return statistics_json(self.summaries, higher_is_better={"achieved_pps"})


def repeated_trials(results: Sequence[TrialResult]) -> TrialStatistics:
    """Summary of each metric over repeated trials, and noise warnings."""
    values: dict[str, list[float]] = {m: [] for m in TRIAL_METRICS}
    for r in results:
        for metric, value in (("achieved_pps", r.achieved_pps), ("loss_ratio", r.loss_ratio),
                              ("p50_us", r.latency.p50), ("p99_us", r.latency.p99),
                              ("cycles_per_packet", r.cycles_per_packet)):
            if value is not None:
                values[metric].append(float(value))
    summaries = metric_summaries(values)
    return TrialStatistics(summaries, noise_warnings(summaries, unwarned={"loss_ratio"}))


@dataclass(frozen=True)
class RepeatedSearch:
    results: list[SearchResult]
    steal: float | None          # share of CPU time stolen by the hypervisor over the searches

    @property
    def chosen(self) -> SearchResult:
        """The search with the median NDR (of an even number, the upper middle one)."""
        ordered = sorted(self.results, key=lambda r: r.ndr_pps or 0.0)
        return ordered[len(ordered) // 2]

    @cached_property
    def summaries(self) -> dict[str, Summary]:
        """The NDR's and the PDR's summary over the searches (none for a single search)."""
        if len(self.results) < 2:
            return {}
        return metric_summaries({m: [v for r in self.results if (v := getattr(r, m)) is not None]
                                 for m in SEARCH_METRICS})

    @property
    def warnings(self) -> list[str]:
        """Noise warnings of the NDR and PDR over the searches, naming the steal."""
        return noise_warnings(self.summaries, steal=self.steal)


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
    """The median search's record with the environment and `notes` (the method's and the
    median search's) and, over several searches, the statistics, warnings and each search's
    summary (without its trials)."""
    results = repeated.results
    chosen = repeated.chosen
    data = {**env, **chosen.to_json()}
    data["notes"] = list(notes)
    data["ndr"] = chosen.describe_ndr()
    data["repetitions"] = len(results)
    data["steal_fraction"] = repeated.steal
    if len(results) > 1:
        data["statistics"] = statistics_json(repeated.summaries, higher_is_better=SEARCH_METRICS)
        data["warnings"] = repeated.warnings
        data["searches"] = [{k: v for k, v in r.to_json().items() if k != "trials"}
                            for r in results]
        data["total_trial_seconds"] = round(sum(r.trial_seconds for r in results), 3)
    return data
