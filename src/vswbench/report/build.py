"""The report's files: the HTML page, its plots (PNG and SVG) and the error-bar JSON/CSV written
into a results directory (build_report), every output path checked before a run (check_outputs).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from vswbench.errors import UsageError
from vswbench.report.figure import Plot
from vswbench.report.html import render_page
from vswbench.report.model import build_model
from vswbench.report.plots import make_plots
from vswbench.report.product_bars import product_bars_csv
from vswbench.report.product_bars import product_bars_json
from vswbench.report.profiles import FOLDED_DIR
from vswbench.report.profiles import write_folded
from vswbench.report.sections import SECTION_IDS
from vswbench.report.spread import error_bars_csv
from vswbench.report.spread import error_bars_json
from vswbench.results.points import load
from vswbench.safefile import check_output_dir
from vswbench.safefile import make_dir
from vswbench.safefile import refuse_unsafe
from vswbench.safefile import refuse_untrusted
from vswbench.safefile import write_bytes
from vswbench.units import DEFAULT_LINK_BPS

REPORT_NAME = "report.html"
PLOTS_DIR = "plots"
ERROR_BARS_JSON = "error_bars.json"
ERROR_BARS_CSV = "error_bars.csv"
PRODUCT_BARS_JSON = "product_error_bars.json"
PRODUCT_BARS_CSV = "product_error_bars.csv"


@dataclass(frozen=True)
class ReportFiles:
    html: Path                           # OUT/report.html
    plots_dir: Path                      # OUT/plots
    plots: tuple[Path, ...]              # every file written in plots_dir (NAME.png, NAME.svg)
    sections: tuple[str, ...]            # ids of the sections on the page, in page order
    empty_sections: tuple[str, ...]      # sections left out: no data in this campaign

    @property
    def png(self) -> tuple[Path, ...]:
        return tuple(p for p in self.plots if p.suffix == ".png")

    @property
    def svg(self) -> tuple[Path, ...]:
        return tuple(p for p in self.plots if p.suffix == ".svg")


def _write(path: Path, data: bytes) -> None:
    """Write beside, then rename (safefile): a reader never sees half a file."""
    write_bytes(path, data)


def check_outputs(out_dir: str | Path, create: bool = True) -> Path:
    """Before anything is measured or drawn: OUT is a directory files can be made in, and
    every file and directory the report writes there is a regular file (or directory) or
    nothing: a link, a device, a FIFO or a directory at report.html is refused (exit 2)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"report output {out} is a file: give a directory")
    check_output_dir(out, create=create)
    for name in (REPORT_NAME, ERROR_BARS_JSON, ERROR_BARS_CSV, PRODUCT_BARS_JSON,
                 PRODUCT_BARS_CSV):
        refuse_unsafe(out / name)
        refuse_untrusted(out / name)        # a hard link, another owner, group/other write
    if (out / PLOTS_DIR).is_dir() and not (out / PLOTS_DIR).is_symlink():
        for plot in (out / PLOTS_DIR).iterdir():
            refuse_untrusted(plot)
    for name in (PLOTS_DIR, FOLDED_DIR):
        st = os.lstat(out / name) if os.path.lexists(out / name) else None
        if st is not None and (stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode)):
            raise UsageError(f"{out / name} is not a directory (a link or a file): remove it, "
                             "or give another output directory")
    return out


def build_report(store_path_or_dir: str | Path, out_dir: str | Path, *,
                 campaign: str | None = None,
                 link_bps: float = DEFAULT_LINK_BPS) -> ReportFiles:
    """Read the store (a run's directory or its results.sqlite), write OUT/report.html and
    OUT/plots/*.png|svg. `campaign` limits the report to one campaign of the store; `link_bps`
    is the reference link of the line-rate curve (10 GbE by default). Plot files a previous
    report left in OUT/plots that this one does not write are removed."""
    data = load(store_path_or_dir, campaign)
    out = check_outputs(out_dir)           # before anything is drawn
    model = build_model(data, link_bps)
    plots = make_plots(model)
    plots_dir = make_dir(out / PLOTS_DIR)
    written = _write_plots(plots_dir, plots)
    html_path = out / REPORT_NAME
    if model.error_bars:  # the parameter error bars as data too (Fang et al.'s stability result)
        _write(out / ERROR_BARS_JSON, error_bars_json(model.error_bars).encode())
        _write(out / ERROR_BARS_CSV, error_bars_csv(model.error_bars).encode())
    if model.product_bars:  # Fang's Fig. 7 over the whole product, beside them
        _write(out / PRODUCT_BARS_JSON, product_bars_json(model.product_bars).encode())
        _write(out / PRODUCT_BARS_CSV, product_bars_csv(model.product_bars).encode())
    write_folded(model.profiled, out)   # OUT/profiles/*.folded (flamegraph.pl, speedscope)
    page = render_page(model, plots)
    _write(html_path, page.encode("utf-8"))
    shown = tuple(re.findall(r'<section id="([^"]+)">', page))
    empty = tuple(s for s in SECTION_IDS if s not in shown)
    return ReportFiles(html_path, plots_dir, written, shown, empty)


def _write_plots(plots_dir: Path, plots: list[Plot]) -> tuple[Path, ...]:
    written = []
    for plot in plots:
        for suffix, data in ((".png", plot.png), (".svg", plot.svg)):
            path = plots_dir / f"{plot.name}{suffix}"
            _write(path, data)
            written.append(path)
    keep = set(written)
    for stale in sorted(plots_dir.iterdir()):
        if stale.suffix in (".png", ".svg") and stale not in keep and not stale.is_symlink() \
                and stale.is_file():
            stale.unlink()
    return tuple(written)
