"""The "delay-model" section: Sattar and Matrawy's empirical delay model, an ECDF figure per
scenario and frame size (and per switch's load sweep), then the conditions and their KS distances
(report/delay.py). The models are ReportModel.delay_models."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vswbench.models.delay import DelayModel
from vswbench.report.delay import delay_empty
from vswbench.report.delay import delay_tables
from vswbench.report.figure import DPI
from vswbench.report.figure import FIGSIZE_WIDE
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import Colours
from vswbench.report.figure import place_legend
from vswbench.report.figure import slug
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section


def delay_ecdf_plot(models: Sequence[DelayModel], colours: Colours,
                    numbers: Sequence[int] | None = None, what: str = "") -> Figure | None:
    """The piecewise-linear CDF of every condition's delay model (report/delay.py), on a log
    latency axis; C1..Cn as in the section's tables (`numbers`: each model's n)."""
    if not models:
        return None
    numbers = list(numbers) if numbers is not None else list(range(1, len(models) + 1))
    below = len(models) > 8          # a long legend goes under the axes, the figure grows for it
    rows = (len(models) + 1) // 2 if below else 0
    fig = Figure(figsize=(FIGSIZE_WIDE[0], FIGSIZE_WIDE[1] + 0.22 * rows), dpi=DPI,
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots(1, 1)
    for i, (n, m) in enumerate(zip(numbers, models)):
        xs = sorted({*m.low_us, *m.high_us})
        ax.plot(xs, m.cdf(xs), color=colours(m.condition.switch),
                linestyle=LINESTYLES[i % len(LINESTYLES)], linewidth=1.2,
                label=f"C{n} {m.condition.label}")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("latency (µs, log scale)")
    ax.set_ylabel("cumulative fraction of packets")
    ax.set_title("Empirical delay model: ECDF per condition" + (f", {what}" if what else ""))
    if below:
        fig.legend(loc="outside lower center", ncols=2, fontsize="small")
    else:
        place_legend(ax, len(models))
    return fig


def delay_groups(models: Sequence[DelayModel]) -> list[tuple[str, list[int], list[DelayModel]]]:
    """One plot per scenario and frame size, and one per switch's load sweep (a suite has a
    hundred conditions: one legend that long leaves no room for the axes); each model keeps its
    number C<n> of the section's table."""
    groups: dict[tuple[str, str, str], tuple[list[int], list[DelayModel]]] = {}
    for n, m in enumerate(models, start=1):
        key = (m.condition.scenario, str(m.condition.frame_size),
               m.condition.switch if m.condition.kind == "sweep" else "")
        groups.setdefault(key, ([], []))
        groups[key][0].append(n)
        groups[key][1].append(m)
    out = []
    for (scenario, size, sweep_of), (numbers, group) in groups.items():
        size_label = size if size == "imix" else f"{size} B"
        what = f"{scenario} {size_label}" + (f", {sweep_of} load sweep" if sweep_of else "")
        out.append((what, numbers, group))
    return out


class DelayModelSection(Section):
    id = "delay-model"
    title = "Empirical delay model: ECDF per condition, KS distances"

    def intro(self, model: ReportModel) -> str:
        return ("The empirical delay model of Sattar and Matrawy: per condition "
                "(switch, scenario, frame size, load), the relative frequency of "
                "each latency and their cumulative sum (ECDF).")

    def empty(self, model: ReportModel) -> str:
        return delay_empty(model)

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        delay = model.delay_models
        for what, numbers, models in delay_groups(delay):
            yield ("delay-model" + ("" if len(delay) == len(models) else f"-{slug(what)}"),
                   f"Empirical delay model: ECDF per condition, {what}",
                   delay_ecdf_plot(models, colours, numbers, what))

    def tables(self, model: ReportModel) -> str:
        return delay_tables(model)


SECTION = DelayModelSection()
