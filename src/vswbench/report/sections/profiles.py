"""The "profiles" section: where the cycles go, from perf profiles per core (report/profiles.py:
the category bars, a flame graph per core, the CPU check and the top functions). The profiled
points are ReportModel.profiled."""

from __future__ import annotations

from vswbench.report.figure import Colours
from vswbench.report.model import ReportModel
from vswbench.report.profiles import INTRO
from vswbench.report.profiles import cpu_check_table
from vswbench.report.profiles import profile_figures
from vswbench.report.profiles import top_functions_table
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


class Profiles(Section):
    id = "profiles"
    title = "Where the cycles go: perf profiles per core"

    def intro(self, model: ReportModel) -> str:
        return INTRO if model.profiled else ""

    def empty(self, model: ReportModel) -> str:
        return ("no profiled point in this campaign "
                "(vswbench trial|search --profile, or profile = true "
                "in a spec)")

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        return profile_figures(model.profiled)

    def tables(self, model: ReportModel) -> str:
        return cpu_check_table(model.profiled) + top_functions_table(model.profiled)


SECTION = Profiles()
