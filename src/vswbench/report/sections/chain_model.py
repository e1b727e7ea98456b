"""The "chain-model" section: Raumer et al.'s chain cost model fitted to the chain:N points
(report/chain.py), its figures and tables. The fit is ReportModel.chain."""

from __future__ import annotations

from vswbench.report.chain import INTRO
from vswbench.report.chain import chain_empty
from vswbench.report.chain import chain_figures
from vswbench.report.chain import chain_tables
from vswbench.report.figure import Colours
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


class ChainModel(Section):
    id = "chain-model"
    title = "Chain cost model: throughput over chain length and placement"

    def intro(self, model: ReportModel) -> str:
        return INTRO

    def empty(self, model: ReportModel) -> str:
        return chain_empty(model.chain)

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        return chain_figures(model.chain)

    def tables(self, model: ReportModel) -> str:
        return chain_tables(model.chain)


SECTION = ChainModel()
