"""The report's figures (matplotlib, Agg canvas, no pyplot state), rendered to PNG and SVG bytes.

Each function takes typed rows (report/data.py, results/series.py) and returns a Figure, or None
when it has nothing to draw (the page then says so instead of showing an empty plot). Output is
deterministic: the same store gives byte-identical files (figure.py: fixed SVG hash salt, no dates
in the metadata).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vswbench.models.delay import DelayModel
from vswbench.report.chain import chain_analyses, chain_figures
from vswbench.report.data import PairsPoint, RankingRow, ecdf, rebin_log
from vswbench.report.delay import delay_models
from vswbench.report.diagnostics import diagnostic_figures
from vswbench.report.figure import (DPI, FIGSIZE_WIDE, LINESTYLES, PPS, Colours, new_figure,
                                    place_legend, render, report_style, slug, spans_decades)
from vswbench.report.model import ReportModel
from vswbench.report.product_bars import product_bar_plot
from vswbench.report.profiles import profile_figures, profiled_points
from vswbench.report.spread import ErrorBar
from vswbench.report.verdict import Verdict
from vswbench.report.functions import (rule_update_plot, rule_update_rows, table_size_plot,
                                       table_size_points)
from vswbench.report.studies import (cloning_plot, cloning_points, flow_count_plot,
                                     flow_count_points)
from vswbench.results.points import size_order
from vswbench.results.series import LoadSeries
from vswbench.units import line_rate_pps

PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"))


@dataclass(frozen=True)
class Plot:
    name: str                            # file stem in plots/, unique within a report
    section: str                         # id of the page section it belongs to
    title: str
    png: bytes
    svg: bytes


# -- 2. throughput vs frame size ---------------------------------------------------------------
def throughput_vs_size(rows: Sequence[RankingRow], colours: Colours, link_bps: float,
                       verdicts: Sequence[Verdict] = (),
                       baselines: frozenset[str] = frozenset()) -> Figure | None:
    """NDR per switch over a categorical frame-size axis (sizes in numeric order, IMIX last),
    the line rate of the reference link and the tester's ceiling of each stack; a log axis when
    the values span a decade or more."""
    series: dict[tuple[str, str, str], list[RankingRow]] = defaultdict(list)
    for r in rows:
        if r.ndr_pps and r.setup.size_bytes:
            series[(r.setup.switch, r.setup.scenario, r.setup.variant)].append(r)
    sizes = sorted({r.setup.size for pts in series.values() for r in pts}, key=size_order)
    if len(sizes) < 2:
        return None     # a column of dots: the ranking says it (and a chains campaign's 57
        #                 setups at 64 B made a legend that left the axes no room)
    x_of = {size: i for i, size in enumerate(sizes)}
    fig, (ax,) = new_figure()
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
                ax.plot([x_of[r.setup.size]], [r.ndr_pps], marker="o", markersize=12,
                        markerfacecolor="none", markeredgecolor="black", linestyle="none",
                        label=None if bound_shown else "≥ generator-bound")
                bound_shown = True
    ceilings: dict[str, dict[int | str, float]] = defaultdict(dict)
    for v in verdicts:
        if v.ceiling_pps and v.size in x_of:
            ceilings[v.stack][v.size] = max(v.ceiling_pps, ceilings[v.stack].get(v.size, 0.0))
    for k, (stack, by_size) in enumerate(sorted(ceilings.items())):
        xs = sorted(by_size, key=size_order)
        values += list(by_size.values())
        ax.plot([x_of[x] for x in xs], [by_size[x] for x in xs], color="#a05000",
                linestyle=("-.", (0, (1, 1)))[k % 2], linewidth=1.5, marker="_", markersize=14,
                label=f"tester's ceiling, {stack} stack")
    line = [(x_of[s], line_rate_pps(s, link_bps)) for s in sizes if isinstance(s, int)]
    if line:
        ax.plot([x for x, _ in line], [y for _, y in line], color="black", linestyle="--",
                linewidth=1, label=f"line rate {link_bps / 1e9:g} Gbit/s link")
    if spans_decades(values):
        ax.set_yscale("log")
        ax.set_ylabel("NDR (packets/s, log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(PPS)
        ax.set_ylabel("NDR (packets/s)")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"{s} B" if isinstance(s, int) else str(s).upper() for s in sizes])
    ax.set_xlim(-0.4, len(sizes) - 0.6)
    ax.set_xlabel("frame size (FCS included; categories, not to scale)")
    ax.set_title("Throughput (NDR) vs frame size")
    place_legend(ax, len(series) + len(ceilings) + bool(line) + bound_shown)
    return fig


# -- 3. offered vs achieved load ---------------------------------------------------------------
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
        pts = [(lp.offered_pps, lp.achieved_pps) for lp in s.loads if lp.achieved_pps is not None]
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


# -- 4. latency percentiles vs load ------------------------------------------------------------
def latency_vs_load(series: LoadSeries) -> Figure | None:
    fig, (ax,) = new_figure()
    drawn = 0
    for (key, name), style in zip(PERCENTILES, LINESTYLES):
        pts = [(lp.offered_pps, getattr(lp.latency, key, None)) for lp in series.loads]
        pts = [(x, y) for x, y in pts if y is not None and y > 0]
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


# -- 5. latency histograms and ECDFs -----------------------------------------------------------
def _load_name(series: LoadSeries, fraction: float | None, offered: float) -> str:
    at = f"{fraction * 100:g} % NDR" if fraction is not None else f"{PPS(offered)}pps"
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


# -- 5b. empirical delay model ----------------------------------------------------------------
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


# -- 6. parameter error bars -------------------------------------------------------------------
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


# -- 7. cycles per packet ----------------------------------------------------------------------
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
                    ys.append(r.cycles_per_packet)
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


# -- 8. scalability with pairs -----------------------------------------------------------------
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


# -- all of them -------------------------------------------------------------------------------
def make_plots(model: ReportModel) -> list[Plot]:
    """Every figure of the report, in page order, each rendered as soon as it is drawn."""
    colours = Colours(model.switches)
    plots: list[Plot] = []
    used: set[str] = set()

    def add(name: str, section: str, title: str, fig: Figure | None) -> None:
        if fig is None:
            return
        unique, n = name, 2
        while unique in used:
            unique, n = f"{name}-{n}", n + 1
        used.add(unique)
        png, svg = render(fig)
        plots.append(Plot(unique, section, title, png, svg))

    with report_style():
        add("throughput-size", "throughput-size", "Throughput vs frame size",
            throughput_vs_size(model.ranking, colours, model.link_bps, model.verdicts,
                               frozenset(b.switch for b in model.backends.values()
                                         if not b.ranked)))
        add("offered-achieved", "offered-achieved", "Offered vs achieved load",
            offered_vs_achieved(model.sweeps, colours))
        for s in model.sweeps:
            add(f"latency-load-{slug(s.label)}", "latency-load",
                f"Latency percentiles vs load: {s.label}", latency_vs_load(s))
        groups: dict[tuple[str, tuple[float, str], str], list[LoadSeries]] = defaultdict(list)
        for s in model.latencies:
            groups[(s.setup.scenario, size_order(s.setup.size), s.setup.variant)].append(s)
        for (scenario, _, variant), group in sorted(groups.items()):
            what = " ".join(x for x in (scenario, group[0].setup.size_label, variant) if x)
            add(f"latency-dist-{slug(what)}", "latency-distribution",
                f"Latency distribution: {what}",
                latency_distribution(group, colours, f"Latency distribution: {what}"))
        delay = delay_models(model)
        for what, numbers, models in delay_groups(delay):
            add("delay-model" + ("" if len(delay) == len(models) else f"-{slug(what)}"),
                "delay-model", f"Empirical delay model: ECDF per condition, {what}",
                delay_ecdf_plot(models, colours, numbers, what))
        add("error-bars", "error-bars", "Parameter error bars",
            error_bar_plot(model.error_bars, colours))
        add("product-error-bars", "error-bars", "Whole-product error bars (Fang Fig. 7)",
            product_bar_plot(model.product_bars, colours))
        add("cycles", "cycles", "Cycles per packet", cycles_plot(model.ranking, colours))
        for name, title, fig in chain_figures(chain_analyses(model)):
            add(name, "chain-model", title, fig)
        for name, title, fig in profile_figures(profiled_points(model.data)):
            add(name, "profiles", title, fig)
        for name, title, fig in diagnostic_figures(model, colours):
            add(name, "diagnostics", title, fig)
        add("pairs", "pairs", "Scalability with pairs", pairs_plot(model.pairs, colours))
        add("flow-count", "flow-count", "Throughput vs number of flows",
            flow_count_plot(flow_count_points(model.data), colours))
        add("cloning", "cloning", "Throughput vs output ports (cloning)",
            cloning_plot(cloning_points(model.data), colours))
        add("table-size", "table-size", "Throughput vs table size",
            table_size_plot(table_size_points(model.data), colours))
        add("rule-update", "rule-update", "Rule-update time",
            rule_update_plot(rule_update_rows(model.data)[0], colours))
    return plots
