"""Typed views of the JSON-lines records printed by vswbench-engine (see engine/README.md).

Every record is a JSON object with a "type" (start, interval, warning, final). The final record
carries the counters and the latency summary; `FinalRecord` is its typed form. The raw dict is kept
beside the typed fields so nothing the engine adds later is lost.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import NamedTuple

from vswbench.errors import VswbenchError


class RecordError(VswbenchError):
    """The engine printed something that is not a valid record."""


@dataclass(frozen=True)
class EngineRecord:
    """One JSON line from the engine: its type and the whole object."""

    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class LatencySummary:
    """Latency percentiles in microseconds (None when the engine had no samples): the engine's
    summary, and a stored trial's `latency_us` (which adds p25 and p95 from the histogram)."""

    min: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    p999: float | None
    p9999: float | None
    max: float | None
    mean: float | None
    stddev: float | None
    count: int
    p25: float | None = None       # a stored trial's, from the histogram (measure/trial.py)
    p95: float | None = None

    @property
    def empty(self) -> bool:
        return self.count == 0 or self.p50 is None


class HistogramBucket(NamedTuple):
    """One latency histogram bucket, [low_ns, high_ns, count] as the engine writes it (a tuple:
    `low, high, count = bucket` works)."""
    low_ns: float
    high_ns: float
    count: int          # type: ignore[assignment]  # shadows tuple.count; the engine's name


@dataclass(frozen=True)
class FinalRecord:
    """The engine's final record of one run (or one control-mode trial)."""

    tx_frames: int
    rx_frames: int
    lost: int
    duplicated: int
    reordered: int
    stale: int
    foreign: int
    malformed: int
    tx_skipped: int
    tx_gaps: int
    requested_pps: float | None
    achieved_pps: float | None
    rx_pps: float | None
    latency_us: LatencySummary | None
    latency_kind: str | None
    jitter_us: float | None
    ipdv_us: dict[str, Any] | None
    cpu_s: float | None
    cycles_per_packet: float | None
    tx_gap_max_us: float | None
    hist: tuple[HistogramBucket, ...]
    streams: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # a generator's frames (tx_frames) = those its port accepted + those the peer refused (the
    # in-kernel generator counts each frame it sends; a veth peer with a full ring refuses some);
    # achieved_pps counts both, accepted_pps the first. None where the engine did not send.
    tx_accepted: int | None = None
    tx_refused: int | None = None
    accepted_pps: float | None = None
    # --generators N: per generator thread, {"stream", "cpu", "tx_frames"}; empty with one
    generators: tuple[dict[str, Any], ...] = ()


REQUIRED_COUNTERS = ("tx_frames", "rx_frames", "lost", "duplicated", "reordered")
# tx_skipped: departures the generator skipped in its own gaps (a stall of the tester's CPU longer
# than --gap-us; engine/src/opts.h VSB_GAP_US), never sent, so neither offered nor lost
OPTIONAL_COUNTERS = ("stale", "foreign", "malformed", "tx_skipped", "tx_gaps")
LATENCY_FIELDS = ("min", "p50", "p90", "p99", "p999", "p9999", "max", "mean", "stddev")


def parse_line(line: str) -> EngineRecord:
    """Parse one line of engine stdout into an EngineRecord."""
    text = line.strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"engine printed a line that is not JSON ({exc.msg}): {text[:200]!r}") from None
    if not isinstance(obj, dict):
        raise RecordError(f"engine record is not a JSON object: {text[:200]!r}")
    rtype = obj.get("type")
    if not isinstance(rtype, str):
        raise RecordError(f"engine record has no string 'type': {text[:200]!r}")
    return EngineRecord(type=rtype, data=obj)


def parse_lines(lines: list[str]) -> list[EngineRecord]:
    return [parse_line(line) for line in lines if line.strip()]


def _int(obj: dict[str, Any], key: str, *, required: bool) -> int:
    value = obj.get(key)
    if value is None:
        if required:
            raise RecordError(f"final record lacks the counter {key!r}")
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise RecordError(f"final record field {key!r} is not an integer: {value!r}")
    return int(value)


def _num(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"record field {key!r} is not a number: {value!r}")
    return float(value)


def parse_latency(obj: Any) -> LatencySummary | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise RecordError(f"latency_us is not an object: {obj!r}")
    values = {name: _num(obj, name) for name in LATENCY_FIELDS}
    count = obj.get("count")
    if count is None:
        count = 0 if values["p50"] is None else -1  # -1: engine did not say how many
    elif isinstance(count, bool) or not isinstance(count, int):
        raise RecordError(f"latency_us.count is not an integer: {count!r}")
    return LatencySummary(count=count, **values)


def parse_hist(obj: Any) -> tuple[HistogramBucket, ...]:
    if obj is None:
        return ()
    if not isinstance(obj, list):
        raise RecordError("hist is not a list")
    buckets = []
    for item in obj:
        if not (isinstance(item, list) and len(item) == 3):
            raise RecordError(f"hist bucket is not [low_ns, high_ns, count]: {item!r}")
        low, high, count = item
        buckets.append(HistogramBucket(float(low), float(high), int(count)))
    return tuple(buckets)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


STORED_LATENCY_FIELDS = (*LATENCY_FIELDS, "p25", "p95")


def stored_latency(obj: Any) -> LatencySummary | None:
    """A stored trial's `latency_us` (what the results store holds) read leniently: a field that
    is missing or not a finite number is None; not an object: None."""
    if not isinstance(obj, dict):
        return None
    values = {name: _finite(obj.get(name)) for name in STORED_LATENCY_FIELDS}
    n = obj.get("count")
    n = n if isinstance(n, int) and not isinstance(n, bool) else (
        0 if values["p50"] is None else -1)
    return LatencySummary(count=n, **values)


def stored_histogram(obj: Any) -> tuple[HistogramBucket, ...]:
    """A stored histogram [[low_ns, high_ns, count], ...] read leniently: malformed and empty
    buckets dropped, sorted (parse_hist is the engine output's strict parser)."""
    out = []
    for b in obj if isinstance(obj, list) else []:
        if isinstance(b, (list, tuple)) and len(b) == 3:
            low, high, count = _finite(b[0]), _finite(b[1]), _finite(b[2])
            if low is not None and high is not None and count and count > 0 and high >= low >= 0:
                out.append(HistogramBucket(low, high, int(count)))
    return tuple(sorted(out))


def parse_final(record: EngineRecord | dict[str, Any]) -> FinalRecord:
    """Typed FinalRecord from a record of type "final"."""
    obj = record.data if isinstance(record, EngineRecord) else record
    if obj.get("type") != "final":
        raise RecordError(f"expected a final record, got type {obj.get('type')!r}")
    counters = {key: _int(obj, key, required=True) for key in REQUIRED_COUNTERS}
    counters.update({key: _int(obj, key, required=False) for key in OPTIONAL_COUNTERS})
    warnings = obj.get("warnings") or []
    streams = obj.get("streams") or []
    ipdv = obj.get("ipdv_us")
    return FinalRecord(
        **counters,
        requested_pps=_num(obj, "requested_pps"),
        achieved_pps=_num(obj, "achieved_pps"),
        rx_pps=_num(obj, "rx_pps"),
        latency_us=parse_latency(obj.get("latency_us")),
        latency_kind=obj.get("latency_kind"),
        jitter_us=_num(obj, "jitter_us"),
        ipdv_us=ipdv if isinstance(ipdv, dict) else None,
        cpu_s=_num(obj, "cpu_s"),
        cycles_per_packet=_num(obj, "cycles_per_packet"),
        tx_gap_max_us=_num(obj, "tx_gap_max_us"),
        hist=parse_hist(obj.get("hist")),
        streams=tuple(s for s in streams if isinstance(s, dict)),
        warnings=tuple(str(w.get("msg", w)) if isinstance(w, dict) else str(w) for w in warnings),
        raw=obj,
        tx_accepted=_int(obj, "tx_accepted", required=False) if "tx_accepted" in obj else None,
        tx_refused=_int(obj, "tx_refused", required=False) if "tx_refused" in obj else None,
        accepted_pps=_num(obj, "accepted_pps"),
        generators=tuple(g for g in obj.get("generators") or [] if isinstance(g, dict)),
    )
