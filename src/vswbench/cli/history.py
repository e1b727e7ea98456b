"""`vswbench history add | list | show | remove` and `vswbench trend` (bodies in
results/history.py, results/trend.py and report/trend_page.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import FiniteRange
from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import table_out
from vswbench.results.history import DEFAULT_HISTORY
from vswbench.results.history import History
from vswbench.results.history import store_rows
from vswbench.safefile import check_output_file
from vswbench.safefile import write_text


def history_option(func: Any) -> Any:
    return click.option("--history", "history_path", type=click.Path(path_type=Path),
                        default=DEFAULT_HISTORY, show_default=True,
                        help="The history file (SQLite).")(func)


@click.group()
def history() -> None:
    """A history of runs: add results directories, list, show and remove them."""


def add_to_history(path: Path, dirs: list[Path] | tuple[Path, ...]) -> None:
    """Add every results directory: all of them read first (a bad one is refused before the
    history is touched), then each added in its own transaction."""
    read = [store_rows(d) for d in dirs]
    with History(path) as h:
        for rows in read:
            for added in h.add_rows(rows):
                if added.run is None:
                    out.print(f"{added.source}: campaign {added.campaign} is already in {path} "
                              "(skipped)", highlight=False, soft_wrap=True)
                else:
                    out.print(f"{added.source}: campaign {added.campaign} added to {path} as "
                              f"history run {added.run} ({added.setups} setups)", highlight=False,
                              soft_wrap=True)


@history.command("add")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@history_option
def add(dirs: tuple[Path, ...], history_path: Path) -> int:
    """Add results directories (`vswbench run --out`) to the history."""
    add_to_history(history_path, dirs)
    return 0


@history.command("list")
@history_option
@click.option("--json", "as_json", is_flag=True)
def list_runs(history_path: Path, as_json: bool) -> int:
    """The history's runs, oldest first."""
    with History(history_path, create=False) as h:
        runs = h.runs()
        counts = {r.id: 0 for r in runs}
        for row in h.results():
            counts[row.run.id] += 1
    if as_json:
        click.echo(json.dumps([{**r.__dict__, "setups": counts[r.id]} for r in runs], indent=1))
        return 0
    table = Table(title=f"history {history_path}: {len(runs)} runs")
    for col in ("id", "started", "campaign", "machine", "kernel", "vswbench", "setups", "from"):
        table.add_column(col, overflow="fold")
    for r in runs:
        table.add_row(str(r.id), r.started, r.campaign, f"{r.machine_name} [{r.machine}]",
                      r.kernel, r.vswbench, str(counts[r.id]), r.source)
    table_out().print(table)
    return 0


@history.command("show")
@click.argument("run_id", type=click.IntRange(1))
@history_option
def show(run_id: int, history_path: Path) -> int:
    """One history run: its machine, versions and every setup's NDR and PDR."""
    with History(history_path, create=False) as h:
        run = h.run(run_id)
        rows = h.results(run_id)
    out.print(f"history run {run.id}: campaign {run.campaign}, started {run.started}, finished "
              f"{run.finished or '-'}; machine {run.machine_name} [{run.machine}]; kernel "
              f"{run.kernel}; vswbench {run.vswbench}; from {run.source} (runs "
              f"{', '.join(run.run_ids)})", highlight=False)
    table = Table()
    for col in ("setup", "NDR pps", "PDR pps", "repetitions", "stall trials excised",
                "switch versions"):
        table.add_column(col, justify="right" if "pps" in col else "left")
    for r in rows:
        ndr = num(r.ndr_pps) + (" (generator-bound)" if r.generator_bound else "")
        table.add_row(r.setup.label, ndr, num(r.pdr_pps), str(r.repetitions),
                      str(r.excised_trials), r.switch_version or "-")
    table_out().print(table)
    return 0


@history.command("remove")
@click.argument("run_ids", nargs=-1, required=True, type=click.IntRange(1))
@history_option
def remove(run_ids: tuple[int, ...], history_path: Path) -> int:
    """Remove history runs by id (`history list` shows them)."""
    with History(history_path, create=False, write=True) as h:
        h.remove(run_ids)
    out.print(f"removed history run{'s' if len(run_ids) > 1 else ''} "
              f"{', '.join(map(str, run_ids))} from {history_path}", highlight=False)
    return 0


def _trend_json(t: Any) -> dict[str, Any]:
    return {"setup": t.setup.__dict__, "machine": t.machine, "machine_name": t.machine_name,
            "metric": t.metric, "verdict": t.verdict, "ratio": t.ratio, "failed": t.failed,
            "change_at_run": None if t.change_at is None else t.points[t.change_at].run.id,
            "changed_versions": [c.__dict__ for c in t.changed],
            "groups": [{"runs": [p.run.id for p in t.points[g.start:g.end]], "mean": g.mean,
                        "stdev": g.stdev} for g in t.groups],
            "values": [{"run": p.run.id, "started": p.run.started, "value": p.value}
                       for p in t.points], "description": t.describe()}


@click.command()
@click.argument("history_file", type=click.Path(path_type=Path))
@click.option("--html", "page", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the trend page (one self-contained HTML file) here.")
@click.option("--fail-on-regression", "fail_pct", type=FiniteRange(0, 100, max_open=True),
              default=None, metavar="PCT",
              help="Exit 1 when a series' newest group fell by more than PCT % (CI's gate).")
@click.option("--recent", type=click.IntRange(1), default=None, metavar="N",
              help="Fail only on regressions whose group began within the last N runs.")
@click.option("--metric", type=click.Choice(["ndr", "pdr"]), default="ndr", show_default=True)
@click.option("--any-machine", is_flag=True,
              help="One series per setup across machines (default: one per machine).")
@click.option("--json", "as_json", is_flag=True)
def trend(history_file: Path, page: Path | None, fail_pct: float | None, recent: int | None,
          metric: str, any_machine: bool, as_json: bool) -> int:
    """Trends of a history: jumpavg groups per series, the newest change and its versions."""
    from vswbench.results.trend import trends

    if page is not None:
        check_output_file(page, "--html")
    with History(history_file, create=False, flag=None) as h:     # an argument, not a flag
        rows = h.results()
    report = trends(rows, metric=metric, any_machine=any_machine,
                    fail_on=None if fail_pct is None else fail_pct / 100, recent=recent)
    if page is not None:
        from vswbench.report.trend_page import render_trend_page

        write_text(page, render_trend_page(report, str(history_file)))
    if as_json:
        click.echo(json.dumps({"metric": metric, "fail_on": report.fail_on,
                               "trends": [_trend_json(t) for t in report.trends]}, indent=1))
    else:
        _print_trends(report.trends)
        if not report.trends:
            out.print(f"{history_file}: no series (add runs with `vswbench history add`)",
                      highlight=False)
        if page is not None:
            out.print(f"trend page: {page}", highlight=False)
    for t in report.failures:
        err.print(f"fail: {t.label}: {t.metric} fell {(1 - (t.ratio or 1)) * 100:.1f} %, beyond "
                  f"{fail_pct:g} %", style="red", highlight=False, markup=False)
    return 1 if report.failures else 0


def _print_trends(trends: Any) -> None:
    """The judged series a line each; those with too few runs under one line that says how many
    a trend needs, each with the values it has (not "too few runs" once per series)."""
    from vswbench.results.trend import MIN_RUNS

    waiting = [t for t in trends if t.verdict == "too few runs"]
    for t in trends:
        if t.verdict != "too few runs":
            style = {"regression": "red", "progression": "green"}.get(t.verdict)
            out.print(t.describe(), style=style, highlight=False, markup=False, soft_wrap=True)
    if waiting:
        have = sorted({len(t.points) for t in waiting})
        out.print(f"not judged yet: {len(waiting)} series with {' or '.join(map(str, have))} "
                  f"run{'s' if have[-1] > 1 else ''}; a trend needs {MIN_RUNS} runs of a setup "
                  "(add runs with `vswbench history add` or `vswbench run ... --history`). "
                  "Their values, oldest first:", highlight=False, markup=False, soft_wrap=True)
        for t in waiting:
            where = "" if t.machine is None else f" on {t.machine_name}"
            out.print(f"  {t.label}{where}: {t.values()}", highlight=False, markup=False,
                      soft_wrap=True)
