"""The demo's page: a minimal self-contained HTML table (no scripts, no external files) and its
JSON, written side by side."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path

from vswbench.measure.demo import DemoReport
from vswbench.safefile import check_output_dir
from vswbench.safefile import write_text

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.7em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eee; }
.err { color: #a00; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: bold; }
"""


def fmt(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def fmt_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.3f} %"


def render_demo_html(report: DemoReport) -> str:
    rows = []
    for r in report.results:
        cells = [escape(r.backend), fmt(r.tx_frames), fmt(r.rx_frames), fmt(r.tx_kpps),
                 fmt(r.rx_kpps), fmt(r.lost), fmt_ratio(r.loss_ratio), fmt(r.rtt_min_us),
                 fmt(r.rtt_p50_us), fmt(r.rtt_p99_us), fmt(r.rtt_max_us)]
        tds = "".join(f'<td class="num">{c}</td>' if i else f"<td>{c}</td>"
                      for i, c in enumerate(cells))
        errors = "<br>".join(escape(e) for e in r.errors)
        rows.append(f"<tr>{tds}<td class=\"err\">{errors}</td></tr>")
    skipped = "".join(f"<li>{escape(name)}: {escape(reason)}</li>"
                      for name, reason in report.skipped.items())
    facts = {**report.host, "run id": report.run_id, "started": report.started,
             "elapsed": f"{report.elapsed_s} s",
             "gen/sink": f"{report.options.get('size')}-byte frames, highest rate, "
                         f"{report.options.get('duration')} s, TX on CPU {report.options.get('tx_cpu')}, "
                         f"RX on CPU {report.options.get('rx_cpu')}",
             "round trip": f"loop + reflect, {report.options.get('rtt_rate')} pps, "
                           f"{report.options.get('rtt_duration')} s"}
    dl = "".join(f"<dt>{escape(str(k))}</dt><dd>{escape(str(v))}</dd>" for k, v in facts.items())
    header = ("<tr><th>backend</th><th>TX frames</th><th>RX frames</th><th>TX kpps</th>"
              "<th>RX kpps</th><th>lost</th><th>loss</th><th>RTT min µs</th><th>RTT p50 µs</th>"
              "<th>RTT p99 µs</th><th>RTT max µs</th><th>errors</th></tr>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>vswbench demo {escape(report.run_id)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>vswbench engine demo</h1>
<p>Two network namespaces joined by one veth pair (198.18.0.1/30 and 198.18.0.2/30).
Frame sizes count the FCS (RFC 2544).</p>
<table>
{header}
{"".join(rows)}
</table>
{f"<p>Skipped backends:</p><ul>{skipped}</ul>" if skipped else ""}
<h2>Run</h2>
<dl>{dl}</dl>
</body>
</html>
"""


def save_report(report: DemoReport, results_dir: Path) -> tuple[Path, Path]:
    check_output_dir(results_dir, "--results-dir")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = results_dir / f"demo-{stamp}"
    if base.with_suffix(".json").exists():
        base = results_dir / f"demo-{stamp}-{report.run_id}"
    json_path, html_path = base.with_suffix(".json"), base.with_suffix(".html")
    write_text(json_path, json.dumps(report.to_json(), indent=1) + "\n")
    write_text(html_path, render_demo_html(report))
    return json_path, html_path
