"""The trend page (`vswbench trend FILE --html PAGE`): one static, self-contained HTML file (CSS
inline, plots embedded as base64 PNG, no network), usable as a CI artifact.

One section per series (results/trend.py): a small plot of the metric run after run, its jumpavg
groups shaded in turn with each group's mean drawn across it, the newest group's change marked
(red: regression, green: progression) with its size; under it the verdict in words and a table of
the runs with their versions (kernel, vswbench, the switch's own), the row where the change
begins marked; each point's versions are on hover too (the row's title). Plots use the report's
figure toolkit (report/figure.py: one style, Agg canvas, PNG without dates). As the report does,
a small script lists in <body data-rendered="..."> every section whose image decoded, for the
browser test.
"""

from __future__ import annotations

import base64
from html import escape

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vswbench.report.figure import DPI
from vswbench.report.figure import PPS
from vswbench.report.figure import render
from vswbench.report.figure import report_style
from vswbench.report.figure import slug
from vswbench.report.html import SCRIPT
from vswbench.report.html import STYLE
from vswbench.results.trend import Trend
from vswbench.results.trend import TrendReport

SMALL = (6.5, 2.4)                       # inches: one small plot per setup
COLOURS = {"regression": "#c62828", "progression": "#2e7d32"}
SHADES = ("#e8eef6", "#f7f7f7")
EXTRA_STYLE = """
tr.change td { background: #fff0f0; }
span.regression { color: #c62828; font-weight: 600; }
span.progression { color: #2e7d32; font-weight: 600; }
"""


def trend_plot(t: Trend) -> bytes:
    """The series' PNG: values by run, groups shaded, means drawn, the newest change marked."""
    with report_style():
        fig = Figure(figsize=SMALL, dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        xs = list(range(len(t.points)))
        for i, g in enumerate(t.groups):
            ax.axvspan(g.start - 0.5, g.end - 0.5, color=SHADES[i % 2], zorder=0)
            ax.hlines(g.mean, g.start - 0.4, g.end - 0.6, colors="#555555", linewidth=1.2,
                      zorder=2)
        ax.plot(xs, [p.value for p in t.points], "o-", color="#1f77b4", markersize=3.5,
                linewidth=0.8, zorder=3)
        if t.change_at is not None and t.ratio is not None:
            colour = COLOURS[t.verdict]
            ax.axvline(t.change_at - 0.5, color=colour, linestyle="--", linewidth=1.2, zorder=4)
            ax.annotate(f"{(t.ratio - 1) * 100:+.1f} %", (t.change_at - 0.5, t.groups[-1].mean),
                        xytext=(4, 6), textcoords="offset points", color=colour, fontsize=8)
        ticks = xs if len(xs) <= 12 else xs[::max(1, len(xs) // 10)]
        ax.set_xticks(ticks, [t.points[i].run.started[5:10] for i in ticks], fontsize=7)
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.set_ylim(0, max(p.value for p in t.points) * 1.12 or 1.0)
        ax.yaxis.set_major_formatter(PPS)
        ax.set_ylabel(f"{t.metric.upper()} (pps)")
        png, _ = render(fig)
    return png


def _versions_table(t: Trend) -> str:
    group_of = {i: n + 1 for n, g in enumerate(t.groups) for i in range(g.start, g.end)}
    rows = []
    for i, p in enumerate(t.points):
        r = p.run
        hover = f"kernel {r.kernel}; vswbench {r.vswbench}; {p.switch_version or 'switch: n/a'}"
        cls = ' class="change"' if i == t.change_at else ""
        rows.append(
            f'<tr{cls} title="{escape(hover)}"><td class="num">{r.id}</td>'
            f"<td>{escape(r.started)}</td><td class=\"num\">{p.value:,.0f}</td>"
            f'<td class="num">{group_of.get(i, "")}</td><td>{escape(r.kernel)}</td>'
            f"<td>{escape(r.vswbench)}</td><td>{escape(p.switch_version or 'n/a')}</td>"
            f'<td class="num">{p.excised_trials}</td></tr>')
    head = ("<tr><th>history run</th><th>started</th><th>pps</th><th>group</th><th>kernel</th>"
            "<th>vswbench</th><th>switch versions</th><th>host-stall trials excised</th></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _verdict(t: Trend) -> str:
    cls = t.verdict if t.verdict in COLOURS else ""
    word = f'<span class="{cls}">{escape(t.verdict)}</span>' if cls else escape(t.verdict)
    text = t.summary().removeprefix(t.verdict)      # every summary opens with its verdict
    return f'<p class="verdict">{word}{escape(text)}</p>'


def render_trend_page(report: TrendReport, source: str) -> str:
    sections, summary = [], []
    for n, t in enumerate(report.trends, start=1):
        sid = f"s{n}-{slug(t.label)}"
        png = base64.b64encode(trend_plot(t)).decode()
        where = "" if t.machine is None else f" &middot; {escape(t.machine_name)}"
        sections.append(
            f'<section id="{sid}"><h2>{escape(t.label)}{where}</h2>{_verdict(t)}'
            f'<figure><img src="data:image/png;base64,{png}" '
            f'alt="{escape(t.metric.upper())} of {escape(t.label)} run after run"></figure>'
            f"{_versions_table(t)}</section>")
        pct = "" if t.ratio is None else f"{(t.ratio - 1) * 100:+.1f} %"
        summary.append(f'<tr><td><a href="#{sid}">{escape(t.label)}</a></td>'
                       f"<td>{escape(t.machine_name)}</td><td>{len(t.points)}</td>"
                       f"<td>{len(t.groups)}</td><td>{escape(t.verdict)}</td>"
                       f'<td class="num">{pct}</td></tr>')
    gate = ("" if report.fail_on is None else
            f" Regressions beyond {report.fail_on * 100:g} %: {len(report.failures)}.")
    counts = {v: sum(t.verdict == v for t in report.trends)
              for v in ("regression", "progression", "within noise", "too few runs")}
    table = ("<table><tr><th>setup</th><th>machine</th><th>runs</th><th>groups</th>"
             f"<th>newest change</th><th>size</th></tr>{''.join(summary)}</table>")
    body = "\n".join(sections) or '<p class="empty">The history holds no series.</p>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>vswbench trend: {escape(source)}</title>
<style>{STYLE}{EXTRA_STYLE}</style>
</head>
<body>
<h1>vswbench trend</h1>
<p>History {escape(source)}: {len(report.trends)} series of {escape(report.metric.upper())}.
{counts['regression']} regression(s), {counts['progression']} progression(s),
{counts['within noise']} within noise, {counts['too few runs']} with too few runs.{gate}
Groups are FD.io CSIT's jumpavg (minimum description length); the newest group is compared
with the one before it.</p>
{table}
{body}
<script>{SCRIPT}</script>
</body>
</html>
"""
