"""The "warnings" section: every warning a reader must see before trusting a number
(report/notes.py), counted by kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape

from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.notes import ReportWarning
from vswbench.report.sections.base import Section
from vswbench.report.sections.base import empty_note as _empty


def warnings_section(warnings: Sequence[ReportWarning]) -> str:
    if not warnings:
        return _empty("no warnings")
    counts = Counter(w.category for w in warnings)
    summary = ", ".join(f"{n} {escape(c)}" for c, n in counts.items())
    rows = "".join(f'<tr><td class="cat-{escape(w.category.replace(" ", "-"))}">'
                   f"{escape(w.category)}</td><td>{escape(w.subject)}</td>"
                   f"<td>{escape(w.message)}</td></tr>" for w in warnings)
    return (f"<p>{summary}.</p><table><thead><tr><th>kind</th><th>what</th><th>warning</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


class Warnings(Section):
    id = "warnings"
    title = "Warnings"

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        return warnings_section(model.warnings)


SECTION = Warnings()
