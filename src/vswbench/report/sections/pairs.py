"""The "pairs" section: aggregate throughput of the pairs:N scenarios against N."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.data import PAIRS_RE
from vswbench.report.data import PairsPoint
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


def pairs_plot(points: Sequence[PairsPoint], colours: Colours) -> Figure | None:
    if not points:
        return None
    series: dict[tuple[str, str, str, str], list[PairsPoint]] = defaultdict(list)
    for q in points:
        series[(q.metric, q.switch, str(q.size), q.variant)].append(q)
    fig, (ax,) = new_figure()
    for i, ((metric, sw, size, variant), pts) in enumerate(sorted(series.items())):
        pts.sort(key=lambda q: q.pairs)
        label = " ".join(x for x in (sw, f"{size} B" if size.isdigit() else size, variant,
                                     metric) if x)
        ax.plot([q.pairs for q in pts], [q.throughput_pps for q in pts], marker=colours.marker(sw),
                color=colours(sw), linestyle=LINESTYLES[i % len(LINESTYLES)], label=label)
    ax.set_xticks(sorted({q.pairs for q in points}))
    ax.yaxis.set_major_formatter(PPS)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("container pairs N (scenario pairs:N)")
    ax.set_ylabel("aggregate throughput (packets/s)")
    ax.set_title("Scalability with the number of pairs")
    place_legend(ax, len(series))
    return fig


class Pairs(Section):
    id = "pairs"
    title = "Scalability with pairs"

    def empty(self, model: ReportModel) -> str:
        pairs_seen = any(PAIRS_RE.fullmatch(r.params.scenario or "")
                         for r in model.data.all_records())
        return ("no pairs:N scenario in this campaign"
                if not pairs_seen else "no throughput measured for the pairs:N points")

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("pairs", "Scalability with pairs", pairs_plot(model.pairs, colours))


SECTION = Pairs()
