"""The report page: one self-contained HTML file (CSS inline, plots embedded as base64 PNG, no
external fetches), with one <section id=...> per part of the report in a fixed order.

A small inline script runs on load and lists, in <body data-rendered="...">, every section whose
images all decoded (naturalWidth > 0); `data-images-loaded` counts those images. The browser test
reads both from Chromium's --dump-dom; a reader never sees them.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Any

from vswbench.report.chain import INTRO as CHAIN_INTRO, chain_analyses, chain_empty, chain_tables
from vswbench.report.data import PAIRS_RE
from vswbench.report.delay import delay_empty, delay_tables
from vswbench.report.first_screen import ranking_tables, summary_section
from vswbench.report.model import ReportModel
from vswbench.report.notes import ReportWarning, RunInfo
from vswbench.results.series import LoadSeries
from vswbench.report.figure import DPI
from vswbench.report.plots import Plot
from vswbench.report.remote import remote_section
from vswbench.report.diagnostics import INTRO as DIAGNOSTICS_INTRO
from vswbench.report.profiles import INTRO as PROFILE_INTRO
from vswbench.report.profiles import cpu_check_table, profiled_points, top_functions_table
from vswbench.report.functions import (RULE_UPDATE_EMPTY, RULE_UPDATE_INTRO, TABLE_SIZE_EMPTY,
                                       TABLE_SIZE_INTRO, rule_update_rows, rule_update_tables)
from vswbench.report.studies import CLONING_EMPTY, CLONING_INTRO, FLOW_COUNT_EMPTY, FLOW_COUNT_INTRO

SECTIONS = (
    ("summary", "At a glance"),
    ("ranking", "Ranking per frame size and stack: NDR, PDR, latency at 90 % of NDR, CPU cost"),
    ("throughput-size", "Throughput vs frame size"),
    ("offered-achieved", "Offered vs achieved load"),
    ("latency-load", "Latency percentiles vs offered load"),
    ("latency-distribution", "Latency histograms and ECDFs"),
    ("delay-model", "Empirical delay model: ECDF per condition, KS distances"),
    ("error-bars", "Parameter error bars over the workload space"),
    ("cycles", "Cycles per packet"),
    ("profiles", "Where the cycles go: perf profiles per core"),
    ("diagnostics", "Diagnostics: drops per chain element, interrupts vs latency, placement"),
    ("chain-model", "Chain cost model: throughput over chain length and placement"),
    ("pairs", "Scalability with pairs"),
    ("remote", "Local vs remote vs remote-vxlan: the cost of the wire and of encapsulation"),
    ("flow-count", "Throughput vs number of flows"),
    ("cloning", "Cloning: throughput vs output ports"),
    ("table-size", "Throughput vs table size (l3 prefixes, acl rules)"),
    ("rule-update", "Rule-update time and forwarding during updates"),
    ("system", "System fingerprint and campaign spec"),
    ("warnings", "Warnings"),
)
SECTION_IDS = tuple(s for s, _ in SECTIONS)
OFFLOAD_FEATURES = ("rx-checksumming", "tx-checksumming", "scatter-gather",
                    "tcp-segmentation-offload", "generic-segmentation-offload",
                    "generic-receive-offload")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; max-width: 80em; }
nav a { margin-right: 0.8em; }
section { margin: 2em 0; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; vertical-align: top; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.group th { background: #dde6f0; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
p.empty { color: #777; font-style: italic; }
p.footnote { font-size: 0.85em; color: #444; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
td.cat-failed, td.cat-generator-bound { color: #a00; }
ul.verdicts li { margin: 0.3em 0; font-size: 1.05em; }
p.machine, p.preset { margin: 0.3em 0; }
p.verdict { font-weight: 600; }
tr.reference td { background: #f3f3f3; font-style: italic; }
tr.ceiling td { background: #fff4e0; }
tr.tied td:first-child { color: #555; }
"""

SCRIPT = """
window.addEventListener("load", function () {
  var done = [], loaded = 0;
  document.querySelectorAll("section[id]").forEach(function (s) {
    var ok = true;
    s.querySelectorAll("img").forEach(function (img) {
      if (img.complete && img.naturalWidth > 0) { loaded += 1; } else { ok = false; }
    });
    if (ok) { done.push(s.id); }
  });
  document.body.setAttribute("data-images-loaded", String(loaded));
  document.body.setAttribute("data-rendered", done.join(" "));
});
"""


def _num(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def _empty(text: str) -> str:
    return f'<p class="empty">{escape(text)}</p>'


def is_empty(body: str) -> bool:
    """A section whose whole body is its "no data" note: left out of the page."""
    return body.startswith('<p class="empty">') and body.count("<p") == 1 and body.endswith(
        "</p>")


def _figure(plot: Plot) -> str:
    data = base64.b64encode(plot.png).decode("ascii")
    title = escape(plot.title)
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{title}">'
            f'<figcaption>{title} (files: <a href="plots/{escape(plot.name)}.png">PNG</a>, '
            f'<a href="plots/{escape(plot.name)}.svg">SVG</a>)</figcaption></figure>')


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


# -- plot sections -----------------------------------------------------------------------------
def _plots(plots: Sequence[Plot], section: str, empty: str, intro: str = "") -> str:
    mine = [p for p in plots if p.section == section]
    if not mine:
        return _empty(empty)
    return (f"<p>{intro}</p>" if intro else "") + "".join(_figure(p) for p in mine)


def _latency_load_empty(sweeps: Sequence[LoadSeries]) -> str:
    return "no sweep in this campaign" if not sweeps else "no latency recorded in the sweeps"


def _latency_dist_empty(latencies: Sequence[LoadSeries]) -> str:
    if not latencies:
        return "no latency point in this campaign"
    return "no latency histogram recorded in the latency points"


# -- 9. system ---------------------------------------------------------------------------------
def _value(key: str, value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict):
        if key == "governors" and value:
            by: dict[str, list[str]] = {}
            for cpu, gov in value.items():
                by.setdefault(str(gov), []).append(str(cpu))
            return "; ".join(f"{g} ({', '.join(c)})" for g, c in by.items())
        parts = []
        for k, v in value.items():
            if isinstance(v, dict):
                inner = ", ".join(f"{a} {b}" for a, b in v.items()) or "–"
                parts.append(f"{k}: {inner}")
            else:
                parts.append(f"{k}={v}")
        return "; ".join(parts) or "–"
    if isinstance(value, float) and key == "tsc_hz":
        return f"{value / 1e9:.3f} GHz"
    return str(value) if value != "" else "(none)"


def _offloads(offloads: Any) -> str:
    if not isinstance(offloads, dict) or not offloads:
        return ""
    rows = []
    for ifname, info in offloads.items():
        info = info if isinstance(info, dict) else {}
        feats = info.get("features") if isinstance(info.get("features"), dict) else {}
        rows.append([escape(str(ifname)), escape(str(info.get("netns") or "(host)")),
                     *(escape(str(feats.get(f, "–"))) for f in OFFLOAD_FEATURES),
                     escape(str(info.get("error") or ""))])
    return ("<h4>Interface offloads</h4>"
            + _table(["interface", "namespace", *OFFLOAD_FEATURES, "error"], rows, set()))


def system_section(runs: Sequence[RunInfo]) -> str:
    if not runs:
        return _empty("no run recorded in this store")
    parts = []
    for info in runs:
        ids = ", ".join(info.run_ids)
        status = ", ".join(dict.fromkeys(info.statuses))
        parts.append(f"<h3>Campaign {escape(info.campaign)}: run{'s' if len(info.run_ids) > 1 else ''} "
                     f"{escape(ids)}</h3><p>started {escape(info.started)}, finished "
                     f"{escape(info.finished or '–')}, status {escape(status)}, vswbench "
                     f"{escape(info.version)}</p>")
        fp = info.fingerprint
        if fp:
            rows = [[escape(k), escape(_value(k, v))] for k, v in fp.items() if k != "offloads"]
            parts.append(_table(["item", "value"], rows, set()) + _offloads(fp.get("offloads")))
        else:
            parts.append(_empty("no system fingerprint recorded for this run"))
        parts.append(f"<h4>Campaign spec</h4><pre>{escape(info.spec_text)}</pre>")
    return "".join(parts)


# -- 10. warnings ------------------------------------------------------------------------------
def warnings_section(warnings: Sequence[ReportWarning]) -> str:
    if not warnings:
        return _empty("no warnings")
    counts = Counter(w.category for w in warnings)
    summary = ", ".join(f"{n} {escape(c)}" for c, n in counts.items())
    rows = "".join(f'<tr><td class="cat-{escape(w.category.replace(" ", "-"))}">'
                   f"{escape(w.category)}</td><td>{escape(w.subject)}</td>"
                   f"<td>{escape(w.message)}</td></tr>" for w in warnings)
    return (f"<p>{summary}.</p><table><thead><tr><th>kind</th><th>what</th><th>warning</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


# -- page --------------------------------------------------------------------------------------
def render_page(model: ReportModel, plots: Sequence[Plot]) -> str:
    campaigns = ", ".join(model.data.campaigns) or "(empty store)"
    status = Counter(p.status for p in model.data.points)
    kinds = Counter(p.kind for p in model.data.points if p.status == "done")
    pairs_seen = any(PAIRS_RE.fullmatch(str(p.params.get("scenario", ""))) for p in
                     model.data.points)
    bodies = {
        "summary": "",
        "ranking": ranking_tables(model.verdicts),
        "throughput-size": _plots(plots, "throughput-size",
                                  "no search in this campaign" if not model.ranking else
                                  "every search measured one frame size (the ranking has them)",
                                  f"NDR per switch against frame size; the dashed line is the "
                                  f"line rate of a {model.link_bps / 1e9:g} Gbit/s link "
                                  "(frames of size + 20 bytes on the wire)."),
        "offered-achieved": _plots(plots, "offered-achieved", "no sweep in this campaign",
                                   "Achieved throughput against offered load; the dotted "
                                   "diagonal is lossless forwarding."),
        "latency-load": _plots(plots, "latency-load", _latency_load_empty(model.sweeps)),
        "latency-distribution": _plots(plots, "latency-distribution",
                                       _latency_dist_empty(model.latencies),
                                       "Histograms regroup the engine's log-linear buckets into "
                                       "20 bins per decade; ECDFs step at each bucket's upper "
                                       "edge."),
        "delay-model": _plots(plots, "delay-model", delay_empty(model),
                              "The empirical delay model of Sattar and Matrawy: per condition "
                              "(switch, scenario, frame size, load), the relative frequency of "
                              "each latency and their cumulative sum (ECDF).")
                       + delay_tables(model),
        "error-bars": _plots(plots, "error-bars", "no parameter was varied in this campaign",
                             "Per switch and varied parameter, with everything else fixed: the "
                             "minimum and maximum throughput divided by the median. The "
                             "whole-product bars (Fang et al., Fig. 7) take, per switch and "
                             "function, every point of the Cartesian product of the workload "
                             "parameters at once: the median throughput over all of them, "
                             "whiskers at their minimum and maximum, divided by the median "
                             "(written under each bar in kpps); also in "
                             "product_error_bars.csv/.json."),
        "cycles": _plots(plots, "cycles", "no cycles per packet in this campaign"),
        "profiles": (lambda pts: _plots(plots, "profiles", "no profiled point in this campaign "
                                        "(vswbench trial|search --profile, or profile = true "
                                        "in a spec)", PROFILE_INTRO if pts else "")
                     + cpu_check_table(pts) + top_functions_table(pts))(
                         profiled_points(model.data)),
        "diagnostics": _plots(plots, "diagnostics", "no chain drops, interrupt rates or "
                              "pinned-vs-unpinned pairs in this campaign", DIAGNOSTICS_INTRO),
        "chain-model": (lambda c: _plots(plots, "chain-model", chain_empty(c), CHAIN_INTRO)
                        + chain_tables(c))(chain_analyses(model)),
        "pairs": _plots(plots, "pairs", "no pairs:N scenario in this campaign"
                        if not pairs_seen else "no throughput measured for the pairs:N points"),
        "remote": remote_section(model.data.points),
        "flow-count": _plots(plots, "flow-count", FLOW_COUNT_EMPTY, FLOW_COUNT_INTRO),
        "cloning": _plots(plots, "cloning", CLONING_EMPTY, CLONING_INTRO),
        "table-size": _plots(plots, "table-size", TABLE_SIZE_EMPTY, TABLE_SIZE_INTRO),
        "rule-update": (_plots(plots, "rule-update", RULE_UPDATE_EMPTY, RULE_UPDATE_INTRO)
                        + rule_update_tables(*rule_update_rows(model.data))),
        "system": system_section(model.runs),
        "warnings": warnings_section(model.warnings),
    }
    shown = tuple((sid, title) for sid, title in SECTIONS if sid == "summary"
                  or not is_empty(bodies[sid]))
    left_out = [title.split(":")[0] for sid, title in SECTIONS if (sid, title) not in shown]
    bodies["summary"] = summary_section(model.machines, model.presets, model.verdicts, left_out)
    nav = "".join(f'<a href="#{sid}">{escape(title.split(":")[0])}</a>' for sid, title in shown)
    sections = "\n".join(f'<section id="{sid}"><h2>{escape(title)}</h2>{bodies[sid]}</section>'
                         for sid, title in shown)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(status.items())) or "no points"
    done = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vswbench report: {escape(campaigns)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>vswbench report: {escape(campaigns)}</h1>
<p>Points: {escape(counts)} (done: {escape(done)}). Store: {escape(model.data.store_path.name)}.
Plots are also in plots/ as PNG and SVG ({len(plots)} each, {DPI} dpi).</p>
<nav>{nav}</nav>
{sections}
<script>{SCRIPT}</script>
</body>
</html>
"""
