"""The report page: one self-contained HTML file (CSS inline, plots embedded as base64 PNG, no
external fetches), with one <section id=...> per part of the report in a fixed order: the
sections/ package's SECTIONS, each drawing its own body; a section with no data is left out.

A small inline script runs on load and lists, in <body data-rendered="...">, every section whose
images all decoded (naturalWidth > 0); `data-images-loaded` counts those images. The browser test
reads both from Chromium's --dump-dom; a reader never sees them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape

from vswbench.report.figure import DPI
from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.sections import SECTIONS
from vswbench.report.sections.base import is_empty

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1em 1.5em; color: #222; max-width: 80em;
       overflow-wrap: break-word; }
h1 { font-size: 1.5em; margin: 0.3em 0; }
body > p { margin: 0.3em 0; font-size: 0.9em; }
nav { font-size: 0.9em; }
nav a { margin-right: 0.8em; }
section { margin: 1.2em 0; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; font-size: 1.3em; margin: 0.5em 0; }
h3 { margin: 0.8em 0 0.3em; }
.scroll { overflow-x: auto; max-width: 100%; }   /* and every table: wide ones scroll in place */
details > summary { cursor: pointer; font-size: 0.9em; color: #345; }
details.rule, details.left-out { display: inline-block; margin-right: 2em; vertical-align: top; }
details.rule[open], details.left-out[open] { display: block; }
table.ranking td { white-space: nowrap; }
span.range { color: #555; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; vertical-align: top; }
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
ul.verdicts { margin: 0.4em 0; }
ul.verdicts li { margin: 0.15em 0; font-weight: 600; }
ul.verdicts a { color: inherit; text-decoration: none; }
p.machine, p.preset { margin: 0.2em 0; font-size: 0.9em; }
h3.verdict { font-size: 1.05em; }
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


# -- page --------------------------------------------------------------------------------------
def render_page(model: ReportModel, plots: Sequence[Plot]) -> str:
    campaigns = ", ".join(model.data.campaigns) or "(empty store)"
    status = Counter(p.status for p in model.data.points)
    kinds = Counter(p.kind for p in model.data.points if p.status == "done")
    mine = {s.id: [p for p in plots if p.section == s.id] for s in SECTIONS}
    bodies = {s.id: s.body(model, mine[s.id]) for s in SECTIONS if not s.always_shown}
    shown = [s for s in SECTIONS if s.always_shown or not is_empty(bodies[s.id])]
    left_out = [s.name for s in SECTIONS if s not in shown]
    bodies.update({s.id: s.body(model, mine[s.id], left_out) for s in SECTIONS
                   if s.always_shown})
    nav = "".join(f'<a href="#{s.id}">{escape(s.name)}</a>' for s in shown)
    sections = "\n".join(f'<section id="{s.id}"><h2>{escape(s.title)}</h2>{bodies[s.id]}</section>'
                         for s in shown)
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
