"""The "diagnostics" section: drops per chain element, interrupts against latency, the fitted
cost parts of a chain and NDR pinned vs unpinned (report/diagnostics.py)."""

from __future__ import annotations

from vswbench.report.diagnostics import INTRO
from vswbench.report.diagnostics import diagnostic_figures
from vswbench.report.figure import Colours
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


class Diagnostics(Section):
    id = "diagnostics"
    title = "Diagnostics: drops per chain element, interrupts vs latency, placement"

    def intro(self, model: ReportModel) -> str:
        return INTRO

    def empty(self, model: ReportModel) -> str:
        return ("no chain drops, interrupt rates or "
                "pinned-vs-unpinned pairs in this campaign")

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        return diagnostic_figures(model, colours)


SECTION = Diagnostics()
