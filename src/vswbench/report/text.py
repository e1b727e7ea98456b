"""The ranking as plain text or Markdown: what `vswbench run` and `vswbench report --print` show
when their output is a file or a pipe (a terminal gets rich's table). Every number whole, never
cut to fit a width; frame sizes in numeric order; the verdict line above each table, the
baselines and the tester's ceiling as reference rows (report/verdict.py)."""

from __future__ import annotations

from collections.abc import Sequence

from vswbench.report.backends import BASELINE
from vswbench.report.marks import MARKS_NOTE
from vswbench.report.marks import latency_loss_cell
from vswbench.report.marks import ndr_loss_cell
from vswbench.report.marks import percentile_cell
from vswbench.report.verdict import Verdict
from vswbench.report.verdict_entry import Entry
from vswbench.report.verdict_entry import mpps
from vswbench.results.loss import loss_text
from vswbench.results.points import Headline
from vswbench.results.points import PointRecord

COLUMNS = ("#", "switch", "MRR Mpps", "range Mpps", "rounds", "NDR Mpps", "CT Mpps", "Gbit/s",
           "PDR Mpps", "loss at CT", "p50 us@90%", "p99 us@90%", "lat. loss", "cycles/pkt",
           "useful", "reps", "mode")
LEFT = {0, 1, 16}
FORMATS = ("text", "md")
FOOTNOTE = (
    "MRR: the received rate with the tester at its ceiling, median over the paired rounds that "
    "rank the group (>=: lost nothing, the tester's limit); range: the span of its rounds "
    "(or of two or more repetitions), widened 10 % each side; NDR: RFC 2544's, every trial "
    "counted (-: every trial at every load lost frames); CT: MLRsearch's conditional "
    "throughput of the NDR goal (loss 0, exceed ratio 50 %, the preset's trials; host-stall "
    "trials excised), the median over repetitions; latency at 90 % of the first repetition's "
    "CT in microseconds; =N: tied. ")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _cells(e: Entry, rank: str) -> list[str]:
    r = e.row
    sr = e.paired
    mrr = "-" if sr is None or sr.median_pps is None else (
        (">=" if sr.at_least else "") + mpps(sr.median_pps))
    span = e.stated_range
    rng = "-" if span is None else f"{mpps(span[0])}-{mpps(span[1])}"
    rounds = "-" if sr is None else str(len(sr.samples))
    bound = ">=" if r.generator_bound else ""
    return [rank, e.switch, mrr, rng, rounds, mpps(r.classic_ndr_pps) if r.classic_ndr_pps
            else "-", f"{bound}{mpps(r.ndr_pps)}", _num(r.ndr_gbps, 3),
            mpps(r.pdr_pps), ndr_loss_cell(r.ndr_load_loss),
            percentile_cell(r.latency, "p50"), percentile_cell(r.latency, "p99"),
            latency_loss_cell(r.latency), _num(r.cycles_per_packet, 0),
            _num(r.useful_cycles_per_packet, 0),
            str(r.repetitions), " / ".join(e.info.forwarding_modes) or "-"]


def table_rows(v: Verdict) -> list[list[str]]:
    rows = [_cells(e, "-" if e.rank is None else f"={e.rank}" if e.tied else str(e.rank))
            for e in v.ranked]
    rows += [_cells(e, "baseline" if e.info.role == BASELINE else "calib.")
             for e in v.references]
    if v.ceiling_pps:
        rows.append(["ceiling", "tester's ceiling", mpps(v.ceiling_pps)]
                    + [""] * (len(COLUMNS) - 3))
    return rows


def _plain(rows: list[list[str]]) -> list[str]:
    table = [list(COLUMNS), *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    return ["  ".join(c.ljust(w) if i in LEFT else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in table]


def _markdown(rows: list[list[str]]) -> list[str]:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")
    head = "| " + " | ".join(COLUMNS) + " |"
    rule = "|" + "|".join(":---" if i in LEFT else "---:" for i in range(len(COLUMNS))) + "|"
    return [head, rule, *("| " + " | ".join(esc(c) for c in r) + " |" for r in rows)]


def ranking_text(verdicts: Sequence[Verdict], fmt: str = "text") -> str:
    """The ranking per frame size and stack, `fmt` "text" (aligned columns) or "md"."""
    if not verdicts:
        return ""
    out: list[str] = []
    for v in verdicts:
        out.append(f"## {v.title}" if fmt == "md" else v.title)
        out.append(v.line)
        out += [f"  {d}" for d in v.details]
        out.append("")
        out += _markdown(table_rows(v)) if fmt == "md" else _plain(table_rows(v))
        out.append("")
    out.append(FOOTNOTE + MARKS_NOTE)
    return "\n".join(out) + "\n"


def point_line(rec: PointRecord) -> str:
    """One finished point and its headline, for the progress lines of `vswbench run`:
    "done search bridge p2p 64B quick: NDR 0.179 Mpps (bounds 0.179-0.183), PDR 0.179 Mpps"."""
    head = f"{rec.status} {rec.label}"
    if not rec.done:
        return head + (f": {rec.error}" if rec.error else "")
    h = rec.headline
    parts = _throughput_parts(rec.kind, h)
    if rec.kind == "search":
        parts += _ndr_loss_parts(h)
    parts += _latency_parts(h)
    return head + (": " + ", ".join(parts) if parts else "")


def _throughput_parts(kind: str, h: Headline) -> list[str]:
    """The kind's throughput: a search's NDR and PDR, MRR, a trial's, a sweep's peak, b2b."""
    if kind == "search" and h.ndr_pps is not None:
        return _search_parts(h)
    if kind == "rounds" and h.achieved_pps is not None:
        return [f"MRR {'>= ' if h.generator_bound else ''}{mpps(h.achieved_pps)} Mpps, "
                f"median of {h.trial_count} rounds"]
    if kind == "trial" and h.achieved_pps is not None:
        return [f"achieved {mpps(h.achieved_pps)} Mpps"] + (
            [f"loss {h.loss_ratio * 100:.3g} %"] if h.loss_ratio is not None else [])
    if kind == "sweep" and h.peak_achieved_pps is not None:
        return [f"peak {mpps(h.peak_achieved_pps)} Mpps"]
    if kind == "b2b" and h.b2b_frames is not None:
        return [f"back-to-back {h.b2b_frames:,.0f} frames"]
    return []


def _search_parts(h: Headline) -> list[str]:
    bound = ">= " if h.generator_bound else ""
    bounds = (f" (bounds {mpps(h.lower_bound_pps)}-{mpps(h.upper_bound_pps)})"
              if h.lower_bound_pps is not None and h.upper_bound_pps is not None else "")
    parts = [f"NDR {bound}{mpps(h.ndr_pps)} Mpps{bounds}"]
    if h.pdr_pps is not None:
        parts.append(f"PDR {mpps(h.pdr_pps)} Mpps")
    if h.generator_bound:
        parts.append("generator-bound")
    return parts


def _ndr_loss_parts(h: Headline) -> list[str]:
    """A search's loss at its NDR's load, and an ill-defined NDR."""
    parts = []
    if h.ndr_load_loss is not None and h.ndr_load_loss.lossy_trials:
        parts.append(h.ndr_load_loss.describe())
    if h.loss_around_ndr is not None and h.loss_around_ndr.ill_defined:
        parts.append(h.loss_around_ndr.describe())
    return parts


def _latency_parts(h: Headline) -> list[str]:
    lat = h.latency
    if lat is None or lat.p99_us is None:
        return []
    at = (f" at {lat.fraction_of_ndr * 100:g} % of NDR {mpps(h.ndr_pps)} Mpps"
          if lat.fraction_of_ndr is not None and h.ndr_pps is not None else "")
    parts = [f"p50 {percentile_cell(lat, 'p50')} us, p99 {percentile_cell(lat, 'p99')} us{at}"]
    if lat.lossy:
        parts.append("latency trial: "
                     + loss_text(lat.lost_frames, lat.loss_ratio, lat.counters_agree))
    return parts
