"""What a report section is, and the HTML pieces the sections share.

A Section is one part of the page, <section id=ID><h2>TITLE</h2>BODY</section>: its id and
title, the intro above its figures, the note it shows when it has no data, its figures (drawn
once by plots.make_plots, which renders each into a Plot tagged with the section's id) and its
body (the figures of this section, then its tables). A section whose body is its "no data" note
alone is left out of the page (is_empty) and named in the summary; the summary itself, shown
always, is drawn last, when the page knows what was left out.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from collections.abc import Sequence
from html import escape
from typing import ClassVar

from matplotlib.figure import Figure

from vswbench.report.figure import Colours
from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel

# (file stem in plots/, title, the figure or None when there is nothing to draw)
Figures = Iterable[tuple[str, str, Figure | None]]


class Section:
    """One section of the report; sections/__init__.py lists them in page order."""

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""          # the heading; the part before ":" names it in the nav
    always_shown: ClassVar[bool] = False   # on the page even with no data (the summary)

    @property
    def name(self) -> str:
        """The title up to its colon: the link in the nav, the name in the summary's list."""
        return self.title.split(":")[0]

    def intro(self, model: ReportModel) -> str:
        """HTML above the figures (shown only when the section has figures)."""
        return ""

    def empty(self, model: ReportModel) -> str:
        """What the section says when it has nothing to show."""
        return "no data in this campaign"

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        """The section's figures, in the order the page shows them."""
        return ()

    def tables(self, model: ReportModel) -> str:
        """HTML below the figures."""
        return ""

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        """The section's HTML: its rendered figures (`plots`, the section's own) with the intro,
        or the "no data" note, then its tables. `left_out`: the names of the sections the page
        leaves out, given only to sections shown always (they are drawn last)."""
        return plots_body(plots, self.empty(model), self.intro(model)) + self.tables(model)


def empty_note(text: str) -> str:
    return f'<p class="empty">{escape(text)}</p>'


def is_empty(body: str) -> bool:
    """A section whose whole body is its "no data" note: left out of the page."""
    return body.startswith('<p class="empty">') and body.count("<p") == 1 and body.endswith(
        "</p>")


def figure_html(plot: Plot) -> str:
    data = base64.b64encode(plot.png).decode("ascii")
    title = escape(plot.title)
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{title}">'
            f'<figcaption>{title} (files: <a href="plots/{escape(plot.name)}.png">PNG</a>, '
            f'<a href="plots/{escape(plot.name)}.svg">SVG</a>)</figcaption></figure>')


def table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def plots_body(plots: Sequence[Plot], empty: str, intro: str = "") -> str:
    """The section's figures under their intro, or its "no data" note when it has none."""
    if not plots:
        return empty_note(empty)
    return (f"<p>{intro}</p>" if intro else "") + "".join(figure_html(p) for p in plots)
