"""Raumer et al.'s and Emmerich et al.'s diagnostics in the report: drops per chain element
(Raumer Fig. 5), softirq and interrupt rates against latency (Raumer Fig. 6b), the fitted cost
parts of a chain against n (Raumer Fig. 2) and NDR pinned vs unpinned (Emmerich Fig. 11).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from matplotlib.figure import Figure

from vswbench.report.figure import PPS
from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import slug
from vswbench.report.model import ReportModel
from vswbench.results.points import StoredResults

INTRO = ("Drops per chain element against offered load (Raumer et al. Fig. 5), NET_RX "
         "softirqs and interrupts per second against latency (their Fig. 6b), the fitted per-"
         "packet cost parts of a one-core chain against its length (their Fig. 2), and the NDR "
         "with and without CPU pinning (Emmerich et al. Fig. 11).")
MAX_FIGURES = 6


# -- drops per chain element ---------------------------------------------------------------------
def drops_per_element(data: StoredResults) -> list[tuple[str, list[tuple[float, dict[str, int]]]]]:
    out = []
    for p in data.records():
        rows = [(float(t.offered_pps or 0), dict(t.nf_drops))
                for t in p.measured.trials_of_point if t.nf_drops]
        if rows:
            out.append((p.label, sorted(rows, key=lambda r: r[0])))
    return out


def drops_figure(label: str, rows: list[tuple[float, dict[str, int]]]) -> Figure:
    fig, (ax,) = new_figure()
    elements = sorted({e for _, d in rows for e in d})
    if len(rows) > 1:
        for e in elements:
            ax.plot([r[0] for r in rows], [r[1].get(e, 0) for r in rows], marker="o", label=e)
        ax.set_xlabel("offered load (packets/s)")
        ax.xaxis.set_major_formatter(PPS)
    else:
        ax.bar(elements, [rows[0][1].get(e, 0) for e in elements])
        ax.set_xlabel(f"chain element (at {rows[0][0]:,.0f} pps offered)")
    ax.set_ylabel("frames dropped in the trial")
    ax.set_title(f"Drops per chain element: {label}", fontsize=8)
    place_legend(ax, len(elements) if len(rows) > 1 else 0)
    return fig


# -- interrupts and softirqs against latency -------------------------------------------------------
def irq_latency(data: StoredResults) -> dict[str, list[tuple[float, float, float]]]:
    """Per switch: (interrupts/s, NET_RX/s, p99 µs) of every trial with both, all cores."""
    out: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for p in data.records():
        for t in p.measured.trials_of_point:
            p99 = t.latency.p99 if t.latency is not None else None
            if t.irq_rates and p99:
                out[str(p.params.value("switch"))].append(
                    (sum(i for i, _ in t.irq_rates), sum(n for _, n in t.irq_rates), p99))
    return dict(out)


def irq_figure(series: dict[str, list[tuple[float, float, float]]], colours: Colours) -> Figure:
    fig, axes = new_figure(wide=True, ncols=2)
    for switch, pts in sorted(series.items()):
        for ax, i in zip(axes, (0, 1)):
            ax.plot([x[i] for x in pts], [x[2] for x in pts], linestyle="none", marker="o",
                    color=colours(switch), label=switch)
    axes[0].set_xlabel("interrupts per second (all cores)")
    axes[1].set_xlabel("NET_RX softirqs per second (all cores)")
    for ax in axes:
        ax.set_ylabel("p99 latency (µs)")
        ax.set_yscale("log")
    place_legend(axes[1], len(series))
    return fig


# -- fitted cost parts against n ---------------------------------------------------------------------
def cost_parts_figures(model: ReportModel) -> list[tuple[str, str, Figure]]:
    out = []
    for a in model.chain.analyses[:MAX_FIGURES]:
        m = a.model
        ns = list(a.curve_n)
        if not ns:
            continue
        parts = {"C_base": [m.value("C_base")] * len(ns),
                 "n · C_nf": [n * m.value("C_nf") for n in ns],
                 "(n+1) · C_sw": [(n + 1) * m.value("C_sw") for n in ns]}
        fig, (ax,) = new_figure()
        bottom = [0.0] * len(ns)
        for name, values in parts.items():
            ax.bar(ns, values, bottom=bottom, label=name)
            bottom = [a_ + b for a_, b in zip(bottom, values)]
        ax.set_xticks(ns)
        ax.set_xlabel("chain length n (network functions)")
        ax.set_ylabel("fitted cycles per packet (one core)")
        ax.set_title(f"C_total,n by part: {m.label}", fontsize=8)
        place_legend(ax, len(parts))
        out.append((f"cost-parts-{slug(m.label)}", f"Fitted cost parts vs n: {m.label}", fig))
    return out


# -- pinned vs unpinned --------------------------------------------------------------------------------
def placement_ndr(data: StoredResults) -> dict[str, dict[str, float]]:
    """Per switch (and scenario), the median NDR per placement, where a switch has unpinned
    and pinned searches."""
    found: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for p in data.records("search"):
        ndr = p.measured.ndr_pps
        if ndr:
            prm = p.params
            what = f"{prm.value('switch')} {prm.value('scenario')} {prm.value('size')}B"
            found[what][prm.placement].append(ndr)
    return {w: {pl: statistics.median(v) for pl, v in by.items()} for w, by in found.items()
            if "unpinned" in by and len(by) > 1}


def placement_figure(table: dict[str, dict[str, float]]) -> Figure:
    fig, (ax,) = new_figure(wide=len(table) > 4)
    placements = sorted({pl for by in table.values() for pl in by}, key=lambda x: x == "unpinned")
    names = sorted(table)
    width = 0.8 / len(placements)
    for i, pl in enumerate(placements):
        ax.bar([j + i * width for j in range(len(names))], [table[n].get(pl, 0) for n in names],
               width, label="pinned (default)" if pl == "default" else pl)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))], names, rotation=20,
                  ha="right", fontsize=7)
    ax.set_ylabel("NDR (packets/s, median of repetitions)")
    ax.yaxis.set_major_formatter(PPS)
    place_legend(ax, len(placements))
    return fig


def diagnostic_figures(model: ReportModel, colours: Colours) -> list[tuple[str, str, Figure]]:
    figs: list[tuple[str, str, Figure]] = []
    table = placement_ndr(model.data)
    if table:
        figs.append(("placement-pinned-unpinned", "NDR pinned vs unpinned (Emmerich Fig. 11)",
                     placement_figure(table)))
    for label, rows in drops_per_element(model.data)[:MAX_FIGURES]:
        figs.append((f"drops-{slug(label)}", f"Drops per chain element: {label}",
                     drops_figure(label, rows)))
    series = irq_latency(model.data)
    if series:
        figs.append(("irq-latency", "Interrupts and NET_RX softirqs per second vs p99 latency",
                     irq_figure(series, colours)))
    figs += cost_parts_figures(model)
    return figs
