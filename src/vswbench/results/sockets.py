"""The typed read side of the socket kinds (stream, rr, crr: measure/sockets.py): a stored
point's result read back into measure/socket_result.py's `SocketResult`, the one definition of
their headline figures (goodput, transactions/s and their latency, connections/s, the CPU they
cost), read by the exports, the report's section "What applications see" and the API."""

from __future__ import annotations

from typing import Any

from vswbench.measure.socket_result import SOCKET_KINDS
from vswbench.measure.socket_result import SocketResult
from vswbench.results.store import StoredPoint


def socket_result(kind: str, params: dict[str, Any], r: dict[str, Any]) -> SocketResult | None:
    """The result of a socket point (None for another kind or no result)."""
    if kind not in SOCKET_KINDS or not isinstance(r, dict) or not r:
        return None
    return SocketResult.from_json(kind, r, params)


def socket_of(p: StoredPoint) -> SocketResult | None:
    """socket_result of a stored point (finished points only)."""
    if p.status != "done" or not isinstance(p.result, dict):
        return None
    return socket_result(p.kind, dict(p.params), p.result)
