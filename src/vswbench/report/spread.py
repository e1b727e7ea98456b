"""Parameter error bars over the workload space (Fang et al., Fig. 7).

For each switch and each workload parameter that the campaign varied (frame size, flows, burst,
rate, churn), how much does the throughput move when only that parameter changes? Points are grouped
by everything else they were measured with (the "context"); within a context the throughput at
each value of the parameter is taken (the median over repetitions), and its minimum and maximum
are divided by its median. A bar reports, over all contexts, the median throughput, the lowest
min/median and the highest max/median: a bar from 0.4 to 1.3 means that changing this parameter
alone cost up to 60 % or gained up to 30 % against the typical value.

Repetitions get their own bar when present: the same point measured again, spread around its
median (the run-to-run noise against which the parameters' effects should be read).

The bars over the whole product at once (Fang's Fig. 7 proper) are in product_bars.py.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import defaultdict
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import fields

from vswbench.results.params import Params
from vswbench.results.points import StoredResults

PARAMETERS = ("size", "flows", "burst", "rate", "churn")
REPETITION = "repetition"


@dataclass(frozen=True)
class ErrorBar:
    switch: str
    metric: str                  # "NDR" (searches), "achieved" (trials), "peak achieved" (sweeps)
    parameter: str               # one of PARAMETERS, or "repetition"
    median_pps: float            # median over contexts of the median throughput
    low: float                   # lowest min / median over contexts (<= 1)
    high: float                  # highest max / median over contexts (>= 1)
    values: int                  # distinct values of the parameter seen
    contexts: int                # contexts in which it was varied


def _context(params: Params, without: tuple[str, ...]) -> str:
    return params.canonical(without)


def _bar(switch: str, metric: str, parameter: str, groups: list[list[float]],
         distinct: set[str]) -> ErrorBar | None:
    groups = [g for g in groups if len(g) >= 2 and statistics.median(g) > 0]
    if not groups:
        return None
    medians = [statistics.median(g) for g in groups]
    return ErrorBar(switch, metric, parameter, statistics.median(medians),
                    min(min(g) / m for g, m in zip(groups, medians)),
                    max(max(g) / m for g, m in zip(groups, medians)), len(distinct), len(groups))


def error_bars(data: StoredResults) -> list[ErrorBar]:
    """Bars for every (switch, metric, parameter) varied in at least one context."""
    samples: dict[tuple[str, str], list[tuple[Params, float]]] = defaultdict(list)
    for p in data.records():
        tp = p.throughput()
        if tp is not None:
            samples[(str(p.params.value("switch", "?")), tp[0])].append((p.params, tp[1]))
    bars = []
    for (switch, metric), pts in sorted(samples.items()):
        # the median over repetitions of each point, keyed by its parameters without repetition
        by_point: dict[str, tuple[Params, list[float]]] = {}
        for params, value in pts:
            key = _context(params, (REPETITION,))
            by_point.setdefault(key, (params, []))[1].append(value)
        for parameter in PARAMETERS:
            contexts: dict[str, list[float]] = defaultdict(list)
            distinct: set[str] = set()
            for params, values in by_point.values():
                if params.has(parameter):
                    contexts[_context(params, (parameter, REPETITION))].append(
                        statistics.median(values))
                    distinct.add(json.dumps(params.value(parameter), default=str))
            bar = _bar(switch, metric, parameter, list(contexts.values()), distinct)
            if bar is not None:
                bars.append(bar)
        reps = _bar(switch, metric, REPETITION, [v for _, v in by_point.values()],
                    {str(params.value(REPETITION, 0)) for params, _ in pts})
        if reps is not None:
            bars.append(reps)
    return bars


def error_bars_json(bars: list[ErrorBar] | tuple[ErrorBar, ...]) -> str:
    """The bars as data (a first-class result, beside the plot): schema vswbench.error-bars v1."""
    return json.dumps({"schema": "vswbench.error-bars", "version": 1,
                       "bars": [asdict(b) for b in bars]}, indent=1, sort_keys=True) + "\n"


def error_bars_csv(bars: list[ErrorBar] | tuple[ErrorBar, ...]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = [f.name for f in fields(ErrorBar)]
    writer.writerow(names)
    for b in bars:
        writer.writerow([getattr(b, n) for n in names])
    return buf.getvalue()
