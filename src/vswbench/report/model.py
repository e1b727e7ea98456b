"""Everything the page and the plots show, extracted once from a store.

What several sections use is computed here once: eagerly what the ranking, the first screen and
the exports need (build_model), lazily (cached properties, first read computes) what only some
sections draw: the chain model (chain-model, diagnostics), the delay models (delay-model: its
figures and its tables), the profiled points (profiles, the folded stacks) and the rule-update rows
(rule-update: its figure and its tables).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from vswbench.errors import UsageError
from vswbench.models.delay import DelayModel
from vswbench.models.delay_data import models_from_series
from vswbench.report.backends import BackendInfo
from vswbench.report.backends import backend_infos
from vswbench.report.chain import ChainSection
from vswbench.report.chain import chain_analyses
from vswbench.report.data import PairsPoint
from vswbench.report.data import RankingRow
from vswbench.report.data import pairs_points
from vswbench.report.data import ranking
from vswbench.report.functions import DuringRow
from vswbench.report.functions import UpdateRow
from vswbench.report.functions import rule_update_rows
from vswbench.report.notes import ReportWarning
from vswbench.report.notes import RunInfo
from vswbench.report.notes import run_infos
from vswbench.report.notes import warnings
from vswbench.report.product_bars import ProductBar
from vswbench.report.product_bars import product_bars
from vswbench.report.profiles import ProfiledPoint
from vswbench.report.profiles import profiled_points
from vswbench.report.spread import ErrorBar
from vswbench.report.spread import error_bars
from vswbench.report.stalls import stall_sentences
from vswbench.report.summary import MachineSummary
from vswbench.report.summary import machine_summaries
from vswbench.report.summary import preset_sentences
from vswbench.report.verdict import Verdict
from vswbench.report.verdict import verdicts
from vswbench.results.points import StoredResults
from vswbench.results.series import LoadSeries
from vswbench.results.series import load_series
from vswbench.units import DEFAULT_LINK_BPS


@dataclass(frozen=True)
class ReportModel:
    data: StoredResults
    link_bps: float
    ranking: tuple[RankingRow, ...]
    sweeps: tuple[LoadSeries, ...]
    latencies: tuple[LoadSeries, ...]
    error_bars: tuple[ErrorBar, ...]
    pairs: tuple[PairsPoint, ...]
    runs: tuple[RunInfo, ...]
    warnings: tuple[ReportWarning, ...]
    backends: dict[str, BackendInfo]
    verdicts: tuple[Verdict, ...]
    machines: tuple[MachineSummary, ...]
    presets: tuple[str, ...]
    product_bars: tuple[ProductBar, ...] = ()     # Fang's Fig. 7 over the whole product

    @cached_property
    def switches(self) -> tuple[str, ...]:
        """Every switch named by a point, sorted: the order of the plots' colours."""
        names = {r.params.switch for r in self.data.all_records() if r.params.switch}
        return tuple(sorted(names))

    @cached_property
    def chain(self) -> ChainSection:
        """Raumer's chain cost model fitted to the store's chain:N points (report/chain.py)."""
        return chain_analyses(self.data)

    @cached_property
    def delay_models(self) -> tuple[DelayModel, ...]:
        """One model per condition, in the CLI's order."""
        return tuple(models_from_series([*self.latencies, *self.sweeps]))

    @cached_property
    def profiled(self) -> tuple[ProfiledPoint, ...]:
        """Every done point with a profile (report/profiles.py)."""
        return tuple(profiled_points(self.data))

    @cached_property
    def rule_updates(self) -> tuple[list[UpdateRow], list[DuringRow]]:
        """The rule-update timings and the forwarding during the updates (report/functions.py)."""
        return rule_update_rows(self.data)


def build_model(data: StoredResults, link_bps: float = DEFAULT_LINK_BPS) -> ReportModel:
    if not link_bps > 0:
        raise UsageError(f"reference link speed {link_bps} bit/s: must be positive")
    rows = tuple(ranking(data))
    infos = backend_infos(data)
    runs = tuple(run_infos(data))
    return ReportModel(data, link_bps, rows, tuple(load_series(data, "sweep")),
                       tuple(load_series(data, "latency")), tuple(error_bars(data)),
                       tuple(pairs_points(data)), runs, tuple(warnings(data)), infos,
                       tuple(verdicts(rows, data, infos)), tuple(machine_summaries(runs)),
                       tuple(preset_sentences(data) + stall_sentences(data)),
                       tuple(product_bars(data)))
