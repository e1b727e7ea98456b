"""The typed read side of the socket kinds (stream, rr, crr: measure/sockets.py): a stored
point's result as a `SocketResult`, the one definition of their headline figures (goodput,
transactions/s and their latency, connections/s, the CPU they cost), read by the exports, the
report's section "What applications see" and the API."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vswbench.results.store import StoredPoint

SOCKET_KINDS = ("stream", "rr", "crr")
SOCKET_LATENCY = ("p50", "p90", "p99", "p999", "min", "max")


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SocketResult:
    """One socket measurement: its workload and what the application got."""
    kind: str                                 # stream | rr | crr
    switch: str
    scenario: str
    proto: str
    msg_size: int | None                      # bytes per write, or per request and response
    flows: int | None
    pairs: int | None
    mtu: int | None
    offloads: str
    service: bool
    duration_s: float | None
    goodput_gbps: float | None                # stream
    udp_loss_ratio: float | None
    retransmits: int | None                   # TCP_INFO, summed over the flows
    transactions_per_s: float | None          # rr, crr
    connections_per_s: float | None           # crr
    latency_us: dict[str, float | None]       # p50 p90 p99 p999 min max of the transactions
    histogram: tuple[tuple[int, int, int], ...]   # [low_ns, high_ns, count]
    busy_cpu_s: float | None                  # every core, /proc/stat
    cpu_s_per_gb: float | None
    cycles_per_transaction: float | None
    forwarding_mode: str | None
    nf: str | None = None                     # pvp, chain:N: how the network functions forwarded

    def headline(self) -> tuple[str, float | None]:
        """The kind's figure: goodput (Gbit/s), transactions/s or connections/s."""
        if self.kind == "stream":
            return "Gbit/s", self.goodput_gbps
        if self.kind == "crr":
            return "connections/s", self.connections_per_s
        return "transactions/s", self.transactions_per_s


def socket_result(kind: str, params: dict[str, Any], r: dict[str, Any]) -> SocketResult | None:
    """The result of a socket point (None for another kind or no result)."""
    if kind not in SOCKET_KINDS or not isinstance(r, dict) or not r:
        return None
    raw_lat = r.get("latency_us")
    lat: dict[str, Any] = raw_lat if isinstance(raw_lat, dict) else {}
    hist = tuple((int(b[0]), int(b[1]), int(b[2])) for b in r.get("histogram") or []
                 if isinstance(b, list) and len(b) == 3 and all(_int(x) is not None for x in b))
    return SocketResult(
        kind, str(r.get("switch") or params.get("switch") or "?"),
        str(r.get("scenario") or params.get("scenario") or "?"),
        str(r.get("proto") or params.get("proto") or "tcp"), _int(r.get("size")),
        _int(r.get("flows")), _int(r.get("pairs")), _int(r.get("mtu")),
        str(r.get("offloads") or "default"), bool(r.get("service")), _num(r.get("duration_s")),
        _num(r.get("goodput_gbps")), _num(r.get("udp_loss_ratio")), _int(r.get("retransmits")),
        _num(r.get("transactions_per_s")), _num(r.get("connections_per_s")),
        {k: _num(lat.get(k)) for k in SOCKET_LATENCY}, hist, _num(r.get("busy_cpu_s")),
        _num(r.get("cpu_s_per_gb")), _num(r.get("cycles_per_transaction")),
        r.get("forwarding_mode") if isinstance(r.get("forwarding_mode"), str) else None,
        r.get("nf") if isinstance(r.get("nf"), str) else None)


def socket_of(p: StoredPoint) -> SocketResult | None:
    """socket_result of a stored point (finished points only)."""
    if p.status != "done" or not isinstance(p.result, dict):
        return None
    return socket_result(p.kind, dict(p.params), p.result)
