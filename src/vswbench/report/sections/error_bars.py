"""The "error-bars" section: per switch and varied parameter the spread of throughput over the
workload space (spread.py), and Fang et al.'s whole-product bars (product_bars.py)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.model import ReportModel
from vswbench.report.product_bars import product_bar_plot
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.report.spread import ErrorBar


def error_bar_plot(bars: Sequence[ErrorBar], colours: Colours) -> Figure | None:
    if not bars:
        return None
    metrics = sorted({b.metric for b in bars})
    order = ("size", "flows", "burst", "rate", "churn", "repetition")
    categories = sorted({(b.parameter, b.metric) for b in bars},
                        key=lambda c: (order.index(c[0]) if c[0] in order else 99, c[1]))
    switches = sorted({b.switch for b in bars})
    fig, (ax,) = new_figure()
    width = 0.8 / max(1, len(switches))
    for k, sw in enumerate(switches):
        xs, lows, highs = [], [], []
        for i, cat in enumerate(categories):
            for b in bars:
                if b.switch == sw and (b.parameter, b.metric) == cat:
                    xs.append(i - 0.4 + width * (k + 0.5))
                    lows.append(1 - b.low)
                    highs.append(b.high - 1)
        if xs:
            ax.errorbar(xs, [1.0] * len(xs), yerr=[lows, highs], fmt=colours.marker(sw), capsize=4,
                        color=colours(sw), label=sw)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([p if len(metrics) == 1 else f"{p}\n({m})" for p, m in categories])
    ax.set_xlim(-0.6, len(categories) - 0.4)
    ax.set_xlabel("varied parameter (others fixed)")
    ax.set_ylabel("throughput / median (ratio)")
    metric = metrics[0] if len(metrics) == 1 else "throughput"
    ax.set_title(f"Parameter error bars: {metric} min and max over the workload space")
    place_legend(ax, len(switches))
    return fig


class ErrorBars(Section):
    id = "error-bars"
    title = "Parameter error bars over the workload space"

    def intro(self, model: ReportModel) -> str:
        return ("Per switch and varied parameter, with everything else fixed: the "
                "minimum and maximum throughput divided by the median. The "
                "whole-product bars (Fang et al., Fig. 7) take, per switch and "
                "function, every point of the Cartesian product of the workload "
                "parameters at once: the median throughput over all of them, "
                "whiskers at their minimum and maximum, divided by the median "
                "(written under each bar in kpps); also in "
                "product_error_bars.csv/.json.")

    def empty(self, model: ReportModel) -> str:
        return "no parameter was varied in this campaign"

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("error-bars", "Parameter error bars", error_bar_plot(model.error_bars, colours))
        yield ("product-error-bars", "Whole-product error bars (Fang Fig. 7)",
               product_bar_plot(model.product_bars, colours))


SECTION = ErrorBars()
