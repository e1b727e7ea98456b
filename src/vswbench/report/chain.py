"""The report's "chain model" section: Raumer et al.'s per-packet cost model of network-function
chains (models/chain_cost.py) fitted to the store's chain:N throughput, exactly as `vswbench model
fit RESULTS_DIR` fits it (models/chain_analysis.py): measured vs predicted throughput over n per
placement with the error per point, the fitted costs with 95 % CIs, break-even n0 (equation (3))
and the recommended placement per n. The section (sections/chain_model.py) draws chain_figures
and puts chain_empty / chain_tables on the page; ReportModel.chain holds chain_analyses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from matplotlib.figure import Figure

from vswbench.models.chain_analysis import GroupAnalysis
from vswbench.models.chain_analysis import analyze
from vswbench.models.chain_analysis import verdict
from vswbench.models.chain_cost import METRIC_TITLES
from vswbench.models.chain_cost import Parameter
from vswbench.models.chain_data import ChainData
from vswbench.models.chain_data import chain_length
from vswbench.models.chain_data import from_points
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import MARKERS
from vswbench.report.figure import PALETTE
from vswbench.report.figure import PPS
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import slug
from vswbench.results.points import StoredResults

INTRO = (
    "Per-packet CPU cost of a chain tester &rarr; nf1 &rarr; &hellip; &rarr; nfN &rarr; tester "
    "(Raumer et al., sections III-V). On one core, equations (1)-(2) read "
    "C<sub>total,n</sub> = C<sub>base</sub> + n&middot;C<sub>nf</sub> + (n+1)&middot;C<sub>sw</sub>"
    " (C<sub>base</sub>: the tester's C<sub>TX</sub> + C<sub>RX</sub>; C<sub>nf</sub>: "
    "C<sub>VNF</sub> and, when links run on the sender's core, its C<sub>link</sub>; "
    "C<sub>sw</sub>: each hop's link work where it has a core of its own, e.g. NAPI threads); "
    "a link between cores adds C<sub>x</sub>, half on each core. The bottleneck core bounds the "
    "chain: throughput = f<sub>CPU</sub> / max<sub>j</sub> C<sub>j</sub> over the cores running "
    "an NF or a hop (a core with the tester alone is bounded by its calibrated ceiling; with an "
    "even split this is equation (3)'s k&middot;f<sub>CPU</sub> / C<sub>total,n</sub>). Fitted "
    "by weighted least squares on the relative error, each chain's bottleneck core chosen with "
    "the costs (from several starting choices); intervals from Student's t. Lines: the model; "
    "markers: measurements, labelled with the error predicted / measured &minus; 1. Placements "
    "are named by the layout that ran (Raumer's: bi = blocks of NFs per core, pbp = alternate "
    "cores). The tester busy-polls: where NFs share its core, the scheduler's time slices rather "
    "than cycles may bound the chain, and the errors would show it.")


@dataclass(frozen=True)
class ChainSection:
    data: ChainData
    analyses: tuple[GroupAnalysis, ...]
    failed: tuple[str, ...]
    has_chain_points: bool


def chain_analyses(stored: StoredResults) -> ChainSection:
    """The chain model fitted to a store: ReportModel.chain (computed once for the chain-model
    and diagnostics sections)."""
    points = stored.records()
    data = from_points(points, stored.runs)
    seen = any(chain_length(p.params.scenario) is not None for p in points)
    if not data.observations:
        return ChainSection(data, (), (), seen)
    done, failed = analyze(data)
    return ChainSection(data, tuple(done), tuple(failed), seen)


def chain_empty(section: ChainSection) -> str:
    if not section.has_chain_points:
        return "no chain measurement (scenario pvp or chain:N) in this campaign"
    if not section.data.observations:
        return "no chain throughput (a search or sweep of scenario chain:N) the model can use"
    return "no chain model could be fitted: " + "; ".join(section.failed)


# -- the figure --------------------------------------------------------------------------------
def chain_figures(section: ChainSection) -> list[tuple[str, str, Figure]]:
    out = []
    for a in section.analyses:
        fig, (ax,) = new_figure()
        count = 0
        measured = {c.placement for c in a.checks}
        names = [*a.curves, *sorted(measured - set(a.curves))]
        for i, name in enumerate(names):
            colour = PALETTE[i % len(PALETTE)]
            if name in a.curves:
                ax.plot(a.curve_n, [v or float("nan") for v in a.curves[name]], color=colour,
                        linestyle=LINESTYLES[i % len(LINESTYLES)], label=f"{name} model")
                count += 1
            pts = [c for c in a.checks if c.placement == name]
            if pts:
                ax.plot([c.n for c in pts], [c.measured_pps for c in pts], linestyle="none",
                        marker=MARKERS[i % len(MARKERS)], color=colour, label=f"{name} measured")
                count += 1
            for c in pts:
                if c.error is not None:
                    ax.annotate(f"{c.error * 100:+.0f}%", (c.n, c.measured_pps), fontsize=6,
                                xytext=(3, 3), textcoords="offset points", color=colour)
        ax.set_xticks(list(a.curve_n))
        ax.set_xlabel("chain length n (network functions)")
        ax.set_ylabel("maximum throughput (packets/s)")
        ax.yaxis.set_major_formatter(PPS)
        ax.set_ylim(bottom=0)
        metric = METRIC_TITLES.get(a.model.metric, a.model.metric)
        ax.set_title(f"Chain cost model: {a.model.label} ({metric})")
        place_legend(ax, count)
        out.append((f"chain-model-{slug(a.model.label)}", f"Chain cost model: {a.model.label}",
                    fig))
    return out


# -- the tables --------------------------------------------------------------------------------
def _num(v: float | None, digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:+.1f} %"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], text_cols: set[int]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" if i in text_cols else
                                    f'<td class="num">{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _params(a: GroupAnalysis) -> str:
    unit = "ns" if a.model.f_cpu_source == "assumed" else "cycles"

    def ci(p: Parameter) -> str:
        if not p.identified:
            return "not identified"
        return "–" if p.ci_low is None else f"{p.ci_low:,.0f} .. {p.ci_high:,.0f}"
    rows = [[escape(p.name), _num(p.value), ci(p), escape(p.meaning)]
            for p in (*a.model.parameters, *a.model.extras)]
    return _table(["parameter", f"{unit}/packet", "95 % CI", "what"], rows, {0, 3})


def _by_n(a: GroupAnalysis) -> str:
    names = list(a.curves)
    head = ["n"]
    for name in names:
        head += [f"{name} measured", f"{name} predicted", f"{name} error (fit / n left out)"]
    rows = []
    for i, n in enumerate(a.curve_n):
        row = [str(n)]
        for name in names:
            every = [c for c in a.checks if c.n == n and c.placement == name]
            pts = [c for c in every if not c.lower_bound]
            pred = a.curves[name][i]
            if not pts:       # generator-bound: the chain forwards at least this much
                bound = max((c.measured_pps for c in every), default=None)
                row += ["–" if bound is None else f"≥ {_num(bound)}", _num(pred), "–"]
                continue
            mean = sum(c.measured_pps for c in pts) / len(pts)
            loo = [e for c in pts if (e := a.loo_error.get(c.key)) is not None]
            err = None if pred is None else pred / mean - 1
            row += [_num(mean), _num(pred), f"{_pct(err)} / "
                    f"{_pct(sum(loo) / len(loo)) if loo else '–'}"]
        rows.append(row + [escape(a.recommended[i])])
    return _table([*head, "recommended"], rows, {len(head)})


def _summary(a: GroupAnalysis) -> str:
    parts = []
    if a.test_n:
        per = "; ".join(f"{p} {verdict(a.test_worst(p))}" for p in a.placements
                        if a.test_worst(p) is not None)
        parts.append(f"Held-out test: fitted without n = {', '.join(map(str, a.test_n))}, the "
                     f"model predicts them with a largest error of {per}.")
    for where, what in (("interior", "inside the measured range (interpolation)"),
                        ("ends", "at its ends (extrapolation)")):
        per = "; ".join(f"{p} {verdict(a.loo_worst(p)[where])}" for p in a.placements
                        if a.loo_worst(p)[where] is not None)
        if per:
            parts.append(f"Leaving each chain length out of the fit in turn, the largest error "
                         f"at a left-out length {what}: {per}.")
    same = [(p, q) for p, q in (("bi", "pbp"),) if p in a.curves and q in a.curves
            and a.curves[p] == a.curves[q]]
    if same:
        parts.append("bi and pbp predict the same here: with every hop's link work on a switch "
                     "core, each NF's links cross cores whatever the order, so only how many "
                     "NFs share a core matters.")
    be = "; ".join(f"{b.placement}: model {'> 64' if b.model is None else b.model}, even split "
                   f"{'> 64' if b.eq3 is None else b.eq3}, measured "
                   f"{'not reached' if b.measured is None else b.measured}" for b in a.break_even)
    if a.break_even:
        parts.append(f"Break-even n0 of equation (3) (s_core at least as fast up to n0): {be}.")
    else:
        parts.append(f"nf={a.model.nf}: one layout on these cores (every element in one process "
                     "on the switch core), so no placement to choose and no break-even.")
    parts.append(f"f<sub>CPU</sub> = {a.model.f_cpu / 1e9:.3f} GHz ({a.model.f_cpu_source}).")
    notes = "".join(f"<li>{escape(n)}</li>" for n in a.model.notes)
    return f'<p class="footnote">{" ".join(parts)}</p>' + (f"<ul>{notes}</ul>" if notes else "")


def chain_tables(section: ChainSection) -> str:
    if not section.analyses:
        return ""
    parts = []
    for a in section.analyses:
        parts.append(f"<h3>{escape(a.model.label)}</h3>" + _params(a) + _by_n(a) + _summary(a))
    renamed = sorted({(o.placement, o.pattern) for o in section.data.observations
                      if o.placement != o.pattern})
    extra = [f"the campaign's placement {p!r} ran the layout Raumer calls {q!r}"
             for p, q in renamed]
    extra += [f"not fitted: {f}" for f in section.failed]
    extra += [f"not used: {s}" for s in section.data.skipped]
    if extra:
        parts.append("<ul>" + "".join(f"<li>{escape(e)}</li>" for e in extra) + "</ul>")
    return "".join(parts)
