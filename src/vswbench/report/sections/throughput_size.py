"""The "throughput-size" section: NDR per switch against frame size, with the line rate of the
reference link and the tester's ceiling per stack."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from vswbench.report.data import RankingRow
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import spans_decades
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.report.verdict import Verdict
from vswbench.results.points import size_order
from vswbench.units import line_rate_pps


def throughput_vs_size(rows: Sequence[RankingRow], colours: Colours, link_bps: float,
                       verdicts: Sequence[Verdict] = (),
                       baselines: frozenset[str] = frozenset()) -> Figure | None:
    """NDR per switch over a categorical frame-size axis (sizes in numeric order, IMIX last),
    the line rate of the reference link and the tester's ceiling of each stack; a log axis when
    the values span a decade or more."""
    series: Series = defaultdict(list)
    for r in rows:
        if r.ndr_pps and r.setup.size_bytes:
            series[(r.setup.switch, r.setup.scenario, r.setup.variant)].append(r)
    sizes = sorted({r.setup.size for pts in series.values() for r in pts}, key=size_order)
    if len(sizes) < 2:
        return None     # a column of dots: the ranking says it (and a chains campaign's 57
        #                 setups at 64 B made a legend that left the axes no room)
    x_of = {size: i for i, size in enumerate(sizes)}
    fig, (ax,) = new_figure()
    values, bound_shown = _switch_lines(ax, series, x_of, colours, baselines)
    ceilings = _ceilings(verdicts, x_of)
    values += _ceiling_lines(ax, ceilings, x_of)
    line = [(x_of[s], line_rate_pps(s, link_bps)) for s in sizes if isinstance(s, int)]
    if line:
        ax.plot([x for x, _ in line], [y for _, y in line], color="black", linestyle="--",
                linewidth=1, label=f"line rate {link_bps / 1e9:g} Gbit/s link")
    _y_axis(ax, values)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"{s} B" if isinstance(s, int) else str(s).upper() for s in sizes])
    ax.set_xlim(-0.4, len(sizes) - 0.6)
    ax.set_xlabel("frame size (FCS included; categories, not to scale)")
    ax.set_title("Throughput (NDR) vs frame size")
    place_legend(ax, len(series) + len(ceilings) + bool(line) + bound_shown)
    return fig


Series = dict[tuple[str, str, str], list[RankingRow]]


def _switch_lines(ax: Axes, series: Series, x_of: dict[int | str, int], colours: Colours,
                  baselines: frozenset[str]) -> tuple[list[float], bool]:
    """One line per setup, a ring on each generator-bound NDR: the values drawn, and whether a
    ring was."""
    scenarios = {k[1:] for k in series}
    styles = {s: LINESTYLES[i % len(LINESTYLES)] for i, s in enumerate(sorted(scenarios))}
    bound_shown = False
    values: list[float] = []
    for (switch, scenario, variant), pts in sorted(series.items()):
        pts.sort(key=lambda r: size_order(r.setup.size))
        ys = [r.ndr_pps or 0.0 for r in pts]
        values += ys
        label = switch if len(scenarios) == 1 else " ".join(x for x in (switch, scenario, variant)
                                                             if x)
        if switch in baselines:
            label += " (baseline, no switch)"
        ax.plot([x_of[r.setup.size] for r in pts], ys, marker=colours.marker(switch),
                color=colours(switch), label=label,
                linestyle=":" if switch in baselines else styles[(scenario, variant)])
        for r in pts:
            if r.generator_bound:
                ax.plot([x_of[r.setup.size]], [r.ndr_pps or 0.0], marker="o", markersize=12,
                        markerfacecolor="none", markeredgecolor="black", linestyle="none",
                        label=None if bound_shown else "≥ generator-bound")
                bound_shown = True
    return values, bound_shown


def _ceilings(verdicts: Sequence[Verdict], x_of: dict[int | str, int]
              ) -> dict[str, dict[int | str, float]]:
    """The tester's highest ceiling per stack and frame size."""
    ceilings: dict[str, dict[int | str, float]] = defaultdict(dict)
    for v in verdicts:
        if v.ceiling_pps and v.size in x_of:
            ceilings[v.stack][v.size] = max(v.ceiling_pps, ceilings[v.stack].get(v.size, 0.0))
    return ceilings


def _ceiling_lines(ax: Axes, ceilings: dict[str, dict[int | str, float]],
                   x_of: dict[int | str, int]) -> list[float]:
    values: list[float] = []
    for k, (stack, by_size) in enumerate(sorted(ceilings.items())):
        xs = sorted(by_size, key=size_order)
        values += list(by_size.values())
        ax.plot([x_of[x] for x in xs], [by_size[x] for x in xs], color="#a05000",
                linestyle=("-.", (0, (1, 1)))[k % 2], linewidth=1.5, marker="_", markersize=14,
                label=f"tester's ceiling, {stack} stack")
    return values


def _y_axis(ax: Axes, values: list[float]) -> None:
    """A log axis when the values span a decade or more."""
    if spans_decades(values):
        ax.set_yscale("log")
        ax.set_ylabel("NDR (packets/s, log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(PPS)
        ax.set_ylabel("NDR (packets/s)")


class ThroughputSize(Section):
    id = "throughput-size"
    title = "Throughput vs frame size"

    def intro(self, model: ReportModel) -> str:
        return (f"NDR per switch against frame size; the dashed line is the "
                f"line rate of a {model.link_bps / 1e9:g} Gbit/s link "
                "(frames of size + 20 bytes on the wire).")

    def empty(self, model: ReportModel) -> str:
        return ("no search in this campaign" if not model.ranking else
                "every search measured one frame size (the ranking has them)")

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("throughput-size", "Throughput vs frame size",
               throughput_vs_size(model.ranking, colours, model.link_bps, model.verdicts,
                                  frozenset(b.switch for b in model.backends.values()
                                            if not b.ranked)))


SECTION = ThroughputSize()
