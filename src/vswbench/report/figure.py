"""The report's figure toolkit: one style, colours per switch, legends placed clear of the data.

The sections (sections/), chain.py and studies.py draw with these; figures are matplotlib Figures
on an Agg canvas (no pyplot state) rendered to PNG and SVG bytes without dates, so the same store
gives the same files (fixed SVG hash salt); plots.py renders each into a Plot.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

FIGSIZE = (7.5, 4.2)                     # inches; at DPI 100 a 750 x 420 pixel PNG
FIGSIZE_WIDE = (10.0, 4.2)
LEGEND_BESIDE = 14                       # legend entries that fit beside the axes
LEGEND_ROW_INCHES = 0.2                  # height added per legend row under the axes
DPI = 100
RC: dict[RcKeyType, Any] = {"svg.hashsalt": "vswbench-report", "svg.fonttype": "path", "font.size": 9,
      "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 7, "legend.framealpha": 0.8}
# 14 colours and 14 markers: every switch of a report (12 backends today) gets its own pair
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#005f5f", "#b8860b", "#4b0082", "#ff1493")
SWITCH_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "8")
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
PPS = EngFormatter(sep="")               # 200k, 1.5M


@dataclass(frozen=True)
class Plot:
    name: str                            # file stem in plots/, unique within a report
    section: str                         # id of the page section it belongs to
    title: str
    png: bytes
    svg: bytes


@contextmanager
def report_style() -> Iterator[None]:
    with matplotlib.rc_context(RC):
        yield


def new_figure(wide: bool = False, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=FIGSIZE_WIDE if wide else FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def render(fig: Figure) -> tuple[bytes, bytes]:
    """(PNG, SVG) bytes of a figure, without timestamps."""
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=DPI, metadata={"Software": None})
    fig.set_layout_engine(None)          # the layout is done: the SVG reuses it, and with no
                                         # engine at all its savefig skips the dry-run draw
    fig.savefig(svg, format="svg", metadata={"Date": None})
    return png.getvalue(), svg.getvalue()


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "plot"


class Colours:
    """One colour and one marker per switch, the same in every plot of a report; up to 14
    switches no two share either (beyond, the pair of both stays distinct up to 14 x 14)."""

    def __init__(self, switches: Sequence[str]) -> None:
        names = sorted(set(switches))
        self.map = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(names)}
        self.markers = {s: SWITCH_MARKERS[(i + i // len(PALETTE)) % len(SWITCH_MARKERS)]
                        for i, s in enumerate(names)}

    def __call__(self, switch: str) -> str:
        return self.map.get(switch, "#333333")

    def marker(self, switch: str) -> str:
        return self.markers.get(switch, ".")


def spans_decades(values: Sequence[float], ratio: float = 10.0) -> bool:
    """True when the positive values span at least `ratio` (a log axis shows them all)."""
    pos = [v for v in values if v and v > 0]
    return bool(pos) and max(pos) / min(pos) >= ratio


def place_legend(ax: Axes, count: int) -> None:
    """Beside the axes, never over the data (constrained layout makes room for it); more than
    LEGEND_BESIDE entries go in two columns under the axes, the figure taller by their rows
    (beside the axes, two columns of long setup labels had left the axes no width at all: a
    chains campaign's 33 sweep setups)."""
    if not count:
        return
    if count <= LEGEND_BESIDE:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        return
    fig = ax.get_figure()
    if isinstance(fig, Figure):
        fig.set_figheight(fig.get_figheight() + LEGEND_ROW_INCHES * math.ceil(count / 2))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), borderaxespad=0.0, ncols=2,
              fontsize="small")
