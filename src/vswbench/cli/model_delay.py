"""`vswbench model delay RESULTS_DIR --out DIR`: the empirical delay model (Sattar and Matrawy) of
every measured condition, exported for simulators (models/delay.py, models/delay_data.py).

Added to the `model` group by cli/model.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.models.delay_data import DEFAULT_KINDS
from vswbench.models.delay_data import INDEX_NAME
from vswbench.models.delay_data import KsMatrix
from vswbench.models.delay_data import index_json
from vswbench.models.delay_data import load_models
from vswbench.models.delay_data import write_models


@click.command("delay")
@click.argument("results", metavar="RESULTS_DIR", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Directory for the per-condition JSON ECDFs, quantile CSVs, index.json and "
                   "ks_matrix.csv (created if needed).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["latency", "sweep", "trial"]),
              help="Point kinds to read (repeatable) [latency, sweep].")
@click.option("--per-repetition", is_flag=True,
              help="One model per repetition instead of pooling repetitions of a condition.")
@click.option("--campaign", default=None, help="Only this campaign of the store.")
@click.option("--json", "as_json", is_flag=True, help="Print index.json instead of tables.")
def delay(results: Path, out_dir: Path, kinds: tuple[str, ...], per_repetition: bool,
          campaign: str | None, as_json: bool) -> int:
    """Empirical delay model per condition (switch, size, load): ECDF JSON, quantile CSV, KS
    distances between conditions. RESULTS is a `vswbench run` directory or its results.sqlite."""
    models = load_models(results, kinds or DEFAULT_KINDS, pool=not per_repetition,
                         campaign=campaign)
    written, matrix = write_models(models, out_dir)
    if as_json:
        click.echo(json.dumps(index_json(written, matrix), indent=1))
        return 0
    table = Table(title=f"empirical delay model: {len(written)} conditions (latency in us, "
                        "from the engine's histograms)")
    for col in ("#", "condition", "samples", "p50", "p99", "p99.9"):
        table.add_column(col, justify="left" if col == "condition" else "right")
    for i, w in enumerate(written, 1):
        s = w.summary()
        table.add_row(f"C{i}", s["label"], f"{s['samples']:,}", num(s["p50_us"], 2),
                      num(s["p99_us"], 2), num(s["p999_us"], 2))
    out.print(table)
    _print_ks(matrix)
    out.print(f"wrote {len(written)} x (JSON ECDF, quantile CSV), {INDEX_NAME} and "
              f"ks_matrix.csv in {out_dir}", highlight=False)
    return 0


def _print_ks(matrix: KsMatrix) -> None:
    """The matrix in blocks of columns that fit the terminal (C1..Cn as in the table above)."""
    n = len(matrix.labels)
    per = max(1, (out.width - 6) // 9)
    for start in range(0, n, per):
        cols = range(start, min(n, start + per))
        title = ("KS distance between conditions (* above the two-sample critical value at "
                 f"alpha {matrix.alpha:g}; a guide, samples within a trial are not independent)"
                 if start == 0 else None)
        ks = Table(title=title)
        ks.add_column("")
        for j in cols:
            ks.add_column(f"C{j + 1}", justify="right")
        for i, row in enumerate(matrix.distances):
            ks.add_row(f"C{i + 1}", *("–" if i == j else f"{row[j]:.3f}"
                                      + ("*" if matrix.exceeds(i, j) else "") for j in cols))
        out.print(ks)
