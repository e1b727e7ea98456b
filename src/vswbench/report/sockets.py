"""What the report shows of the socket kinds (stream, rr, crr; results/sockets.py): one row per
switch at the base workload (TCP, one flow, MTU 1500, offloads as the switch left them, no
service path, no network functions between client and server (pvp, chain:N), the kinds' default
message sizes: as `vswbench stream|rr|crr` measures by default), its frame NDR beside it where
the store has a search of that switch, every socket point in a second table, and the verdict
lines in the form of the frame ranking's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vswbench.measure.socket_result import SOCKET_KINDS
from vswbench.measure.socket_result import SocketResult
from vswbench.results.points import StoredResults
from vswbench.results.points import read_point
from vswbench.results.sockets import socket_of

BASE_SIZE = {"stream": 16384, "rr": 64, "crr": 64}


@dataclass(frozen=True)
class SocketRow:
    """One switch at the base workload."""
    switch: str
    scenario: str
    stream: SocketResult | None
    rr: SocketResult | None
    crr: SocketResult | None
    ndr_pps: float | None                  # the frame NDR of a search of this switch
    ndr_size: int | str | None


def _is_base(s: SocketResult) -> bool:
    return (s.proto == "tcp" and (s.flows or 1) == 1 and (s.mtu or 1500) == 1500
            and s.offloads == "default" and not s.service and not s.nf
            and s.msg_size == BASE_SIZE[s.kind])


def socket_results(data: StoredResults) -> list[SocketResult]:
    return [s for k in SOCKET_KINDS for p in data.done(k) if (s := socket_of(p)) is not None]


def _frame_ndr(data: StoredResults, switch: str) -> tuple[float | None, int | str | None]:
    """The switch's highest stored search NDR, at the largest frame size it was searched at."""
    best: tuple[float | None, int | str | None] = (None, None)
    for rec in data.records("search"):
        if rec.setup.switch != switch or rec.headline.ndr_pps is None:
            continue
        size = rec.setup.size
        if best[1] is None or (isinstance(size, int) and isinstance(best[1], int)
                               and size > best[1]):
            best = (rec.headline.ndr_pps, size)
    return best


def socket_rows(data: StoredResults) -> list[SocketRow]:
    """The switches with a base-workload socket point, the last stored one of each kind."""
    base: dict[str, dict[str, SocketResult]] = {}
    scen: dict[str, str] = {}
    for s in socket_results(data):
        if _is_base(s):
            base.setdefault(s.switch, {})[s.kind] = s
            scen.setdefault(s.switch, s.scenario)
    rows = []
    for switch in sorted(base):
        kinds = base[switch]
        ndr, size = _frame_ndr(data, switch)
        rows.append(SocketRow(switch, scen[switch], kinds.get("stream"), kinds.get("rr"),
                              kinds.get("crr"), ndr, size))
    return rows


def _value(s: SocketResult | None, metric: str) -> float | None:
    if s is None:
        return None
    if metric == "p50":
        return s.latency.p50
    return s.headline()[1]


def verdict_lines(rows: Sequence[SocketRow]) -> list[str]:
    """'TCP stream, 16384 B: macvlan leads (4.11 Gbit/s), bridge 20 % lower (3.28 Gbit/s), last
    ovs 80 % lower (0.80 Gbit/s); one run each, not decided by a rank test.' per kind (rr: by its
    p50, lower is better)."""
    lines = []
    for kind, metric, unit, title in (
            ("stream", "value", "Gbit/s", f"TCP stream, {BASE_SIZE['stream']} B"),
            ("rr", "p50", "us p50", f"TCP request/response, {BASE_SIZE['rr']} B"),
            ("crr", "value", "connections/s", f"TCP connect/request/response/close, "
                                              f"{BASE_SIZE['crr']} B")):
        got = [(r.switch, v) for r in rows
               if (v := _value(getattr(r, kind), metric)) is not None and v > 0]
        if not got:
            continue
        lower_better = metric == "p50"
        got.sort(key=lambda x: x[1], reverse=not lower_better)

        def fmt(v: float, unit: str = unit) -> str:
            return f"{v:,.2f}" if unit == "Gbit/s" else f"{v:,.0f}"
        lead, top = got[0]
        text = f"{title}: {lead} leads ({fmt(top)} {unit})"
        if len(got) > 1:
            name, v = got[1]
            word = "higher" if lower_better else "lower"
            text += f", {name} {abs(1 - v / top) * 100:.0f} % {word} ({fmt(v)} {unit})"
        if len(got) > 2:
            name, v = got[-1]
            word = "higher" if lower_better else "lower"
            text += f", last {name} {abs(1 - v / top) * 100:.0f} % {word} ({fmt(v)} {unit})"
        lines.append(text + "; one run each, not decided by a rank test.")
    return lines


def every_point(data: StoredResults) -> list[tuple[str, SocketResult]]:
    """(label, result) of every socket point, in store order."""
    out = []
    for k in SOCKET_KINDS:
        for p in data.done(k):
            s = socket_of(p)
            if s is not None:
                out.append((read_point(p).label, s))
    return out
