"""The "cycles" section: CPU cycles per packet near the NDR, per switch and setup."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.data import RankingRow
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import spans_decades
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.results.points import size_order


def cycles_plot(rows: Sequence[RankingRow], colours: Colours) -> Figure | None:
    have = [r for r in rows if r.cycles_per_packet is not None]
    if not have:
        return None
    groups = sorted({(r.setup.scenario, r.setup.size, r.setup.variant) for r in have},
                    key=lambda g: (g[0], size_order(g[1]), g[2]))
    switches = sorted({r.setup.switch for r in have})
    fig, (ax,) = new_figure()
    width = 0.8 / len(switches)
    for k, sw in enumerate(switches):
        xs, ys = [], []
        for i, g in enumerate(groups):
            for r in have:
                if r.setup.switch == sw and (r.setup.scenario, r.setup.size, r.setup.variant) == g:
                    xs.append(i - 0.4 + width * (k + 0.5))
                    ys.append(r.cycles_per_packet or 0.0)   # have: not None
        ax.bar(xs, ys, width=width, color=colours(sw), label=sw)
        ax.plot(xs, ys, linestyle="none", marker=colours.marker(sw), color="black",
                markerfacecolor=colours(sw), markersize=5)
    if spans_decades([r.cycles_per_packet or 0.0 for r in have]):
        ax.set_yscale("log")
        ax.set_ylabel("CPU cycles per packet (log scale)")
    else:
        ax.set_ylabel("CPU cycles per packet")
    one_scenario = len({g[0] for g in groups}) == 1
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([(f"{s} B" if isinstance(s, int) else str(s))
                        + ("" if one_scenario else f"\n{sc}") + (f"\n{v}" if v else "")
                        for sc, s, v in groups])
    ax.set_xlabel("frame size (bytes)" + ("" if one_scenario else " and scenario"))
    ax.set_title("CPU cost near the NDR (cycles per packet)")
    place_legend(ax, len(switches))
    return fig


class Cycles(Section):
    id = "cycles"
    title = "Cycles per packet"

    def empty(self, model: ReportModel) -> str:
        return "no cycles per packet in this campaign"

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("cycles", "Cycles per packet", cycles_plot(model.ranking, colours))


SECTION = Cycles()
