"""The report's figures, rendered to PNG and SVG bytes: each section (sections/) draws its own
(matplotlib, Agg canvas, no pyplot state), make_plots renders them in page order.

A section's figure is None when it has nothing to draw (the page then says so instead of showing
an empty plot). Output is deterministic: the same store gives byte-identical files (figure.py:
fixed SVG hash salt, no dates in the metadata).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from vswbench.report.figure import Colours
from vswbench.report.figure import Plot
from vswbench.report.figure import render
from vswbench.report.figure import report_style
from vswbench.report.model import ReportModel
from vswbench.report.sections import SECTIONS

__all__ = ["Plot", "make_plots"]


def make_plots(model: ReportModel) -> list[Plot]:
    """Every figure of the report, in page order, each rendered as soon as it is drawn."""
    colours = Colours(model.switches)
    plots: list[Plot] = []
    used: set[str] = set()

    def add(name: str, section: str, title: str, fig: Figure | None) -> None:
        if fig is None:
            return
        unique, n = name, 2
        while unique in used:
            unique, n = f"{name}-{n}", n + 1
        used.add(unique)
        png, svg = render(fig)
        plots.append(Plot(unique, section, title, png, svg))

    with report_style():
        for section in SECTIONS:
            for name, title, fig in section.figures(model, colours):
                add(name, section.id, title, fig)
    return plots
