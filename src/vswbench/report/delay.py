"""The report's "delay model" section (Sattar and Matrawy's empirical model, models/delay.py):
the conditions with their sample counts and percentiles, and the KS distance matrix between them.
The ECDF plot itself is sections/delay_model.py's, which puts the pieces together.

The models (ReportModel.delay_models) are built from the latency series and sweeps the report
already loaded (ReportModel.latencies and .sweeps), with repetitions pooled, exactly as
`vswbench model delay` builds them by default; the condition numbers C1..Cn are the same in the
plot, the tables and the CLI's output.
"""

from __future__ import annotations

from html import escape

from vswbench.models.delay_data import ks_matrix
from vswbench.report.model import ReportModel

EMPTY_NO_POINTS = "no latency point or sweep in this campaign"
EMPTY_NO_HISTOGRAM = "no latency histogram recorded in the latency points or sweeps"


def delay_empty(model: ReportModel) -> str:
    """What the section says when it has no model."""
    return EMPTY_NO_POINTS if not model.latencies and not model.sweeps else EMPTY_NO_HISTOGRAM


def _table(head: list[str], rows: list[list[str]], first_is_text: bool = True) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(
        f"<td>{c}</td>" if (j == 0 or (j == 1 and first_is_text)) else f'<td class="num">{c}</td>'
        for j, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def delay_tables(model: ReportModel) -> str:
    """The conditions table and the KS matrix (empty string when there is no model)."""
    models = list(model.delay_models)
    if not models:
        return ""
    rows = []
    for i, m in enumerate(models, 1):
        q = m.quantile([0.5, 0.99, 0.999]).tolist()
        rows.append([f"C{i}", escape(m.condition.label), f"{m.samples:,}",
                     *(f"{v:,.1f}" for v in q)])
    conditions = _table(["#", "condition", "samples", "p50 µs", "p99 µs", "p99.9 µs"], rows)
    matrix = ks_matrix(models)
    ks_rows = []
    for i, row in enumerate(matrix.distances):
        cells = ["–" if i == j else f"{d:.3f}" + ("*" if matrix.exceeds(i, j) else "")
                 for j, d in enumerate(row)]
        ks_rows.append([f"C{i + 1}", *cells])
    ks = _table(["", *(f"C{j + 1}" for j in range(len(models)))], ks_rows, first_is_text=False)
    note = ('<p class="footnote">Each condition\'s model spreads the packets of every histogram '
            "bucket evenly over it (the engine's buckets are at most 1/128 of their value wide), "
            "so its CDF is exact at the bucket edges and linear between them; repetitions of a "
            "condition are pooled. The KS distance is the largest vertical gap between two "
            "models' CDFs. * marks a distance above the two-sample critical value at alpha "
            f"{matrix.alpha:g}; it is a guide, not a test, since the packets of one trial are "
            "not independent samples. <code>vswbench model delay</code> exports these models "
            "(JSON ECDF, quantile CSV) for simulators.</p>")
    return (f"<h3>Conditions</h3>{conditions}<h3>KS distance between conditions</h3>"
            f'<div class="scroll">{ks}</div>{note}')      # a wide matrix scrolls in its box
