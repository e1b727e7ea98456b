"""The "table-size" section: throughput against the size of the switch's table (Fang et al.'s
Fig. 5/6; report/functions.py)."""

from __future__ import annotations

from vswbench.report.figure import Colours
from vswbench.report.functions import TABLE_SIZE_EMPTY
from vswbench.report.functions import TABLE_SIZE_INTRO
from vswbench.report.functions import table_size_plot
from vswbench.report.functions import table_size_points
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


class TableSize(Section):
    id = "table-size"
    title = "Throughput vs table size (l3 prefixes, acl rules)"

    def intro(self, model: ReportModel) -> str:
        return TABLE_SIZE_INTRO

    def empty(self, model: ReportModel) -> str:
        return TABLE_SIZE_EMPTY

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("table-size", "Throughput vs table size",
               table_size_plot(table_size_points(model.data), colours))


SECTION = TableSize()
