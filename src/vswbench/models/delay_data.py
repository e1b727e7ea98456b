"""Delay models (models/delay.py) of every condition in a results store, their KS matrix, and
the files `vswbench model delay` writes.

A condition is one measured load of one setup: each fraction of the NDR of a latency point, each
offered load of a sweep, and (on request) each trial, whenever it kept a histogram. Repetitions of
the same condition are pooled by default (their histograms added: the paper repeats each
experiment and builds one ECDF from all of it); `pool=False` keeps one model per repetition,
which is what to compare when asking whether repetitions agree.

The store is read with the loaders the report uses too (results/points.py and results/series.py:
load, setup_of, load_series, parse_histogram), so the report and the CLI see exactly the same
conditions.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.models.delay import ALPHA
from vswbench.models.delay import DelayCondition
from vswbench.models.delay import DelayModel
from vswbench.models.delay import dumps
from vswbench.models.delay import ks_critical
from vswbench.results.points import Setup
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.points import size_order
from vswbench.results.series import LoadSeries
from vswbench.results.series import load_series
from vswbench.safefile import check_output_dir
from vswbench.safefile import write_text

KINDS = ("latency", "sweep", "trial")
DEFAULT_KINDS = ("latency", "sweep")
INDEX_NAME = "index.json"
KS_NAME = "ks_matrix.csv"


def _condition(setup: Setup, kind: str, offered: float | None, fraction: float | None,
               repetition: int | None, repetitions: int = 1) -> DelayCondition:
    return DelayCondition(setup.switch, setup.scenario, setup.size, setup.variant, kind, offered,
                          fraction, repetition, repetitions)


def _trial_series(data: StoredResults) -> list[tuple[Setup, int, float | None, tuple[Any, ...]]]:
    out = []
    for p in data.records("trial"):
        own = p.measured.own
        hist = own.histogram if own is not None else ()
        if hist:
            out.append((p.setup, p.repetition, own.offered_pps if own else None, hist))
    return out


def models_from_series(series: Iterable[LoadSeries], *, pool: bool = True,
                       trials: Iterable[tuple[Setup, int, float | None, tuple[Any, ...]]] = ()
                       ) -> list[DelayModel]:
    """One model per condition of the given latency/sweep series (and trial tuples), sorted by
    scenario, size, switch, variant, kind, load. A latency condition is keyed by its fraction of
    the NDR (the NDR, hence the offered rate, differs between repetitions), a sweep's or trial's
    by its offered load."""
    groups: dict[tuple[Any, ...], list[tuple[int, float | None, tuple[Any, ...]]]] = \
        defaultdict(list)
    for s in series:
        for lp in s.loads:
            if not lp.histogram:
                continue
            by_fraction = s.kind == "latency" and lp.fraction_of_ndr is not None
            pps = None if lp.offered_pps is None else round(lp.offered_pps, 1)
            at = ("f", lp.fraction_of_ndr) if by_fraction else ("pps", pps)
            key = (s.setup, s.kind, at, None if pool else s.repetition)
            groups[key].append((s.repetition, lp.offered_pps, lp.histogram))
    for setup, rep, offered, hist in trials:
        at = ("pps", None if offered is None else round(offered, 1))
        groups[(setup, "trial", at, None if pool else rep)].append((rep, offered, hist))
    models = []
    for (setup, kind, at, rep), members in groups.items():
        loads = [o for _, o, _ in members if o is not None]
        cond = _condition(setup, kind, statistics.median(loads) if loads else None,
                          at[1] if at[0] == "f" else None, rep,
                          len({r for r, _, _ in members}))
        models.append(DelayModel.from_histogram([b for _, _, h in members for b in h], cond))
    return sorted(models, key=_order)


def _order(m: DelayModel) -> tuple[Any, ...]:
    c = m.condition
    return (c.scenario, size_order(c.frame_size), c.switch, c.variant, KINDS.index(c.kind),
            c.fraction_of_ndr or 0.0, c.offered_pps or 0.0, c.repetition or 0)


def models_from_input(data: StoredResults, kinds: Sequence[str] = DEFAULT_KINDS, *,
                      pool: bool = True) -> list[DelayModel]:
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UsageError(f"point kind(s) {', '.join(bad)}: the delay model reads "
                         f"{', '.join(KINDS)}")
    series = [s for k in ("latency", "sweep") if k in kinds for s in load_series(data, k)]
    trials = _trial_series(data) if "trial" in kinds else []
    return models_from_series(series, pool=pool, trials=trials)


def load_models(results: str | Path, kinds: Sequence[str] = DEFAULT_KINDS, *,
                pool: bool = True, campaign: str | None = None) -> list[DelayModel]:
    """Every condition's model in a results directory (or store file). No latency histogram in
    it is a UsageError saying which kinds were looked for and how to get some."""
    data = load(results, campaign)
    models = models_from_input(data, kinds, pool=pool)
    if not models:
        found = ", ".join(sorted({p.kind for p in data.done()})) or "none"
        raise UsageError(f"no latency histogram in the {'/'.join(kinds)} points of "
                         f"{data.store_path} (finished point kinds there: {found}): run a "
                         "campaign with kind = \"latency\" or \"sweep\" (or pass --kind trial "
                         "if it has trials)")
    return models


# -- comparisons -------------------------------------------------------------------------------
@dataclass(frozen=True)
class KsMatrix:
    """KS distance between every pair of conditions, and the two-sample critical value of each
    pair at `alpha` (a guide only: samples within a trial are not independent)."""
    labels: tuple[str, ...]
    samples: tuple[int, ...]
    distances: tuple[tuple[float, ...], ...]
    alpha: float = ALPHA

    def critical(self, i: int, j: int) -> float:
        return ks_critical(self.samples[i], self.samples[j], self.alpha)

    def exceeds(self, i: int, j: int) -> bool:
        return i != j and self.distances[i][j] > self.critical(i, j)

    def to_json(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "labels": list(self.labels), "samples": list(self.samples),
                "distances": [list(row) for row in self.distances],
                "exceeds_critical": [[self.exceeds(i, j) for j in range(len(self.labels))]
                                     for i in range(len(self.labels))]}


def ks_matrix(models: Sequence[DelayModel], alpha: float = ALPHA) -> KsMatrix:
    n = len(models)
    d = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            d[i][j] = d[j][i] = models[i].ks(models[j])
    return KsMatrix(tuple(m.condition.label for m in models), tuple(m.samples for m in models),
                    tuple(tuple(row) for row in d), alpha)


# -- files -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WrittenModel:
    model: DelayModel
    json_path: Path
    csv_path: Path

    def summary(self) -> dict[str, Any]:
        p50, p99, p999 = self.model.quantile([0.5, 0.99, 0.999]).tolist()
        return {"label": self.model.condition.label, "condition": self.model.condition.to_json(),
                "samples": self.model.samples, "p50_us": round(p50, 4), "p99_us": round(p99, 4),
                "p999_us": round(p999, 4), "json": self.json_path.name,
                "quantiles_csv": self.csv_path.name}


def file_stem(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower().replace("%", "pct")).strip("-") or "condition"


def _write(path: Path, text: str) -> None:
    """Beside, then rename (safefile): a simulator reading the directory never sees half a
    file."""
    write_text(path, text)


def write_models(models: Sequence[DelayModel], out_dir: str | Path
                 ) -> tuple[list[WrittenModel], KsMatrix]:
    """Per condition STEM.json (the ECDF) and STEM.quantiles.csv; index.json (conditions,
    summaries, KS matrix) and ks_matrix.csv."""
    out = Path(out_dir)
    check_output_dir(out, "--out")
    written, used = [], set()
    for m in models:
        stem, n = file_stem(m.condition.label), 2
        while stem in used:
            stem, n = f"{file_stem(m.condition.label)}-{n}", n + 1
        used.add(stem)
        w = WrittenModel(m, out / f"{stem}.json", out / f"{stem}.quantiles.csv")
        _write(w.json_path, dumps(m.to_json()))
        _write(w.csv_path, m.to_csv())
        written.append(w)
    matrix = ks_matrix(models)
    _write(out / INDEX_NAME, dumps(index_json(written, matrix)))
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["condition", *matrix.labels])
    writer.writerows([label, *(f"{v:.6f}" for v in row)]
                     for label, row in zip(matrix.labels, matrix.distances))
    _write(out / KS_NAME, table.getvalue())
    return written, matrix


def index_json(written: Sequence[WrittenModel], matrix: KsMatrix) -> dict[str, Any]:
    return {"schema": "vswbench.delay-model-index", "version": 1,
            "conditions": [w.summary() for w in written], "ks": matrix.to_json()}
