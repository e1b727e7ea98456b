"""The "flow-count" section: throughput against the number of flows of one setup (Emmerich et
al.'s Fig. 6; report/studies.py)."""

from __future__ import annotations

from vswbench.report.figure import Colours
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.report.studies import FLOW_COUNT_EMPTY
from vswbench.report.studies import FLOW_COUNT_INTRO
from vswbench.report.studies import flow_count_plot
from vswbench.report.studies import flow_count_points


class FlowCount(Section):
    id = "flow-count"
    title = "Throughput vs number of flows"

    def intro(self, model: ReportModel) -> str:
        return FLOW_COUNT_INTRO

    def empty(self, model: ReportModel) -> str:
        return FLOW_COUNT_EMPTY

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("flow-count", "Throughput vs number of flows",
               flow_count_plot(flow_count_points(model.data), colours))


SECTION = FlowCount()
