"""The report's "remote" section: local vs remote vs remote-vxlan (Ara et al.'s L = local or
remote; Fang et al.'s overlays), side by side per switch and frame size, so the cost of the
wire between two hosts and of VXLAN encapsulation on it reads off one row:

    NDR (sender -> receiver)          p2p-pair / remote / remote-vxlan searches
    one-way p50 at 90 % of NDR        their latency points (one clock: sender and receiver here)
    NDR (round trip)                  rr / remote-rr / remote-vxlan-rr searches
    round-trip p50 at 90 % of NDR     their latency points

Each cell is the median over repetitions; the change columns compare remote with local and
remote-vxlan with remote (the encapsulation alone). Empty when the campaign has no remote point.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from vswbench.results.points import read_point
from vswbench.results.points import size_order
from vswbench.results.store import StoredPoint

# scenario -> (family, column)
SCENARIOS = {"p2p-pair": ("pair", "local"), "remote": ("pair", "remote"),
             "remote-vxlan": ("pair", "remote-vxlan"), "rr": ("rr", "local"),
             "remote-rr": ("rr", "remote"), "remote-vxlan-rr": ("rr", "remote-vxlan")}
COLUMNS = ("local", "remote", "remote-vxlan")
MEASURES = {("pair", "search"): "NDR, sender to receiver (kpps)",
            ("pair", "latency"): "one-way p50 at 90 % of NDR (us)",
            ("rr", "search"): "NDR, round trip (kpps)",
            ("rr", "latency"): "round-trip p50 at 90 % of NDR (us)"}
EMPTY = "no remote or remote-vxlan point in this campaign"
INTRO = ("Local (one switch), remote (two emulated hosts, a switch each, joined by a veth wire) "
         "and remote-vxlan (the same wire carrying VXLAN) side by side: the change columns are "
         "the cost of the wire (remote against local) and of encapsulation (remote-vxlan "
         "against remote). Medians over repetitions.")


@dataclass(frozen=True)
class RemoteRow:
    switch: str
    size: int | str
    measure: str
    values: dict[str, float]          # column -> median

    def change(self, a: str, b: str) -> float | None:
        """Relative change of column b against column a (None if either is missing)."""
        if a not in self.values or b not in self.values or not self.values[a]:
            return None
        return (self.values[b] - self.values[a]) / self.values[a]


def remote_rows(points: Sequence[StoredPoint]) -> list[RemoteRow]:
    cells: dict[tuple[str, int | str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    seen_remote = False
    for rec in map(read_point, points):
        scenario = str(rec.params.value("scenario", ""))
        if not rec.done or scenario not in SCENARIOS or rec.kind not in ("search", "latency"):
            continue
        family, column = SCENARIOS[scenario]
        seen_remote |= column != "local"
        h = rec.headline
        if rec.kind == "search":
            value = h.ndr_pps / 1000.0 if h.ndr_pps is not None else None
        else:
            value = h.latency.p50_us if h.latency is not None else None
        if value is not None:
            cells[(rec.setup.switch, rec.setup.size, MEASURES[(family, rec.kind)])][column].append(
                value)
    if not seen_remote:
        return []
    order = list(MEASURES.values())
    return [RemoteRow(sw, size, measure, {c: statistics.median(v) for c, v in cols.items()})
            for (sw, size, measure), cols in sorted(
                cells.items(), key=lambda kv: (kv[0][0], size_order(kv[0][1]),
                                               order.index(kv[0][2])))]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:+.0f} %"


def remote_section(points: Sequence[StoredPoint]) -> str:
    rows = remote_rows(points)
    if not rows:
        return f'<p class="empty">{escape(EMPTY)}</p>'
    head = ["switch", "size", "measure", *COLUMNS, "wire (remote vs local)",
            "VXLAN (vs remote)"]
    body = []
    for r in rows:
        size = f"{r.size} B" if isinstance(r.size, int) else str(r.size)
        cells = [escape(r.switch), escape(size), escape(r.measure),
                 *(f"{r.values[c]:,.1f}" if c in r.values else "-" for c in COLUMNS),
                 _pct(r.change("local", "remote")), _pct(r.change("remote", "remote-vxlan"))]
        body.append("<tr>" + "".join(f'<td class="num">{c}</td>' if i > 2 else f"<td>{c}</td>"
                                     for i, c in enumerate(cells)) + "</tr>")
    return (f"<p>{escape(INTRO)}</p><table><tr>"
            + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>" + "".join(body)
            + "</table>")
