"""Latency histograms in HdrHistogram's interval log format (`vswbench export --format hdr`).

Every histogram a store holds (latency points, sweeps' loads, trials) becomes one interval line
tagged with the point and the load it was measured at, readable by HdrHistogram's tools
(HistogramLogProcessor, hdrh.log.HistogramLogReader, HdrHistogramVisualizer). Values are
nanoseconds. The engine's buckets are log-linear (exact below 256 ns, then 128 per power of two,
at most 0.8 % wide); each bucket's count is recorded at its middle, so a value read back is the
engine's to within half a bucket; HdrHistogram keeps 3 significant digits. Interval start times
are the histograms' order (0, 1, 2 ... s), not wall-clock times; the comment before each line
names the point, its campaign key and the offered load.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.jsonvalues import number
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.safefile import write_text

LOWEST_NS, HIGHEST_NS, DIGITS = 1, 3_600_000_000_000, 3
LOG_FORMAT_VERSION = "1.3"


@dataclass(frozen=True)
class StoredHistogram:
    tag: str                             # point key and load: no comma or space (log format)
    comment: str
    seconds: float                       # the trial's duration (interval length)
    buckets: list[tuple[float, float, int]]


def _buckets(raw: Any) -> list[tuple[float, float, int]]:
    out = []
    for b in raw if isinstance(raw, list) else []:
        if isinstance(b, (list, tuple)) and len(b) == 3:
            low, high, count = number(b[0]), number(b[1]), b[2]
            if low is not None and high is not None and isinstance(count, int) and count > 0:
                out.append((low, high, count))
    return out


def _tag(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:=+-]+", "_", text)


def histograms(points: list[StoredPoint]) -> Iterator[StoredHistogram]:
    """Every stored histogram of the finished points, in store order."""
    for p in points:
        r = p.result if p.status == "done" and isinstance(p.result, dict) else None
        if r is None:
            continue
        stored_entries = r.get("points")
        entries = stored_entries if isinstance(stored_entries, list) else []
        if not entries and r.get("histogram") is not None:
            entries = [{**r, "offered_pps": r.get("offered_pps")}]
        for i, e in enumerate(entries):
            if not isinstance(e, dict) or not _buckets(e.get("histogram")):
                continue
            fraction, offered = number(e.get("fraction_of_ndr")), number(e.get("offered_pps"))
            load = (f"{fraction * 100:g}%NDR" if fraction is not None else
                    f"{offered:.0f}pps" if offered is not None else f"load{i}")
            seconds = number(e.get("intended_s")) or number(e.get("duration_s")) or 1.0
            yield StoredHistogram(
                _tag(f"{p.label}@{load}"),
                f"point {p.label} (key {p.key}, campaign {p.campaign}), "
                + (f"{fraction * 100:g} % of the NDR, " if fraction is not None else "")
                + (f"offered {offered:,.0f} pps, " if offered is not None else "")
                + f"{e.get('latency_kind') or r.get('latency_kind') or 'latency'}, ns",
                seconds, _buckets(e.get("histogram")))


def to_hdr(buckets: list[tuple[float, float, int]]) -> Any:
    """An HdrHistogram of the engine's buckets, each count at its bucket's middle (ns)."""
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        raise UsageError("export to HdrHistogram logs needs the package hdrhistogram, a "
                         "dependency of vswbench: run ./setup.sh again (or .venv/bin/pip "
                         "install -e .)") from None
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, DIGITS)
    for low, high, count in buckets:
        value = min(HIGHEST_NS, max(LOWEST_NS, int(round((low + high) / 2))))
        h.record_value(value, count)
    return h


def export_hdr(store: ResultStore, path: str | Path) -> None:
    """Every histogram of the store as one tagged interval of an HdrHistogram log."""
    found = list(histograms(store.points()))
    if not found:
        raise UsageError("no latency histogram in this store (latency, sweep and trial points "
                         "record them): nothing to export in HdrHistogram format")
    lines = [f"#[Histogram log format version {LOG_FORMAT_VERSION}]",
             "#[vswbench latency histograms: values in nanoseconds, interval starts are the "
             "histograms' order]", "#[StartTime: 0.000 (seconds since epoch)]",
             '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"']
    start = 0.0
    for hist in found:
        h = to_hdr(hist.buckets)
        lines.append(f"#{hist.comment}")
        lines.append(f"Tag={hist.tag},{start:.3f},{hist.seconds:.3f},"
                     f"{h.get_max_value() / 1e6:.3f},{h.encode().decode('ascii')}")
        start += hist.seconds
    write_text(path, "\n".join(lines) + "\n", encoding="ascii")
