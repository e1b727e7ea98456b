"""The "rule-update" section: time to install and remove rules, and forwarding during the
updates (Fang et al.'s section 3.5; report/functions.py). The rows are ReportModel.rule_updates."""

from __future__ import annotations

from vswbench.report.figure import Colours
from vswbench.report.functions import RULE_UPDATE_EMPTY
from vswbench.report.functions import RULE_UPDATE_INTRO
from vswbench.report.functions import rule_update_plot
from vswbench.report.functions import rule_update_tables
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


class RuleUpdate(Section):
    id = "rule-update"
    title = "Rule-update time and forwarding during updates"

    def intro(self, model: ReportModel) -> str:
        return RULE_UPDATE_INTRO

    def empty(self, model: ReportModel) -> str:
        return RULE_UPDATE_EMPTY

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("rule-update", "Rule-update time",
               rule_update_plot(model.rule_updates[0], colours))

    def tables(self, model: ReportModel) -> str:
        return rule_update_tables(*model.rule_updates)


SECTION = RuleUpdate()
