"""The "ranking" section: one table per frame size and stack, with the baselines and the tester's
ceiling as reference rows (ranking_html.ranking_tables)."""

from __future__ import annotations

from collections.abc import Sequence

from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.ranking_html import ranking_tables
from vswbench.report.sections.base import Section


class Ranking(Section):
    id = "ranking"
    title = "Ranking per frame size and stack: throughput, latency at 90 % of it, CPU cost"

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        return ranking_tables(model.verdicts)


SECTION = Ranking()
