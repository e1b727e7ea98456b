"""The report's ranking, one table per frame size and stack, fitted to a 1280 px screen (issue 44,
part 3): the verdict's order above it and its evidence behind a disclosure; eight columns a row
(rank, switch, the headline with its stated range, the loss at the CT's load, p50 and p99
latency, cycles per packet, the NDR) on one line each; every other column (what the backend
is, NDR, CT, PDR, Gbit/s, the tie rule's noise range, the latency trial's loss, useful cycles,
searches, CV, how it ran) in a second table behind a disclosure below it, scrolling inside its
own box. The baselines and the tester's ceiling are reference rows, as in the terminal
(report/screen.py draws the same verdicts as text)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from vswbench.report.backends import BASELINE
from vswbench.report.marks import MARKS_NOTE
from vswbench.report.marks import latency_loss_cell
from vswbench.report.marks import ndr_loss_cell
from vswbench.report.marks import ndr_loss_mark
from vswbench.report.marks import percentile_cell
from vswbench.report.screen import evidence
from vswbench.report.screen import order_text
from vswbench.report.verdict import Verdict
from vswbench.report.verdict_entry import Entry
from vswbench.report.verdict_entry import mpps

DASH = "–"


def _num(value: float | int | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def _rank(e: Entry) -> str:
    if not e.info.ranked:
        return "baseline" if e.info.role == BASELINE else "calibration"
    return DASH if e.rank is None else f"={e.rank}" if e.tied else str(e.rank)


def _headline(v: Verdict, e: Entry) -> str:
    """'≥ 0.690 (0.59–0.80)': in a group ranked by rounds only its rounds' figure."""
    pps = e.headline_pps if not v.rounds or (e.paired and e.paired.median_pps) else None
    if pps is None:
        return DASH
    span = e.stated_range
    rng = "" if span is None else f' <span class="range">({mpps(span[0])}–{mpps(span[1])})</span>'
    return ("≥ " if e.at_least else "") + mpps(pps) + rng


HEAD = ["#", "switch", "{headline} Mpps (range)", "loss at CT", "p50 µs @90 %", "p99 µs @90 %",
        "cycles/packet", "NDR Mpps"]
DETAIL_HEAD = ["switch", "what it is", "NDR Mpps", "CT Mpps", "noise range Mpps", "CT Gbit/s",
               "PDR Mpps", "rounds", "loss at CT", "latency trial loss", "useful cycles/packet",
               "searches", "CT CV", "how it ran (mode; CPUs; tester I/O; versions)"]
DETAIL_TEXT = {0, 1, 8, 9, 13}


def _row(v: Verdict, e: Entry, css: str) -> str:
    r = e.row
    cells = [escape(_rank(e)), f"<b>{escape(e.switch)}</b>", _headline(v, e),
             escape(ndr_loss_mark(r.ndr_load_loss, DASH)),
             escape(percentile_cell(r.latency, "p50", DASH)),
             escape(percentile_cell(r.latency, "p99", DASH)), _num(r.cycles_per_packet, 0),
             mpps(r.classic_ndr_pps) if r.classic_ndr_pps else DASH]
    tds = "".join(f"<td>{c}</td>" if i < 2 else f'<td class="num">{c}</td>'
                  for i, c in enumerate(cells))
    return (f'<tr class="{css}" data-switch="{escape(e.switch)}" '
            f'title="{escape(e.info.description)}">{tds}</tr>')


def _detail_row(e: Entry) -> str:
    r = e.row
    bound = "≥ " if r.generator_bound else ""
    noise = DASH if e.interval is None else f"{mpps(e.interval[0])}–{mpps(e.interval[1])}"
    cells = [f"<b>{escape(e.switch)}</b>", escape(e.info.description),
             mpps(r.classic_ndr_pps) if r.classic_ndr_pps else DASH, f"{bound}{mpps(r.ndr_pps)}",
             noise, f"{bound}{_num(r.ndr_gbps, 3)}", mpps(r.pdr_pps),
             DASH if e.paired is None else str(len(e.paired.samples)),
             escape(ndr_loss_cell(r.ndr_load_loss, DASH)),
             escape(latency_loss_cell(r.latency, DASH)), _num(r.useful_cycles_per_packet, 0),
             str(r.repetitions), DASH if r.ndr_cv is None else f"{r.ndr_cv * 100:.1f} %",
             escape(e.info.where())]
    tds = "".join(f"<td>{c}</td>" if i in DETAIL_TEXT else f'<td class="num">{c}</td>'
                  for i, c in enumerate(cells))
    return f'<tr class="detail" data-detail="{escape(e.switch)}">{tds}</tr>'


def _table(v: Verdict) -> str:
    rows = [_row(v, e, "ranked tied" if e.tied else "ranked") for e in v.ranked]
    rows += [_row(v, e, "reference") for e in v.references]
    if v.ceiling_pps:
        rows.append(f'<tr class="ceiling"><td>ceiling</td><td>the tester\'s ceiling</td>'
                    f'<td class="num">{mpps(v.ceiling_pps)}</td><td colspan="{len(HEAD) - 3}">'
                    "no switch can show more (at it, a result is \"≥\")</td></tr>")
    th = "".join(f"<th>{escape(h.format(headline='MRR' if v.rounds else 'CT'))}</th>"
                 for h in HEAD)
    detail_th = "".join(f"<th>{escape(h)}</th>" for h in DETAIL_HEAD)
    details = "".join(_detail_row(e) for e in (*v.ranked, *v.references))
    proof = "".join(f"<li>{escape(line)}</li>" for line in evidence(v))
    return (f'<h3 class="verdict" id="{anchor(v)}">{escape(order_text(v))}</h3>'
            f'<table class="ranking"><thead><tr>{th}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>"
            + (f'<details class="evidence"><summary>How the order was decided</summary>'
               f"<ul>{proof}</ul></details>" if proof else "")
            + '<details class="more"><summary>Every column: what each backend is, NDR, CT, '
            "PDR, Gbit/s, noise range, losses, useful cycles, searches, CV, how it ran</summary>"
            f'<div class="scroll"><table class="ranking-detail"><thead><tr>{detail_th}</tr>'
            f"</thead><tbody>{details}</tbody></table></div></details>")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def anchor(v: Verdict) -> str:
    """The id of a verdict's table (the summary links to it)."""
    return f"ranking-{_slug(v.title)}"


RANKING_NOTE = (
    '<p class="footnote">MRR: the received rate with the tester at its ceiling, the median over '
    "the paired rounds that rank the group; CT: MLRsearch's conditional throughput of the NDR "
    "goal, the median over a campaign's repetitions (as are cycles per packet and the latency "
    "percentiles); NDR: RFC 2544's, every trial counted (– where every trial lost frames); "
    "(range): the span of the rounds (or of two or more repetitions), widened 10 % each side; "
    "all in millions of frames per second; noise range: the range of the tie rule above; "
    "Gbit/s on the wire (each frame plus 20 bytes of preamble and inter-frame gap). Latency in "
    "microseconds at 90 % of the CT (– when none was measured): of the CT its latency point "
    "searched or took from its search twin, the first repetition. Cycles per packet: the "
    "median of the search's lossless trials at the CT's load (else its highest lossless trial "
    "below it): busy CPU time of all cores (a polling core counts 100 % whatever the load) "
    "over the frames received; useful cycles, where the switch counts them (OVS PMD processing "
    "cycles, testpmd --record-core-cycles), only the switch's cycles on bursts that carried "
    "frames. CT CV: coefficient of variation over repetitions (or the search's own --repeat). "
    "≥: generator-bound, the tester's limit; the switch forwards at least this much. =N: tied "
    "rank. Hover a switch for what it is. " + escape(MARKS_NOTE) + "</p>")


def ranking_tables(verdicts: Sequence[Verdict]) -> str:
    if not verdicts:
        return '<p class="empty">no search in this campaign</p>'
    return "".join(_table(v) for v in verdicts) + RANKING_NOTE
