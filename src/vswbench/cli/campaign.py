"""`vswbench run | report | export`: campaigns into a results store, the report, the exports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vswbench.cli.common import err, num, out
from vswbench.errors import UsageError


def _load(spec_path: Path | None, suite: str | None) -> Any:
    from vswbench.campaign.spec import builtin, load_spec

    if spec_path is not None and suite is not None:
        raise UsageError("give a spec file or --suite, not both")
    if spec_path is not None:
        return load_spec(spec_path)
    return builtin(suite or "quick")


def _eta(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"~{m}:{s:02d} left"


@click.command()
@click.argument("spec", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--suite", type=click.Choice(["quick", "standard"]), default=None,
              help="A built-in suite instead of a spec file [quick].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory [a spec: results/<campaign name>; a suite: "
                   "results/<suite>-<date-time>]; rerun with the same --out to resume.")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report at the end.")
@click.option("--yes", is_flag=True,
              help="Run a campaign of more than 1,000 points or 12 hours without asking.")
def run(spec: Path | None, suite: str | None, out_dir: Path | None, no_report: bool,
        yes: bool) -> int:
    """Run a campaign (TOML spec or built-in suite); resumable: finished points are skipped."""
    from vswbench.campaign.runner import CampaignRunner, campaign_size
    from vswbench.campaign.spec import expand

    campaign = _load(spec, suite)
    size = campaign_size(expand(campaign))   # every point checked before anything is created
    refusal = size.refusal()
    if refusal and not yes:
        raise UsageError(refusal)
    err.print(f"campaign {campaign.name}: {size.describe()} (estimated)", highlight=False)
    if out_dir is None:
        # a built-in suite measures afresh each time (a spec file's directory resumes)
        default = (f"results/{campaign.name}-{time.strftime('%Y%m%d-%H%M%S')}"
                   if spec is None else f"results/{campaign.name}")
        out_dir = Path(campaign.out or default)
    err.print(f"results: {out_dir} (to resume after an interruption: the same command with "
              f"--out {out_dir})", highlight=False)
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} points"),
                  TextColumn("{task.fields[eta]}"), TimeElapsedColumn(), console=err,
                  transient=False) as bar:
        task = bar.add_task(f"campaign {campaign.name}", total=None, eta="")

        def on_progress(prog: Any, message: str) -> None:
            bar.update(task, total=prog.total, completed=prog.skipped_before + prog.done,
                       eta=_eta(prog.remaining_s))
            bar.console.print(message, style="dim", highlight=False, markup=False)

        summary = CampaignRunner(campaign, out_dir, on_progress).run()
    out.print(f"campaign {campaign.name}: {summary.done} points measured, {summary.failed} failed, "
              f"{summary.skipped} skipped, {summary.already_done} already done "
              f"({summary.seconds:.0f} s)", highlight=False)
    print_ranking(summary.store)
    if not no_report:
        _write_report(out_dir)
    out.print(f"results store: {summary.store}", highlight=False)
    return 0 if summary.failed == 0 else 1


def print_ranking(store_path: Path) -> None:
    """The report's ranking table (report.data.ranking): repetitions are one row (the median NDR,
    with their count), each variant (options, placement, flows, ...) its own row and latency."""
    from vswbench.report.data import ranking
    from vswbench.results.points import load

    rows = ranking(load(store_path))
    if not rows:
        return
    table = Table(title="ranking (NDR and PDR by MLRsearch; latency at 90 % of the NDR)")
    for col in ("switch", "scenario", "size", "variant", "NDR Mpps", "Gbit/s", "PDR Mpps",
                "p50 us @90%", "p99 us @90%", "cycles/pkt", "useful", "reps"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for r in sorted(rows, key=lambda r: (str(r.setup.size), r.setup.scenario, r.rank)):
        mark = "≥" if r.generator_bound else ""
        table.add_row(r.setup.switch, r.setup.scenario, str(r.setup.size), r.setup.variant,
                      f"{mark}{num(r.ndr_mpps, 3)}", num(r.ndr_gbps, 3), num(r.pdr_mpps, 3),
                      num(r.latency_p50_us, 1), num(r.latency_p99_us, 1),
                      num(r.cycles_per_packet, 0), num(r.useful_cycles_per_packet, 0),
                      str(r.repetitions))
    out.print(table)
    if any(r.generator_bound for r in rows):
        out.print("≥: generator-bound (the tester's ceiling, not the switch's limit)",
                  style="yellow")


def _write_report(out_dir: Path) -> None:
    try:
        from vswbench.report import build_report
    except ImportError:
        err.print("(the HTML report is not available in this version)", style="yellow")
        return
    files = build_report(out_dir, out_dir)
    out.print(f"report: {files.html}", highlight=False)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
def report(directory: Path) -> int:
    """Write the HTML report (and PNG/SVG plots) of a results directory."""
    _write_report(directory)
    return 0


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "parquet"]), default="csv",
              show_default=True)
@click.option("--to", "target", type=click.Path(dir_okay=False, path_type=Path), default=None)
def export(directory: Path, fmt: str, target: Path | None) -> int:
    """Export a results store to JSON, CSV or Parquet."""
    from vswbench.results.export import export as write_export
    from vswbench.results.points import store_file
    from vswbench.results.store import ResultStore

    target = target or directory / f"results.{fmt}"
    with ResultStore(store_file(directory), create=False) as store:
        write_export(store, fmt, target)
    out.print(f"wrote {target}", highlight=False)
    return 0


@click.command()
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--fail-if", "fail_if", multiple=True,
              help="Exit 1 on a significant change beyond this, e.g. ndr:-5% or p99:+10%.")
@click.option("--noise", type=float, default=0.10, show_default=True,
              help="Noise band for single measurements (fraction).")
@click.option("--json", "as_json", is_flag=True)
def compare(runs: tuple[Path, ...], fail_if: tuple[str, ...], noise: float, as_json: bool) -> int:
    """Compare results directories point by point: ratios and whether they are significant."""
    import json

    from vswbench.results.compare import compare as run_compare, parse_threshold

    thresholds = [parse_threshold(t) for t in fail_if]
    result = run_compare(list(runs), noise=noise, thresholds=thresholds)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
    else:
        table = Table(title=f"{runs[0]} -> {runs[-1]}" + (f" ({len(runs)} runs)" if len(runs) > 2
                                                          else ""))
        for col in ("point", "metric", "A", "B", "B/A", "significant", "how"):
            table.add_column(col, justify="right" if col in ("A", "B", "B/A") else "left")
        for c in result.changes:
            sig = "[red]yes[/]" if c.significant else "no"
            if c.series_groups is not None:
                sig += f" ({c.series_groups} group{'s' if c.series_groups > 1 else ''})"
            table.add_row(c.label, c.metric, num(c.a, 1), num(c.b, 1), f"{c.ratio:.3f}", sig,
                          c.how)
        out.print(table)
        n_sig = sum(c.significant for c in result.changes)
        out.print(f"{len(result.changes)} comparisons, {n_sig} significant"
                  + (f"; {len(result.unmatched)} points in only one run" if result.unmatched
                     else ""), highlight=False)
        for shift in result.shifts:
            out.print(f"common shift, {shift.describe()}: points are judged against it",
                      highlight=False)
        for f in result.failures:
            err.print(f"[red]fail: {f}[/]", highlight=False)
    return 1 if result.failures else 0
