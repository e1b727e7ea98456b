"""The "cloning" section: throughput against the number of output ports a frame is copied to
(Emmerich et al.'s Fig. 7; report/studies.py)."""

from __future__ import annotations

from vswbench.report.figure import Colours
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.report.studies import CLONING_EMPTY
from vswbench.report.studies import CLONING_INTRO
from vswbench.report.studies import cloning_plot
from vswbench.report.studies import cloning_points


class Cloning(Section):
    id = "cloning"
    title = "Cloning: throughput vs output ports"

    def intro(self, model: ReportModel) -> str:
        return CLONING_INTRO

    def empty(self, model: ReportModel) -> str:
        return CLONING_EMPTY

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("cloning", "Throughput vs output ports (cloning)",
               cloning_plot(cloning_points(model.data), colours))


SECTION = Cloning()
