"""`vswbench run DIRECTORY` (every spec in it, each into OUT/<campaign name>, then the papers'
index) and `vswbench papers table | report` (the README's table and the pages, from the stores).

    vswbench run specs/papers/                  # results/papers/<figure>/ and results/papers/index.html
    vswbench papers table results/papers        # figure | command | time here | verdict (Markdown)
    vswbench papers report results/papers       # rewrite paper.md/.html and the index
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import click

from vswbench.cli.common import err
from vswbench.cli.common import out
from vswbench.errors import UsageError
from vswbench.errors import require_root
from vswbench.results.points import read_point
from vswbench.results.store import StoredPoint
from vswbench.safefile import check_output_dir
from vswbench.safefile import write_text
from vswbench.saferead import read_text

if TYPE_CHECKING:      # campaign/ is imported when a campaign runs, not at start-up
    from vswbench.campaign.point import Point
    from vswbench.campaign.spec import CampaignSpec

DEFAULT_ROOT = Path("results/papers")


def directory_specs(directory: Path) -> list[Any]:
    """Every *.toml in the directory, parsed and checked before anything runs (exit 2 names
    every bad spec)."""
    from vswbench.campaign.spec import load_spec

    files = sorted(directory.glob("*.toml"))
    if not files:
        raise UsageError(f"{directory} holds no *.toml spec: give a spec file or a directory of "
                         "specs such as specs/papers/")
    specs, problems = [], []
    for f in files:
        try:
            specs.append(load_spec(f))
        except UsageError as e:
            problems.append(str(e))
    names = [s.name for s in specs]
    problems += [f"two specs in {directory} have the campaign name {n!r}: they would share "
                 "one results directory" for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise UsageError("\n".join(problems))
    return specs


def run_directory(directory: Path, out_root: Path | None, no_report: bool, yes: bool,
                  dry_run: bool, fmt: str, append: bool = False) -> int:
    from vswbench.campaign.estimate import campaign_size

    specs = directory_specs(directory)
    expanded = _checked_points(specs)
    sizes = [campaign_size(points, s.budget_s) for s, points in zip(specs, expanded)]
    total_s = sum(s.seconds for s in sizes)
    root = out_root or DEFAULT_ROOT
    for spec, size in zip(specs, sizes):
        err.print(f"  {spec.name}: {size.describe()}", highlight=False)
    err.print(f"{len(specs)} specs in {directory}: {sum(s.points for s in sizes)} points, about "
              f"{max(1, int(total_s // 60))} min (estimated from the points; the README's papers "
              "table gives the time each took here); results in " + str(root), highlight=False)
    if dry_run:
        return 0
    if total_s > 12 * 3600 and not yes:
        raise UsageError("these specs together are estimated over 12 hours: add --yes")
    require_root("a campaign")
    targets = _checked_targets(specs, root, no_report)
    failed = sum(_run_spec(spec, target, no_report, append)
                 for spec, target in zip(specs, targets))
    if not no_report:
        _pages(root)
    return 0 if failed == 0 else 1


def _checked_points(specs: list[CampaignSpec]) -> list[list[Point]]:
    """Each spec's points, every testbed checked before anything runs (exit 2 names every
    spec's problems)."""
    from vswbench.campaign.execute import check_points
    from vswbench.campaign.spec import expand

    expanded = [expand(s) for s in specs]
    problems = []
    for spec, points in zip(specs, expanded):
        try:
            check_points(points)
        except UsageError as e:
            problems.append(str(e).replace("campaign:", f"campaign {spec.name}:", 1))
    if problems:
        raise UsageError("\n".join(problems))
    return expanded


def _checked_targets(specs: list[CampaignSpec], root: Path, no_report: bool) -> list[Path]:
    """Each spec's results directory (its `out`, else ROOT/<name>), every output checked
    before anything runs."""
    # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
    from vswbench.report.build import check_outputs

    targets = [Path(spec.out) if spec.out else root / spec.name for spec in specs]
    if any(not spec.out for spec in specs):     # OUT itself one level, then OUT/<name> in it
        check_output_dir(root, "--out")
    for target in targets:                      # every output checked before anything runs
        check_output_dir(target, "--out")
        if not no_report:
            check_outputs(target)
    return targets


def _run_spec(spec: CampaignSpec, target: Path, no_report: bool, append: bool) -> int:
    """One spec's campaign into its directory, and its report: the points that failed."""
    from vswbench.campaign.runner import CampaignRunner
    from vswbench.report.text import point_line

    started = time.monotonic()

    def on_point(stored: StoredPoint) -> None:
        err.print(point_line(read_point(stored)), style="dim", highlight=False, markup=False)
    summary = CampaignRunner(spec, target, lambda prog, message: None, on_point,
                             append=append).run()
    out.print(f"{spec.name}: {summary.done} points measured, {summary.failed} failed, "
              f"{summary.already_done} already done ({time.monotonic() - started:.0f} s)",
              highlight=False)
    if not no_report:
        # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
        from vswbench.report.build import build_report

        build_report(target, target)
    return summary.failed


def _pages(root: Path) -> None:
    from vswbench.report.paper_page import write_pages

    files = write_pages(root)
    index = [f for f in files if f.name == "index.html"]
    out.print(f"papers: {len(files)} pages written" + (f", index {index[0]}" if index else ""),
              highlight=False)


@click.group()
def papers() -> None:
    """The papers' figures reproduced (specs/papers/): the README table and the pages."""


MARK_START, MARK_END = "<!-- papers-table -->", "<!-- /papers-table -->"


@papers.command("table")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path),
                default=DEFAULT_ROOT)
@click.option("--readme", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Write the table into this file between the lines "
              f"{MARK_START} and {MARK_END} instead of printing it.")
def table(root: Path, readme: Path | None) -> int:
    """Print the Markdown table figure | command | time here | verdict from the stores."""
    from vswbench.report.paper_page import collect
    from vswbench.report.paper_page import readme_table

    doc = read_text(readme, "README", "--readme", cap=4_000_000) if readme else ""  # first
    text = readme_table(collect(root))
    if readme is None:
        click.echo(text, nl=False)
        return 0
    start, end = doc.find(MARK_START), doc.find(MARK_END)
    if start < 0 or end < start:
        raise UsageError(f"{readme} has no {MARK_START} ... {MARK_END} lines: add them where "
                         "the table goes")
    write_text(readme, doc[:start + len(MARK_START)] + "\n" + text + doc[end:])
    out.print(f"wrote the papers table into {readme}", highlight=False)
    return 0


@papers.command("report")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path),
                default=DEFAULT_ROOT)
def report(root: Path) -> int:
    """Write paper.md/paper.html per figure and index.md/index.html from the stores."""
    _pages(root)
    return 0
