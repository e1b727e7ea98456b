"""The first screen at a terminal's width: what `vswbench run` ends with and `vswbench show DIR`
redraws (issue 44, part 1).

Per frame size and stack: the verdict (the order, naming every switch, wrapped to the width:
two lines at 80 columns), its evidence on lines of its own below it, then one row per switch.
At any width a row has the rank, the switch, its headline with the stated range (`>=`: the
tester's limit), the loss at its CT's load, p50 and p99 latency and cycles per packet; the
other columns (NDR, CT, PDR, rounds, Gbit/s, ...) join in order of EXTRA while they fit, every
one with `wide` (`vswbench show DIR --wide`, `report --print text`). Nothing is cut to fit: a
column that does not fit is left out whole, a line is broken between words, never inside a
number or a name. The same choice of columns as Markdown (`md`) and every figure as JSON.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vswbench.report.backends import BASELINE
from vswbench.report.marks import latency_loss_cell
from vswbench.report.marks import mark
from vswbench.report.marks import ndr_loss_cell
from vswbench.report.marks import ndr_loss_mark
from vswbench.report.marks import percentile_cell
from vswbench.report.verdict import Verdict
from vswbench.report.verdict_entry import Entry
from vswbench.report.verdict_entry import mpps

REFERENCE = re.compile(r"\b(?:baseline|calibration) \S+ (?:≥ )?[\d.]+(?![\d.]| Mpps)")
MIN_WIDTH = 40                  # narrower, and the core columns themselves cannot fit
GAP = "  "
FORMATS = ("text", "md", "json")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _two(pps: float) -> str:
    """A range's end in Mpps, two significant digits: 0.37, 2.4, 16."""
    v = pps / 1e6
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}" if v >= 1 else f"{v:.2f}" if v >= 0.1 \
        else f"{v:.2g}"


def headline(v: Verdict, e: Entry) -> tuple[str, str]:
    """The headline and its range as two texts ("-" for none): in a group ranked by rounds,
    only its rounds' figure (a switch without rounds has none in this column)."""
    pps = e.headline_pps if not v.rounds or (e.paired and e.paired.median_pps) else None
    if pps is None:
        return "-", ""
    span = e.stated_range
    return (">=" if e.at_least else "") + mpps(pps), (
        "" if span is None else f"({_two(span[0])}-{_two(span[1])})")


@dataclass(frozen=True)
class Column:
    head: str
    cell: Callable[[Verdict, Entry, bool], str]     # (verdict, entry, wide)
    left: bool = False


def _rounds(v: Verdict, e: Entry, wide: bool) -> str:
    return "-" if e.paired is None else str(len(e.paired.samples))


CORE = ("#", "switch", "headline", "loss", "p50 us", "p99 us", "cyc/pkt")
COLUMNS: dict[str, Column] = {c.head: c for c in (
    Column("#", lambda v, e, w: rank_cell(e), left=True),
    Column("switch", lambda v, e, w: e.switch, left=True),
    Column("headline", lambda v, e, w: "\t".join(headline(v, e))),
    Column("loss", lambda v, e, w: (ndr_loss_cell if w else ndr_loss_mark)(e.row.ndr_load_loss)),
    Column("NDR", lambda v, e, w: mpps(e.row.classic_ndr_pps) if e.row.classic_ndr_pps
           else "-"),
    Column("CT", lambda v, e, w: (">=" if e.row.generator_bound else "") + mpps(e.row.ndr_pps)
           if e.row.ndr_pps else "-"),
    Column("PDR", lambda v, e, w: mpps(e.row.pdr_pps) if e.row.pdr_pps else "-"),
    Column("rounds", _rounds),
    Column("Gbit/s", lambda v, e, w: _num(e.row.ndr_gbps, 3)),
    Column("p50 us", lambda v, e, w: percentile_cell(e.row.latency, "p50")),
    Column("p99 us", lambda v, e, w: percentile_cell(e.row.latency, "p99")),
    Column("lat. loss", lambda v, e, w: latency_loss_cell(e.row.latency)),
    Column("cyc/pkt", lambda v, e, w: _num(e.row.cycles_per_packet, 0)),
    Column("useful", lambda v, e, w: _num(e.row.useful_cycles_per_packet, 0)),
    Column("reps", lambda v, e, w: str(e.row.repetitions)),
    Column("mode", lambda v, e, w: " / ".join(e.info.forwarding_modes) or "-", left=True),
)}
# the columns beyond CORE, in the order they join while they fit
EXTRA = ("NDR", "CT", "PDR", "rounds", "Gbit/s", "lat. loss", "useful", "reps", "mode")


def rank_cell(e: Entry) -> str:
    if not e.info.ranked:
        return "base" if e.info.role == BASELINE else "cal."
    return "-" if e.rank is None else f"={e.rank}" if e.tied else str(e.rank)


def _head(v: Verdict, name: str) -> str:
    if name == "headline":
        return ("MRR" if v.rounds else "CT") + " Mpps (range)"
    return name


def _table(v: Verdict, names: Sequence[str], wide: bool) -> list[list[str]]:
    """The header and one row per entry (ranked, then references, then the ceiling)."""
    entries = [*v.ranked, *v.references]
    rows = [[_head(v, n) for n in names]]
    rows += [[COLUMNS[n].cell(v, e, wide) for n in names] for e in entries]
    if v.ceiling_pps:
        rows.append(["ceil", "tester's ceiling", mpps(v.ceiling_pps) + "\t"]
                    + [""] * (len(names) - 3))
    if "headline" in names:                       # the figures aligned, their ranges after
        i = list(names).index("headline")
        parts = [r[i].split("\t") if "\t" in r[i] else [r[i], ""] for r in rows[1:]]
        fig = max(len(p[0]) for p in parts)
        for r, (f, rng) in zip(rows[1:], parts):
            r[i] = (f.rjust(fig) + (" " + rng if rng else "")).rstrip()
    return rows


def _widths(rows: list[list[str]]) -> list[int]:
    return [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]


def columns_for(v: Verdict, width: int | None, wide: bool = False) -> list[str]:
    """The columns of a verdict's table at `width`: CORE (as many of them as fit, from the
    left), then EXTRA's while they fit; every column with `wide` (no width)."""
    order = [n for n in COLUMNS if v.rounds or n != "CT"]
    if wide or width is None:
        return order
    chosen = [n for n in CORE]
    while len(chosen) > 3 and _line_width(v, chosen) > width:
        chosen.pop()                               # a very narrow width: the rightmost go
    for extra in EXTRA:
        if extra == "CT" and not v.rounds:
            continue                               # the headline is the CT itself
        trial = [n for n in order if n in chosen or n == extra]
        if _line_width(v, trial) <= width:
            chosen = trial
    return [n for n in order if n in chosen]


def _line_width(v: Verdict, names: Sequence[str]) -> int:
    return sum(_widths(_table(v, names, False))) + len(GAP) * (len(names) - 1)


def order_text(v: Verdict) -> str:
    """The verdict's first line: '64 B, kernel switches: xdp > tc-mirred > router = bridge; at
    the tester's limit: macvlan', every switch of the group named (unranked: at least its
    figure, the tester's limit, and not decided against the switches above it)."""
    parts: list[str] = []
    unranked, missing = [], []
    previous: Entry | None = None
    for e in v.ranked:
        if headline(v, e)[0] == "-":
            missing.append(e.switch)
            continue
        if e.rank is None:
            unranked.append(e.switch)
            continue
        if previous is not None:
            parts.append("=" if previous.rank == e.rank else ">")
        parts.append(e.switch)
        previous = e
    text = f"{v.title}: " + (" ".join(parts) if parts else "no switch ranked")
    if unranked:                       # at least its figure, undecided against those above
        text += f"; at the tester's limit: {', '.join(unranked)}"
    if missing:
        text += f"; no figure: {', '.join(missing)}"
    return text


def evidence(v: Verdict) -> list[str]:
    """The verdict's detail, a line each: how each step was decided (repetitions, tests,
    intervals), the baselines and the ceiling, what was not confirmed."""
    if v.rounds:
        head, _, rest = v.line.partition(" Mpps")
        lines = [f"{v.rounds} paired rounds: " + head.split(": ", 1)[-1] + " Mpps", *v.details]
        rest = rest.strip().removeprefix(";").strip().removesuffix(".")
        rest = REFERENCE.sub(r"\g<0> Mpps", rest)        # the order line's references: a unit
        return lines + ([rest] if rest else [])
    prefix = v.title + ": "
    line = v.line[len(prefix):] if v.line.startswith(prefix) else v.line
    return [line.removesuffix(".")] if line else []


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def legend(v_list: Sequence[Verdict], more: str) -> str:
    mrr = any(v.rounds for v in v_list)
    return (("MRR: the received rate with the tester at its ceiling, median of the paired "
             "rounds that rank the group; " if mrr else "")
            + "CT: MLRsearch's conditional throughput (loss 0); (range): the span of the rounds "
            "or repetitions, widened 10 % each side; >=: lost nothing, the tester's limit; =N: "
            "tied; loss: the worst trial at the CT's load; p50, p99: latency at 90 % of the CT "
            "(*: its trial lost frames, !: unreliable); cyc/pkt: CPU cycles per packet. "
            f"{more}Every term: docs/concepts/index.md.")


def render_text(verdicts: Sequence[Verdict], width: int, wide: bool = False,
                more: str = "") -> str:
    """The first screen as plain text: no line over `width` (but with `wide`, a table's)."""
    out: list[str] = []
    for v in verdicts:
        out += _wrap(order_text(v), width)
        for d in evidence(v):
            out += _wrap(d, width, "  ", "    ")
        out.append("")
        names = columns_for(v, width, wide)
        rows = _table(v, names, wide)
        widths = _widths(rows)
        out += [GAP.join(c.ljust(w) if COLUMNS[n].left else c.rjust(w)
                         for n, c, w in zip(names, r, widths)).rstrip() for r in rows]
        out.append("")
    out += _wrap(legend(verdicts, more), width)
    return "\n".join(out) + "\n"


def render_md(verdicts: Sequence[Verdict], width: int, wide: bool = False,
              more: str = "") -> str:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")
    out: list[str] = []
    for v in verdicts:
        names = columns_for(v, width, wide)
        rows = _table(v, names, wide)
        out += [f"## {esc(v.title)}", "", esc(order_text(v)), ""]
        out += [f"- {esc(d)}" for d in evidence(v)] + [""]
        out.append("| " + " | ".join(esc(c) for c in rows[0]) + " |")
        out.append("|" + "|".join(":---" if COLUMNS[n].left else "---:" for n in names) + "|")
        out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows[1:]]
        out.append("")
    out.append(esc(legend(verdicts, more)))
    return "\n".join(out) + "\n"


def _entry_json(v: Verdict, e: Entry) -> dict[str, Any]:
    r, lat = e.row, e.row.latency
    pps = e.headline_pps if not v.rounds or (e.paired and e.paired.median_pps) else None
    span = e.stated_range
    loss = r.ndr_load_loss
    return {
        "rank": e.rank, "tied": e.tied, "role": e.info.role if not e.info.ranked else "switch",
        "switch": e.switch, "headline": "mrr" if v.rounds else "conditional_throughput",
        "headline_pps": pps, "at_least": e.at_least if pps is not None else None,
        "range_pps": None if span is None else list(span),
        "rounds": None if e.paired is None else len(e.paired.samples),
        "ndr_pps": r.classic_ndr_pps, "conditional_throughput_pps": r.ndr_pps,
        "generator_bound": r.generator_bound, "pdr_pps": r.pdr_pps, "ndr_gbps": r.ndr_gbps,
        "loss_at_ct": None if loss is None else {
            "trials": loss.trials, "lossy_trials": loss.lossy_trials,
            "worst_lost_frames": loss.worst_lost_frames,
            "worst_loss_ratio": loss.worst_loss_ratio},
        "p50_us": None if lat is None else lat.p50_us,
        "p99_us": None if lat is None else lat.p99_us,
        "latency_marks": {p: mark(lat, p) for p in ("p50", "p99") if mark(lat, p)},
        "cycles_per_packet": r.cycles_per_packet,
        "useful_cycles_per_packet": r.useful_cycles_per_packet,
        "repetitions": r.repetitions, "modes": list(e.info.forwarding_modes)}


def as_json(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [{"title": v.title, "scenario": v.scenario, "size": v.size, "variant": v.variant,
             "stack": v.stack, "order": order_text(v), "evidence": evidence(v),
             "rounds": v.rounds, "ceiling_pps": v.ceiling_pps,
             "rows": [_entry_json(v, e) for e in (*v.ranked, *v.references)]}
            for v in verdicts]
