"""`vswbench run | report | export`: campaigns into a results store, the report, the exports."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import click
from rich.progress import BarColumn
from rich.progress import Progress
from rich.progress import ProgressColumn
from rich.progress import Task
from rich.progress import TextColumn
from rich.table import Table
from rich.text import Text

from vswbench.cli.common import FiniteRange
from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import table_out
from vswbench.cli.history import add_to_history
from vswbench.cli.papers import run_directory
from vswbench.cli.show import first_screen
from vswbench.errors import UsageError
from vswbench.errors import require_root
from vswbench.results.points import load
from vswbench.results.points import read_point
from vswbench.results.points import store_file
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.safefile import check_output_dir
from vswbench.safefile import check_output_file

if TYPE_CHECKING:      # campaign/ is imported when a campaign runs, not at start-up
    from vswbench.campaign.launch import Launch
    from vswbench.campaign.point import Point
    from vswbench.campaign.runner import Progress as CampaignProgress
    from vswbench.campaign.runner import RunSummary


def _eta(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"~{m}:{s:02d} left"


class _Left(ProgressColumn):
    """The estimate, counted down between the runner's reports (the probe, a testbed's build
    and a round report nothing): the runner sets when it expects the end (`ends`)."""

    def render(self, task: Task) -> Text:
        return Text(_eta(max(0.0, task.fields["ends"] - time.monotonic()))
                    + task.fields["extra"])


class _Elapsed(ProgressColumn):
    """Time since the start, still running after the last point (the rounds follow it)."""

    def render(self, task: Task) -> Text:
        m, s = divmod(int(time.monotonic() - task.fields["began"]), 60)
        return Text(f"{m // 60}:{m % 60:02d}:{s:02d}", style="progress.elapsed")


RANKING_FORMATS = ("text", "md")


@click.command()
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--suite", type=click.Choice(["quick", "standard"]), default=None,
              help="A built-in suite instead of a spec file [quick].")
@click.option("--switches", default=None, metavar="A,B,...",
              help="Without a spec file: an ad-hoc campaign of these switches (`vswbench "
                   "switches` lists them), measured as the quick suite measures [every switch].")
@click.option("--sizes", default=None, metavar="64,1518,...",
              help="Without a spec file: the ad-hoc campaign's frame sizes (bytes with the FCS, "
                   "or imix) [64,1518].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory [a spec: results/<campaign name>; a suite: "
                   "results/<suite>-<date-time>]; rerun with the same --out to resume.")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report at the end.")
@click.option("--yes", is_flag=True,
              help="Run a campaign of more than 1,000 points or 12 hours without asking.")
@click.option("--dry-run", is_flag=True,
              help="Check the spec and list its points with an estimated duration; measure "
                   "nothing (no root needed).")
@click.option("--json", "as_json", is_flag=True,
              help="Stream one JSON object per finished point on stdout (as results.jsonl); "
                   "with --dry-run, the points as JSON.")
@click.option("--format", "fmt", type=click.Choice(RANKING_FORMATS), default="text",
              show_default=True,
              help="The first screen at the end (as `vswbench show` draws it): text (fitted "
                   "to the terminal's width, every number whole) or md (Markdown).")
@click.option("--inventory", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ansible-style YAML inventory (groups tester, dut): run every point on a "
                   "DUT host through `vswbench agent` over SSH, store here.")
@click.option("--dut", default=None, help="With --inventory: the DUT host [the first].")
@click.option("--append", is_flag=True,
              help="Add to a results directory that holds another campaign, or this campaign "
                   "measured with another spec (refused without it).")
@click.option("--history", "history_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Add the finished run to this history (`vswbench history`, "
                                 "`vswbench trend`), e.g. results/history.sqlite.")
def run(spec: Path | None, suite: str | None, out_dir: Path | None, no_report: bool,
        yes: bool, dry_run: bool, as_json: bool, fmt: str, inventory: Path | None = None,
        dut: str | None = None, append: bool = False, history_path: Path | None = None,
        switches: str | None = None, sizes: str | None = None) -> int:
    """Run a campaign (TOML spec, built-in suite, or --switches/--sizes); resumable: finished
    points are skipped. A directory of specs (specs/papers/) runs each into OUT/<campaign
    name> [results/papers]."""
    from vswbench.campaign.launch import LaunchRequest
    from vswbench.campaign.launch import plan_launch

    _check_dut(inventory, dut)
    if spec is not None and spec.is_dir():
        _check_directory_flags(suite, switches, sizes, inventory, history_path)
        return run_directory(spec, out_dir, no_report, yes, dry_run, fmt, append)
    plan = plan_launch(LaunchRequest(spec, suite, switches, sizes, inventory, dut, history_path))
    if dry_run:
        print_dry_run(plan.campaign.name, plan.points, as_json, plan.campaign.budget_s)
        return 0
    out_dir = _checked_out(plan, out_dir, yes, no_report)
    summary = _measure(plan, out_dir, as_json, append)
    say = err if as_json else out       # --json keeps stdout to the JSON lines
    say.print(f"campaign {plan.campaign.name}: {summary.done} points measured, "
              f"{summary.failed} failed, {summary.skipped} skipped, {summary.already_done} "
              f"already done ({summary.seconds:.0f} s)", highlight=False)
    if not as_json:                     # the first screen, at the terminal's width
        first_screen(out_dir, fmt)
    if not no_report:
        _write_report(out_dir, say)
    say.print(f"results store: {summary.store}", highlight=False)
    if history_path is not None:
        add_to_history(history_path, [out_dir])
    return 0 if summary.failed == 0 else 1


def _check_dut(inventory: Path | None, dut: str | None) -> None:
    if dut is not None and inventory is None:
        raise UsageError(f"--dut {dut}: a DUT host is named in an inventory; give --inventory "
                         "hosts.yml too (or leave --dut out to measure here)")
    if dut is not None and not dut.strip():
        raise UsageError("--dut is empty: give a DUT host of the inventory (or leave --dut out "
                         "for the first)")


def _check_directory_flags(suite: str | None, switches: str | None, sizes: str | None,
                           inventory: Path | None, history_path: Path | None) -> None:
    """A directory of specs runs each spec as it is: no flag that makes or sends one run."""
    if suite is not None or switches is not None or sizes is not None:
        raise UsageError("give a spec directory or --suite/--switches/--sizes, not both")
    if inventory is not None:
        raise UsageError("--inventory runs one spec at a time: give a spec file, not a directory")
    if history_path is not None:
        raise UsageError("--history adds one run: give a spec file, not a directory (then "
                         "`vswbench history add` the directories)")


def _checked_out(plan: Launch, out_dir: Path | None, yes: bool, no_report: bool) -> Path:
    """The size agreed to (--yes), root, and the results directory and the report's files
    checked (nothing made yet): the directory, printed with how to resume."""
    refusal = plan.size.refusal()
    if refusal and not yes:
        raise UsageError(refusal)
    err.print(f"campaign {plan.campaign.name}: {plan.size.describe()} (estimated)",
              highlight=False)
    out_flag = "--out" if out_dir is not None else "the results directory"   # only if given
    if out_dir is None:
        out_dir = plan.default_out()
    require_root("a campaign")
    check_output_dir(out_dir, out_flag, create=False)   # every output checked, nothing made yet
    if not no_report:
        # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
        from vswbench.report.build import check_outputs

        check_outputs(out_dir, create=False)
    err.print(f"results: {out_dir} (to resume after an interruption: the same command with "
              f"--out {out_dir})", highlight=False)
    return out_dir


def _measure(plan: Launch, out_dir: Path, as_json: bool, append: bool) -> RunSummary:
    """The campaign measured under a progress bar (a line per finished point; with --json its
    JSON line on stdout too)."""
    from vswbench.campaign.launch import launch
    from vswbench.report.text import point_line
    from vswbench.results.export import point_record

    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} points"),
                  _Left(), _Elapsed(), console=err, transient=False) as bar:
        # the total is the spec's points from the start; the rounds and a decide phase's
        # repetitions move the estimate, never the total (campaign/runner.py Progress)
        began = time.monotonic()
        task = bar.add_task(f"campaign {plan.campaign.name}", total=plan.size.points,
                            began=began, ends=began + plan.size.seconds, extra="")

        def on_progress(prog: CampaignProgress, message: str) -> None:
            bar.update(task, total=prog.total, completed=prog.skipped_before + prog.done,
                       ends=time.monotonic() + prog.eta_s(),
                       extra=f" (+{prog.repeats} repeated)" if prog.repeats else "")

        def on_point(stored: StoredPoint) -> None:
            bar.console.print(point_line(read_point(stored)), style="dim", highlight=False,
                              markup=False)
            if as_json:
                click.echo(json.dumps(point_record(stored), default=str))

        return launch(plan, out_dir, on_progress, on_point, append=append)


def print_dry_run(name: str, points: list[Point], as_json: bool,
                  budget_s: float | None = None) -> None:
    """The points a spec expands to, each with its estimated seconds (campaign/estimate.py)."""
    from vswbench.campaign.estimate import campaign_size
    from vswbench.campaign.estimate import estimates

    size, seconds = campaign_size(points, budget_s), estimates(points)
    if as_json:
        click.echo(json.dumps({"campaign": name, "points": [
            {"key": p.key, "label": p.label, "kind": p.kind, "params": p.params(),
             "estimated_s": seconds[p.key]} for p in points],
            "total_points": size.points, "estimated_s": size.seconds}, indent=1, default=str))
        return
    width = max((len(p.label) for p in points), default=0)
    for i, p in enumerate(points, start=1):
        click.echo(f"{i:>5}  {p.label.ljust(width)}  ~{seconds[p.key]:,.0f} s")
    budget = (f"; its budget {budget_s / 60:.1f} min: what the first pass leaves of it pairs "
              "each group's switches in rounds, at least 6" if budget_s else "")
    click.echo(f"campaign {name}: {size.describe()} (estimated{budget}; nothing measured: "
               "--dry-run)")


def print_ranking(store_path: Path, fmt: str = "text", say_empty: bool = False) -> None:
    """Every column of the ranking per frame size and stack (report.verdict: the verdict line,
    ties, baselines and the tester's ceiling as reference rows): fmt text (plain columns,
    every number whole, as wide as they are) or md (Markdown). `vswbench show` draws the
    first screen fitted to a width."""
    # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
    from vswbench.report.model import build_model
    from vswbench.report.text import ranking_text

    model = build_model(load(store_path))
    if not model.verdicts:
        if say_empty:               # asked for (report --print): say so rather than nothing
            click.echo(f"nothing to rank in {store_path}: no search point (NDR, PDR) among "
                       f"its results; `vswbench export {store_path}` lists what it holds")
        return
    click.echo(ranking_text(model.verdicts, fmt), nl=False)


def _write_report(out_dir: Path, console: Any = None) -> None:
    # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
    from vswbench.report.build import build_report

    files = build_report(out_dir, out_dir)
    (console or out).print(f"report: {files.html}", highlight=False)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--print", "print_fmt", type=click.Choice(["text", "md"]), default=None,
              help="Print the ranking (plain text or Markdown) instead of writing the HTML.")
def report(directory: Path, print_fmt: str | None) -> int:
    """Write the HTML report (and PNG/SVG plots) of a results directory."""
    if print_fmt is not None:
        print_ranking(directory, print_fmt, say_empty=True)
        return 0
    _write_report(directory)
    return 0


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "parquet", "jsonl", "hdr"]),
              default="csv", show_default=True,
              help="json: everything; csv, parquet, jsonl: one headline row per point; hdr: the "
                   "latency histograms as an HdrHistogram log.")
@click.option("--to", "target", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file [DIRECTORY/results.FORMAT].")
def export(directory: Path, fmt: str, target: Path | None) -> int:
    """Export a results store to JSON, CSV, Parquet, JSON lines or HdrHistogram logs."""
    from vswbench.results.export import export as write_export

    target = check_output_file(target or directory / f"results.{fmt}", "--to")
    with ResultStore(store_file(directory), create=False) as store:
        write_export(store, fmt, target)
    out.print(f"wrote {target}", highlight=False)
    return 0


@click.command()
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--fail-if", "fail_if", multiple=True,
              help="Exit 1 on a significant change beyond this, e.g. ndr:-5% or p99:+10%.")
@click.option("--noise", type=FiniteRange(0, 1), default=None,
              help="Noise band for single measurements (fraction) [default: each search's "
                   "preset's: fast 0.10, quick 0.30].")
@click.option("--json", "as_json", is_flag=True)
def compare(runs: tuple[Path, ...], fail_if: tuple[str, ...], noise: float | None,
            as_json: bool) -> int:
    """Compare results directories point by point: ratios and whether they are significant."""
    from vswbench.results.compare import compare as run_compare
    from vswbench.results.compare import parse_threshold

    thresholds = [parse_threshold(t) for t in fail_if]
    result = run_compare(list(runs), noise=noise, thresholds=thresholds)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
    else:
        console = table_out()
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
        console.print(table)
        for line in result.summary_lines():      # the significant rows named, largest first
            console.print(line, highlight=False, markup=False)
        for shift in result.shifts:
            console.print(f"common shift, {shift.describe()}: points are judged against it",
                          highlight=False)
        for f in result.failures:
            err.print(f"[red]fail: {f}[/]", highlight=False)
    return 1 if result.failures else 0


@click.command()
@click.argument("stores", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--out", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="New results directory for the merged store (OUT/results.sqlite).")
@click.option("--host", "hosts", multiple=True,
              help="The host of each store, in order [the DUT's name an inventory run recorded, "
                   "else the hostname in the run's fingerprint].")
def merge(stores: tuple[Path, ...], out_dir: Path, hosts: tuple[str, ...]) -> int:
    """Merge the results stores of several hosts into one; each point keeps its host."""
    from vswbench.results.merge import describe
    from vswbench.results.merge import merge as run_merge

    check_output_dir(out_dir)
    out.print(describe(run_merge(stores, out_dir, hosts)), highlight=False)
    return 0
