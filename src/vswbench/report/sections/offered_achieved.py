"""The "offered-achieved" section: achieved throughput against offered load, per load sweep."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.results.series import LoadSeries


def offered_vs_achieved(sweeps: Sequence[LoadSeries], colours: Colours) -> Figure | None:
    drawn = [s for s in sweeps if any(lp.achieved_pps is not None for lp in s.loads)]
    if not drawn:
        return None
    fig, (ax,) = new_figure()
    top = 0.0
    # the repetitions of one setup share its line style and one legend entry (a campaign with
    # 73 sweeps, three repetitions each, had collapsed the axes under the legend)
    style = {setup: i for i, setup in enumerate(dict.fromkeys(s.setup for s in drawn))}
    unlabelled = set(style)
    for s in drawn:
        # a load without its offered rate (never stored so) stopped max() below before
        pts = [(lp.offered_pps, lp.achieved_pps) for lp in s.loads
               if lp.achieved_pps is not None and lp.offered_pps is not None]
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker=colours.marker(s.setup.switch),
                markersize=4, color=colours(s.setup.switch),
                linestyle=LINESTYLES[style[s.setup] % len(LINESTYLES)],
                label=s.setup.label if s.setup in unlabelled else "_nolegend_")
        unlabelled.discard(s.setup)
        top = max(top, *(x for x, _ in pts), *(y for _, y in pts))
    ax.plot([0, top], [0, top], color="grey", linestyle=":", linewidth=1,
            label="achieved = offered")
    ax.xaxis.set_major_formatter(PPS)
    ax.yaxis.set_major_formatter(PPS)
    ax.set_xlabel("offered load (packets/s)")
    ax.set_ylabel("achieved throughput (packets/s)")
    ax.set_title("Offered vs achieved load (load sweeps"
                 + (", every repetition)" if len(drawn) > len(style) else ")"))
    place_legend(ax, len(style) + 1)
    return fig


class OfferedAchieved(Section):
    id = "offered-achieved"
    title = "Offered vs achieved load"

    def intro(self, model: ReportModel) -> str:
        return ("Achieved throughput against offered load; the dotted "
                "diagonal is lossless forwarding.")

    def empty(self, model: ReportModel) -> str:
        return "no sweep in this campaign"

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("offered-achieved", "Offered vs achieved load",
               offered_vs_achieved(model.sweeps, colours))


SECTION = OfferedAchieved()
