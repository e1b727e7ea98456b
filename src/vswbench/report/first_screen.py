"""The HTML of the report's first screen: the summary (machine, preset, verdict lines, the tie
rule) and the ranking, one table per frame size and stack with the baselines and the tester's
ceiling as reference rows and what each backend is beside its numbers."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from vswbench.host.vm_nf import TCG_LABEL
from vswbench.report.backends import BASELINE
from vswbench.report.marks import MARKS_NOTE, latency_loss_cell, ndr_loss_cell, percentile_cell
from vswbench.report.summary import MachineSummary
from vswbench.report.verdict import TIE_RULE, Verdict
from vswbench.report.verdict_entry import Entry, mpps

HEAD = ["#", "switch", "what it is", "NDR Mpps", "noise range Mpps", "NDR Gbit/s", "PDR Mpps",
        "loss at NDR", "p50 µs @90 %", "p99 µs @90 %", "latency trial loss", "cycles/packet",
        "useful cycles/packet", "searches", "NDR CV",
        "how it ran (mode; CPUs; tester I/O; versions)"]
NUMERIC = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}


def _num(value: float | int | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def emulated_vm(scenario: str, variant: str) -> bool:
    """A VM scenario (pvp-vm, chain-vm:N) measured under TCG (no vm_accel=kvm in its variant)."""
    return (scenario == "pvp-vm" or scenario.startswith("chain-vm:")) and \
        "vm_accel=kvm" not in variant


def summary_section(machines: Sequence[MachineSummary], presets: Sequence[str],
                    verdicts: Sequence[Verdict], left_out: Sequence[str]) -> str:
    parts = [f'<p class="machine">{escape(m.sentence())}</p>' for m in machines]
    parts += [f'<p class="preset">{escape(s)}</p>' for s in presets]
    ranked = [v for v in verdicts if v.ranked]
    if ranked:
        items = "".join(f'<li class="verdict">{escape(v.line)}</li>' for v in ranked)
        parts.append(f'<ul class="verdicts">{items}</ul>')
        parts.append(f'<p class="footnote rule">Ranks and ties: {escape(TIE_RULE)} '
                     "Mpps: millions of frames per second, frame sizes with the FCS.</p>")
    elif verdicts:
        parts.append('<p class="footnote">Only reference rows (baselines) were searched: see the '
                     "ranking.</p>")
    else:
        parts.append('<p class="empty">no search in this campaign: no verdict</p>')
    emulated = sorted({v.scenario for v in verdicts if emulated_vm(v.scenario, v.variant)})
    if emulated:
        parts.append(f'<p class="footnote emulated">{escape(", ".join(emulated))}: '
                     f"{escape(TCG_LABEL)} (docs/guide/vm.md).</p>")
    if left_out:
        parts.append(f'<p class="footnote">Not in this report (no data in this campaign): '
                     f"{escape(', '.join(left_out))}.</p>")
    return "".join(parts)


def _row(e: Entry, rank_cell: str, css: str) -> str:
    r = e.row
    bound = "≥ " if r.generator_bound else ""
    noise = ("–" if e.interval is None
             else f"{mpps(e.interval[0])}–{mpps(e.interval[1])}")
    cells = [rank_cell, f"<b>{escape(e.switch)}</b>", escape(e.info.description),
             f"{bound}{mpps(r.ndr_pps)}", noise, f"{bound}{_num(r.ndr_gbps, 3)}",
             mpps(r.pdr_pps), escape(ndr_loss_cell(r.ndr_load_loss, "–")),
             escape(percentile_cell(r.latency, "p50", "–")),
             escape(percentile_cell(r.latency, "p99", "–")),
             escape(latency_loss_cell(r.latency, "–")), _num(r.cycles_per_packet, 0),
             _num(r.useful_cycles_per_packet, 0),
             str(r.repetitions), "–" if r.ndr_cv is None else f"{r.ndr_cv * 100:.1f} %",
             escape(e.info.where())]
    tds = "".join(f'<td class="num">{c}</td>' if i in NUMERIC else f"<td>{c}</td>"
                  for i, c in enumerate(cells))
    return f'<tr class="{css}" data-switch="{escape(e.switch)}">{tds}</tr>'


def _table(v: Verdict) -> str:
    rows = []
    for e in v.ranked:
        rank = "–" if e.rank is None else (f"={e.rank}" if e.tied else str(e.rank))
        rows.append(_row(e, rank, "ranked tied" if e.tied else "ranked"))
    for e in v.references:
        rows.append(_row(e, "baseline" if e.info.role == BASELINE else "calibration",
                         "reference"))
    if v.ceiling_pps:
        span = len(HEAD) - 4
        rows.append(f'<tr class="ceiling"><td>ceiling</td><td colspan="2">the tester\'s '
                    f"calibrated ceiling (no switch can show more: at it, a result is "
                    f'"≥")</td><td class="num">{mpps(v.ceiling_pps)}</td>'
                    f'<td colspan="{span}"></td></tr>')
    th = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    return (f'<h3 id="ranking-{escape(_slug(v.title))}">{escape(v.title)}</h3>'
            f'<p class="verdict">{escape(v.line)}</p>'
            f'<table class="ranking"><thead><tr>{th}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


RANKING_NOTE = (
    '<p class="footnote">NDR and PDR in millions of frames per second (each the median over a '
    "campaign's repetitions, as are cycles per packet and the latency percentiles); noise "
    "range: the range of the tie rule above; Gbit/s on the wire (each frame plus 20 bytes of preamble and "
    "inter-frame gap). Latency in microseconds at 90 % of the NDR (– when none was measured): "
    "of the NDR its latency point searched or took from its search twin, the first repetition; "
    "repetitions the decide phase adds later are searches only. "
    "Cycles per packet: the median of the search's lossless trials at the NDR's load (else its "
    "highest lossless trial below the NDR): busy CPU "
    "time of all cores (a polling core counts 100 % whatever the load) over the frames "
    "received; useful cycles, where the switch counts them (OVS PMD processing cycles, testpmd "
    "--record-core-cycles), only the switch's cycles on bursts that carried frames. NDR CV: "
    "coefficient of variation over repetitions (or the search's own --repeat). ≥: "
    "generator-bound, the tester's limit; the switch forwards at least this much. =N: tied "
    "rank. " + escape(MARKS_NOTE) + "</p>")


def ranking_tables(verdicts: Sequence[Verdict]) -> str:
    if not verdicts:
        return '<p class="empty">no search in this campaign</p>'
    return "".join(_table(v) for v in verdicts) + RANKING_NOTE
