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

from vswbench.report.figure import DPI, Plot
from vswbench.report.model import ReportModel
from vswbench.report.sections import SECTIONS
from vswbench.report.sections.base import is_empty

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
