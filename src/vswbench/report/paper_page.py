"""The papers' figures reproduced: per results directory of a paper spec a page (paper.md and
paper.html beside report.html) with the figure, its analogue here, the published values beside
ours and each qualitative law's verdict; for a directory of such runs an index (index.md,
index.html) and the README's table (figure, command, time here, verdict).

The [paper] tables are read from the spec text every run stored (results.store keeps it), so a
results directory alone is enough; the time is the stored runs' wall time, the verdicts are
report/paper_claims.py's, computed from the stored points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from pathlib import Path

from vswbench.campaign.paper import PaperInfo
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.report.paper_claims import ClaimVerdict
from vswbench.report.paper_claims import ReferenceRow
from vswbench.report.paper_claims import judge
from vswbench.report.paper_claims import overall
from vswbench.report.paper_claims import references
from vswbench.report.paper_plots import DelayCurve
from vswbench.report.paper_plots import delay_curves
from vswbench.report.paper_plots import delay_ecdf_png
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.store import STORE_NAME
from vswbench.safefile import write_bytes
from vswbench.safefile import write_text

PAGE_MD, PAGE_HTML, INDEX_MD, INDEX_HTML = "paper.md", "paper.html", "index.md", "index.html"
DELAY_PNG = "paper-delay-ecdf.png"


@dataclass(frozen=True)
class PaperResult:
    paper: PaperInfo
    directory: Path
    seconds: float | None                  # the stored runs' wall time
    points_done: int
    points_failed: int
    verdicts: tuple[ClaimVerdict, ...]
    references: tuple[ReferenceRow, ...]
    spec_path: str
    delay_curves: tuple[DelayCurve, ...] = ()     # when a claim or reference uses delay_*

    @property
    def verdict(self) -> str:
        return overall(self.verdicts)

    @property
    def command(self) -> str:
        return f"vswbench run {self.spec_path}"

    @property
    def time_text(self) -> str:
        if self.seconds is None:
            return "not run"
        m, s = divmod(int(round(self.seconds)), 60)
        return f"{m} min {s:02d} s"


def _seconds(data: StoredResults, campaign: str) -> float | None:
    total, seen = 0.0, False
    for r in data.runs:
        if r.spec_name != campaign or not r.finished:
            continue
        try:
            fmt = "%Y-%m-%dT%H:%M:%S%z"
            total += (datetime.strptime(r.finished, fmt)
                      - datetime.strptime(r.started, fmt)).total_seconds()
            seen = True
        except ValueError:
            continue
    return total if seen else None


def paper_result(directory: str | Path) -> PaperResult | None:
    """The paper figure measured in a results directory (None: its spec has no [paper])."""
    data = load(directory)
    for run in reversed(data.runs):
        try:
            spec = parse_spec(run.spec_text, source=f"{directory} (stored spec)")
        except UsageError:
            continue
        if spec.paper is None:
            continue
        mine = StoredResults(data.store_path,
                             tuple(p for p in data.points if p.campaign == spec.name),
                             tuple(r for r in data.runs if r.spec_name == spec.name))
        return PaperResult(
            spec.paper, Path(directory), _seconds(mine, spec.name),
            sum(p.status == "done" for p in mine.points),
            sum(p.status != "done" for p in mine.points),
            tuple(judge(c, mine) for c in spec.paper.claims),
            tuple(references(spec.paper, mine)), f"specs/papers/{spec.paper.figure}.toml",
            tuple(delay_curves(mine)) if _uses_delay(spec.paper) else ())
    return None


def _uses_delay(paper: PaperInfo) -> bool:
    terms = [r.ours for r in paper.references if r.ours] + [
        t for c in paper.claims if c.check for t in (c.check.left, c.check.right) if t]
    return any((t.metric or "").startswith("delay_") for t in terms)


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [list(head), ["---"] * len(head)] + [[c.replace("|", "\\|") for c in r]
                                                  for r in rows]
    return "\n".join("| " + " | ".join(r) + " |" for r in cells) + "\n"


def markdown(r: PaperResult, index: bool = False) -> str:
    p = r.paper
    out = [f"## {p.figure}: {p.caption}\n",
           f"{p.paper_title}, {p.source}.\n",
           f"- varies: {p.varies}", f"- analogue here: {p.analogue}",
           "- differs: " + "; ".join(p.differences),
           f"- command: `{r.command}`; time here: {r.time_text} "
           f"({r.points_done} points done, {r.points_failed} not)",
           f"- verdict: **{r.verdict}**\n"]
    if r.delay_curves:
        out.append(f"![switch delay ECDF, baseline subtracted]({r.directory.name}/{DELAY_PNG})\n"
                   if index else f"![switch delay ECDF, baseline subtracted]({DELAY_PNG})\n")
    if r.references:
        out.append(_md_table(("quantity", "paper", "ours", "paper, normalised",
                              "ours, normalised", "normalised to", "source"),
                             [(x.quantity, x.theirs, x.ours or "-", x.theirs_normalised or "-",
                               x.ours_normalised or "-", x.basis or "-", x.source)
                              for x in r.references]))
    out.append(_md_table(("law", "source", "check", "verdict", "measured / why"),
                         [(v.law, v.source, f"`{v.check}`" if v.check else "-", v.verdict,
                           v.detail) for v in r.verdicts]))
    return "\n".join(out)


def readme_table(results: Sequence[PaperResult]) -> str:
    """Figure, command, time here, verdict: the README's table."""
    rows = [(f"{r.paper.figure} ({r.paper.source})", f"`{r.command}`", r.time_text, r.verdict)
            for r in results]
    total = sum(r.seconds or 0.0 for r in results)
    m, s = divmod(int(round(total)), 60)
    return (_md_table(("figure", "command", "time here", "verdict"), rows)
            + f"\nTotal time here: {m} min {s:02d} s for {len(results)} figures.\n")


def _html(body_md_blocks: Sequence[PaperResult], title: str, links: bool) -> str:
    parts = []
    for r in body_md_blocks:
        p = r.paper
        link = (f' (<a href="{escape(r.directory.name)}/report.html">report</a>, '
                f'<a href="{escape(r.directory.name)}/{PAGE_HTML}">page</a>)' if links
                else ' (<a href="report.html">full report</a>)')
        parts.append(f'<section id="{escape(p.figure)}"><h2>{escape(p.figure)}: '
                     f'{escape(p.caption)}</h2><p>{escape(p.paper_title)}, {escape(p.source)}'
                     f'{link}</p><ul><li>varies: {escape(p.varies)}</li><li>analogue here: '
                     f'{escape(p.analogue)}</li><li>differs: {escape("; ".join(p.differences))}'
                     f'</li><li>command: <code>{escape(r.command)}</code>; time here: '
                     f'{escape(r.time_text)}</li><li>verdict: <b>{escape(r.verdict)}</b>'
                     f'</li></ul>')
        if r.delay_curves:
            src = f"{r.directory.name}/{DELAY_PNG}" if links else DELAY_PNG
            parts.append(f'<p><img src="{escape(src)}" alt="switch delay ECDF"></p>')
        if r.references:
            parts.append(_html_table(("quantity", "paper", "ours", "paper, normalised",
                                      "ours, normalised", "normalised to", "source"),
                                     [(x.quantity, x.theirs, x.ours or "-",
                                       x.theirs_normalised or "-", x.ours_normalised or "-",
                                       x.basis or "-", x.source) for x in r.references]))
        parts.append(_html_table(("law", "source", "check", "verdict", "measured / why"),
                                 [(v.law, v.source, v.check or "-", v.verdict, v.detail)
                                  for v in r.verdicts]) + "</section>")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:"
            "collapse}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}</style>"
            f"</head><body><h1>{escape(title)}</h1>{''.join(parts)}</body></html>\n")


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _write(path: Path, text: str) -> None:
    write_text(path, text)


def collect(root: str | Path) -> list[PaperResult]:
    """Every paper run under root (root itself, or its subdirectories holding a store)."""
    base = Path(root)
    dirs = [base] if (base / STORE_NAME).is_file() else sorted(
        d for d in base.iterdir() if (d / STORE_NAME).is_file()) if base.is_dir() else []
    if not dirs:
        raise UsageError(f"no results store in {base} or its subdirectories: give the --out of "
                         "`vswbench run specs/papers/` (results/papers)")
    return [r for r in (paper_result(d) for d in dirs) if r is not None]


def write_pages(root: str | Path) -> list[Path]:
    """paper.md and paper.html in every paper run's directory; index.md and index.html in root
    when it holds several. Returns the files written."""
    results = collect(root)
    written = []
    for r in results:
        png = delay_ecdf_png(r.delay_curves, f"{r.paper.figure}: switch delay (ECDF)")
        if png is not None:
            write_bytes(r.directory / DELAY_PNG, png)
            written.append(r.directory / DELAY_PNG)
        _write(r.directory / PAGE_MD, markdown(r))
        _write(r.directory / PAGE_HTML, _html([r], r.paper.figure, links=False))
        written += [r.directory / PAGE_MD, r.directory / PAGE_HTML]
    base = Path(root)
    if not (base / STORE_NAME).is_file() and results:
        _write(base / INDEX_MD, "# The papers' figures reproduced here\n\n" + readme_table(results)
               + "\n" + "\n".join(markdown(r, index=True) for r in results))
        _write(base / INDEX_HTML, _html(results, "The papers' figures reproduced here", True))
        written += [base / INDEX_MD, base / INDEX_HTML]
    return written
