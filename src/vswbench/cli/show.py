"""`vswbench show DIR`: a stored run's first screen, redrawn at the terminal's width (the one
`vswbench run` ends with: report/screen.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from vswbench.report.screen import FORMATS
from vswbench.report.screen import MIN_WIDTH
from vswbench.report.screen import as_json
from vswbench.report.screen import render_md
from vswbench.report.screen import render_text
from vswbench.results.points import load


def terminal_width() -> int:
    """The terminal's columns (COLUMNS where exported); 80 when the output is not a terminal."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def first_screen(store_path: Path, fmt: str = "text", width: int | None = None,
                 wide: bool = False, say_empty: bool = False) -> None:
    """Print the first screen of a store (a results directory or its store file)."""
    # imported when used: the report pulls in matplotlib and scipy (1.2 s of a start-up)
    from vswbench.report.model import build_model

    verdicts = build_model(load(store_path)).verdicts
    if fmt == "json":
        click.echo(json.dumps({"store": str(store_path), "verdicts": as_json(verdicts)},
                              indent=1, default=str))
        return
    if not verdicts:
        if say_empty:
            click.echo(f"nothing to rank in {store_path}: no search point (NDR, PDR) among "
                       f"its results; `vswbench export {store_path}` lists what it holds")
        return
    where = str(store_path) if len(str(store_path)) <= 40 else "DIR"   # a long path: no wrap
    more = "" if wide else f"Every column: vswbench show {where} --wide. "
    render = render_md if fmt == "md" else render_text
    click.echo(render(verdicts, width or terminal_width(), wide, more), nl=False)


@click.command()
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
@click.option("--width", type=click.IntRange(MIN_WIDTH, 10_000), default=None,
              help="Columns to fit [the terminal's; 80 when the output is not a terminal].")
@click.option("--wide", is_flag=True,
              help="Every column (NDR, CT, PDR, rounds, loss, modes ...), whatever the width.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text (aligned columns, every number whole), md (Markdown) or json (every "
                   "figure of every row).")
def show(directory: Path, width: int | None, wide: bool, fmt: str) -> int:
    """Redraw a stored run's first screen (the verdicts and the ranking) at the terminal's
    width; DIRECTORY is a results directory (or its results.sqlite)."""
    first_screen(directory, fmt, width, wide, say_empty=True)
    return 0
