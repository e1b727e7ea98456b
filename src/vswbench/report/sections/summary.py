"""The "summary" section, the report's first screen: the machine, the preset, a verdict line per
frame size and stack, and the sections left out for want of data (first_screen.py)."""

from __future__ import annotations

from collections.abc import Sequence

from vswbench.report.figure import Plot
from vswbench.report.first_screen import summary_section
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Section


class Summary(Section):
    id = "summary"
    title = "At a glance"
    always_shown = True

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        return summary_section(model.machines, model.presets, model.verdicts, left_out)


SECTION = Summary()
