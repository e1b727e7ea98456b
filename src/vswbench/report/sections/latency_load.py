"""The "latency-load" section: the latency percentiles against offered load, one figure per load
sweep."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import slug
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.results.series import LoadSeries

PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"))


def latency_vs_load(series: LoadSeries) -> Figure | None:
    fig, (ax,) = new_figure()
    drawn = 0
    for (key, name), style in zip(PERCENTILES, LINESTYLES):
        pts = [(lp.offered_pps, y) for lp in series.loads if lp.offered_pps is not None
               and (y := getattr(lp.latency, key, None)) is not None and y > 0]
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker=".", linestyle=style,
                    label=name)
            drawn += 1
    if not drawn:
        return None
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(PPS)
    ax.set_xlabel("offered load (packets/s)")
    ax.set_ylabel("latency (µs, log scale)")
    ax.set_title(f"Latency percentiles vs offered load: {series.label}")
    place_legend(ax, drawn)
    return fig


def _latency_load_empty(sweeps: Sequence[LoadSeries]) -> str:
    return "no sweep in this campaign" if not sweeps else "no latency recorded in the sweeps"


class LatencyLoad(Section):
    id = "latency-load"
    title = "Latency percentiles vs offered load"

    def empty(self, model: ReportModel) -> str:
        return _latency_load_empty(model.sweeps)

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        for s in model.sweeps:
            yield (f"latency-load-{slug(s.label)}", f"Latency percentiles vs load: {s.label}",
                   latency_vs_load(s))


SECTION = LatencyLoad()
