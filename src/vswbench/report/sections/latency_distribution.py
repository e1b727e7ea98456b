"""The "latency-distribution" section: latency histograms and ECDFs of the latency points, one
figure per scenario, frame size and variant."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.data import ecdf
from vswbench.report.data import rebin_log
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import slug
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.results.points import size_order
from vswbench.results.series import LoadSeries


def _load_name(series: LoadSeries, fraction: float | None, offered: float | None) -> str:
    at = (f"{fraction * 100:g} % NDR" if fraction is not None
          else f"{PPS(offered)}pps" if offered is not None else "a load not recorded")
    rep = f" #{series.repetition + 1}" if series.repetition else ""
    return f"{series.setup.switch}{rep} at {at}"


def latency_distribution(group: Sequence[LoadSeries], colours: Colours,
                         title: str) -> Figure | None:
    """Histogram (log-spaced bins, fraction of packets per bin) and ECDF (step curve) of every
    measured load of the given latency series, on log latency axes."""
    fig, (hist_ax, cdf_ax) = new_figure(wide=True, ncols=2)
    drawn = 0
    for s in group:
        for j, lp in enumerate(s.loads):
            if not lp.histogram:
                continue
            style = LINESTYLES[j % len(LINESTYLES)]
            name = _load_name(s, lp.fraction_of_ndr, lp.offered_pps)
            edges, fractions = rebin_log(lp.histogram)
            hist_ax.stairs(fractions, edges, color=colours(s.setup.switch), linestyle=style,
                           label=name)
            steps = [(x, y) for x, y in zip(*ecdf(lp.histogram)) if x > 0]   # log axis
            cdf_ax.step([x for x, _ in steps], [y for _, y in steps], where="post",
                        color=colours(s.setup.switch), linestyle=style, label=name)
            drawn += 1
    if not drawn:
        return None
    for ax in (hist_ax, cdf_ax):
        ax.set_xscale("log")
        ax.set_xlabel("latency (µs, log scale)")
    hist_ax.set_ylabel("fraction of packets per bin")
    hist_ax.set_title("Histogram")
    cdf_ax.set_ylabel("cumulative fraction of packets")
    cdf_ax.set_ylim(0, 1.02)
    cdf_ax.set_title("ECDF")
    fig.suptitle(title)
    place_legend(cdf_ax, drawn)
    return fig


def _latency_dist_empty(latencies: Sequence[LoadSeries]) -> str:
    if not latencies:
        return "no latency point in this campaign"
    return "no latency histogram recorded in the latency points"


class LatencyDistribution(Section):
    id = "latency-distribution"
    title = "Latency histograms and ECDFs"

    def intro(self, model: ReportModel) -> str:
        return ("Histograms regroup the engine's log-linear buckets into "
                "20 bins per decade; ECDFs step at each bucket's upper "
                "edge.")

    def empty(self, model: ReportModel) -> str:
        return _latency_dist_empty(model.latencies)

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        groups: dict[tuple[str, tuple[float, str], str], list[LoadSeries]] = defaultdict(list)
        for s in model.latencies:
            groups[(s.setup.scenario, size_order(s.setup.size), s.setup.variant)].append(s)
        for (scenario, _, variant), group in sorted(groups.items()):
            what = " ".join(x for x in (scenario, group[0].setup.size_label, variant) if x)
            yield (f"latency-dist-{slug(what)}", f"Latency distribution: {what}",
                   latency_distribution(group, colours, f"Latency distribution: {what}"))


SECTION = LatencyDistribution()
