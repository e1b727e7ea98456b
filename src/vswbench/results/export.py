"""Exports of a results store: JSON (everything), CSV and Parquet (one headline row per point),
JSON lines (`point_record`, also what `vswbench run` appends to results.jsonl and streams with
--json), and the latency histograms in HdrHistogram's log format.

The headline numbers of every row are points.py's records (points.read_point), the same the
report, compare and the models show; this module only lays them out as flat rows. A latency
figure comes with its trial's loss (`latency_lost_frames`, `latency_loss_ratio`, the counter
cross-check `latency_counters_agree`, the percentiles that loss makes unreliable
`latency_unreliable`), jitter and IPDV; a search's row with what its trials at the NDR's load
lost (`ndr_load_*`); `loss_ratio` of a latency point is its trial's at 90 % of the NDR. Each row
also says which backend measured (its description and stack, switches/catalog.py), with which
versions and in which forwarding mode, as the point stored them.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from vswbench import __version__
from vswbench.errors import UsageError
from vswbench.measure.socket_result import SocketResult
from vswbench.results.loss import LoadLoss
from vswbench.results.loss import LossAround
from vswbench.results.params import KNOBS
from vswbench.results.points import Latency
from vswbench.results.points import PointRecord
from vswbench.results.points import load_at
from vswbench.results.points import read_point
from vswbench.results.record import LoadPoint
from vswbench.results.store import SCHEMA_VERSION
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.safefile import atomic_writer

FORMATS = ("json", "csv", "parquet", "jsonl", "hdr")
RECORD_SCHEMA = "vswbench.point/1"      # results.jsonl records (schemas/point-record.schema.json)
LATENCY_FIELDS = ("p25", "p50", "p90", "p95", "p99", "p999", "p9999", "min", "max", "mean",
                  "stddev")
# what the trials at the NDR's load lost (results/loss.py LoadLoss)
NDR_LOAD_COLUMNS = ("ndr_load_trials", "ndr_load_lossy_trials", "ndr_load_worst_lost_frames",
                    "ndr_load_worst_loss_ratio", "ndr_load_time_over_goal",
                    "ndr_load_excised_trials")
# what the trials below the NDR's load lost and how far above it one passed, host stalls left
# out (results/loss.py LossAround)
AROUND_NDR_COLUMNS = ("below_ndr_trials", "below_ndr_lossy_trials", "below_ndr_lowest_lossy_pps",
                     "above_ndr_highest_lossless_pps", "ndr_ill_defined")
# the latency figure's own trial: its loss, counter cross-check, the percentiles its loss makes
# unreliable (space-separated names, e.g. "p99 p999 p9999"), jitter and IPDV
LATENCY_EXTRA_COLUMNS = ("latency_lost_frames", "latency_loss_ratio", "latency_counters_agree",
                         "latency_unreliable", "latency_jitter_us", "latency_ipdv_p1_us",
                         "latency_ipdv_p50_us", "latency_ipdv_p99_us")
# kinds stream, rr, crr (results/sockets.py): `size` is then the message size in bytes, and the
# latency columns are the transactions' round trips; `nf` how pvp's and chains' network functions
# forwarded (empty without any)
SOCKET_COLUMNS = ("proto", "mtu", "offloads", "service", "goodput_gbps", "udp_loss_ratio",
                  "retransmits", "transactions_per_s", "connections_per_s", "cpu_s_per_gb",
                  "cycles_per_transaction", "nf")
HEADLINE_COLUMNS = [
    "campaign", "run_id", "point_key", "label", "status", "kind", "switch", "backend", "stack",
    "switch_versions", "scenario", "size",
    "flows", "churn", "burst", "placement", "io", "preset", "rate_pps", "shape_pps", "repetition",
    "forwarding_mode", "ndr_pps", "conditional_throughput_pps", "conditional_throughput_gbps",
    "throughput_goal", "confirmation", "mrr_pps", "rounds", "pdr_pps", "pdr_gbps",
    "lower_bound_pps",
    "upper_bound_pps", "generator_bound", "generator_ceiling_pps", "ndr_cv", "offered_pps",
    "achieved_pps", "loss_ratio", *NDR_LOAD_COLUMNS, *AROUND_NDR_COLUMNS,
    "latency_fraction_of_ndr",
    *(f"latency_{k}_us" for k in LATENCY_FIELDS), *LATENCY_EXTRA_COLUMNS, "cycles_per_packet",
    "useful_cycles_per_packet", "peak_achieved_pps",
    "highest_lossless_pps", "b2b_frames", "implied_buffer_s", "corrected_buffer_s",
    "trial_count", "trial_seconds", "wall_seconds", *SOCKET_COLUMNS, "error", "started",
    "finished"]
_KNOBS = tuple(k.name for k in KNOBS if k.column)     # the knob columns, as stored
_HEADLINE_FIELDS = ("forwarding_mode", "pdr_pps", "lower_bound_pps",
                    "upper_bound_pps", "generator_bound", "generator_ceiling_pps", "ndr_cv",
                    "offered_pps", "achieved_pps", "loss_ratio", "cycles_per_packet",
                    "useful_cycles_per_packet", "peak_achieved_pps", "highest_lossless_pps",
                    "b2b_frames", "implied_buffer_s", "corrected_buffer_s", "trial_count",
                    "trial_seconds", "wall_seconds")


def _backend(switch: str) -> tuple[str | None, str | None]:
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    if cls is None:
        return None, None
    return cls.description, "DPDK" if cls.port_kind == "dpdk" else "kernel"


def versions_text(result: dict[str, Any] | None) -> str | None:
    """A point's stored switch_versions as "name version, ..." (None when it stored none)."""
    sv = (result or {}).get("switch_versions")
    if not isinstance(sv, dict) or not sv:
        return None
    return ", ".join(f"{k} {v}" for k, v in sorted(sv.items()))


def goal_text(preset: str | None) -> str | None:
    """The NDR goal of a search's preset, RFC 9971's terms: 'loss 0 %, exceed ratio 50 %,
    0.25 s trials, 1 s duration sum'."""
    from vswbench.measure.search import PRESETS

    found = PRESETS.get(preset or "")
    if found is None:
        return None
    g = found.goals[0]
    return (f"loss {g.loss_ratio * 100:g} %, exceed ratio {g.exceed_ratio * 100:g} %, "
            f"{g.final_trial_duration:g} s trials, {g.duration_sum:g} s duration sum")


def _throughput(rec: PointRecord) -> dict[str, Any]:
    """The throughput figures under their RFC 9971 names: ndr_pps RFC 2544's NDR (every trial
    counted), MLRsearch's conditional throughput of the NDR goal with its goal, a latency
    point's confirmation of it, and a rounds point's MRR (results/paired.py)."""
    h, search = rec.headline, rec.kind == "search"
    rounds = rec.kind == "rounds"
    from vswbench.results.confirm import confirmation

    return {"ndr_pps": h.classic_ndr_pps if search else None,
            "conditional_throughput_pps": h.ndr_pps, "conditional_throughput_gbps": rec.ndr_gbps,
            "throughput_goal": goal_text(h.preset) if search else None,
            "confirmation": confirmation(h.latency) if rec.kind == "latency" else None,
            "mrr_pps": h.achieved_pps if rounds else None,
            "rounds": h.trial_count if rounds else None}


def headline_row(rec: PointRecord) -> dict[str, Any]:
    """One flat row (HEADLINE_COLUMNS) of a point's record; absent fields stay empty (None)."""
    s, h, lat = rec.setup, rec.headline, rec.headline.latency
    backend, stack = _backend(s.switch)
    row: dict[str, Any] = {
        "campaign": rec.campaign, "run_id": rec.run_id, "point_key": rec.key,
        "label": rec.label, "status": rec.status, "kind": rec.kind,
        "switch": None if s.switch == "?" else s.switch, "backend": backend, "stack": stack,
        "switch_versions": ", ".join(f"{k} {v}" for k, v in rec.measured.switch_versions)
        or None,
        "scenario": None if s.scenario == "?" else s.scenario,
        "size": None if s.size == "?" else s.size, "rate_pps": rec.params.rate,
        "repetition": rec.repetition, **{k: rec.params.value(k) for k in _KNOBS},
        **{k: getattr(h, k) for k in _HEADLINE_FIELDS},
        **_throughput(rec), "pdr_gbps": rec.pdr_gbps,
        "latency_fraction_of_ndr": None if lat is None else lat.fraction_of_ndr,
        **{f"latency_{k}_us": None if lat is None else getattr(lat, f"{k}_us")
           for k in LATENCY_FIELDS},
        **_latency_extra(lat), **_ndr_load(h.ndr_load_loss), **_around_ndr(h.loss_around_ndr),
        "error": rec.error, "started": rec.started, "finished": rec.finished}
    row.update(_socket_columns(rec.socket))
    if rec.kind == "latency":
        row.update(_latency_load(row, rec.measured.loads))
    if row["io"] == "auto" and rec.measured.io:
        row["io"] = rec.measured.io       # the tester auto chose: what measured this point
    return {c: row[c] for c in HEADLINE_COLUMNS}


def _socket_columns(sock: SocketResult | None) -> dict[str, Any]:
    if sock is None:
        return dict.fromkeys(SOCKET_COLUMNS)
    out = {c: getattr(sock, c) for c in SOCKET_COLUMNS if c != "service"}
    out.update(service=sock.service, **{f"latency_{k}_us": us for k, us in sock.latency.items()})
    return out


def _latency_load(row: dict[str, Any], loads: Sequence[LoadPoint] | None) -> dict[str, Any]:
    """A latency point's load: the headline trial's (at 90 % of the NDR) offered and achieved
    rates, and its offered rate as the point's rate when the spec gave none (the rate it ran at:
    a fraction of the NDR)."""
    at = load_at(loads)
    if at is None:
        return {}
    offered, achieved = at.offered_pps, at.achieved_pps
    return {"offered_pps": row["offered_pps"] if row["offered_pps"] is not None else offered,
            "achieved_pps": row["achieved_pps"] if row["achieved_pps"] is not None else achieved,
            "rate_pps": row["rate_pps"] if row["rate_pps"] is not None else offered}


def _latency_extra(lat: Latency | None) -> dict[str, Any]:
    if lat is None:
        return dict.fromkeys(LATENCY_EXTRA_COLUMNS)
    return {"latency_lost_frames": lat.lost_frames, "latency_loss_ratio": lat.loss_ratio,
            "latency_counters_agree": lat.counters_agree,
            "latency_unreliable": " ".join(lat.unreliable) or None,
            "latency_jitter_us": lat.jitter_us, "latency_ipdv_p1_us": lat.ipdv_p1_us,
            "latency_ipdv_p50_us": lat.ipdv_p50_us, "latency_ipdv_p99_us": lat.ipdv_p99_us}


def _ndr_load(loss: LoadLoss | None) -> dict[str, Any]:
    if loss is None:
        return dict.fromkeys(NDR_LOAD_COLUMNS)
    return {"ndr_load_trials": loss.trials, "ndr_load_lossy_trials": loss.lossy_trials,
            "ndr_load_worst_lost_frames": loss.worst_lost_frames,
            "ndr_load_worst_loss_ratio": loss.worst_loss_ratio,
            "ndr_load_time_over_goal": loss.time_over_goal,
            "ndr_load_excised_trials": loss.excised_trials}


def _around_ndr(around: LossAround | None) -> dict[str, Any]:
    if around is None:
        return dict.fromkeys(AROUND_NDR_COLUMNS)
    return {"below_ndr_trials": around.trials, "below_ndr_lossy_trials": around.lossy_trials,
            "below_ndr_lowest_lossy_pps": around.lowest_lossy_pps,
            "above_ndr_highest_lossless_pps": around.highest_lossless_pps,
            "ndr_ill_defined": around.ill_defined}


def headline(p: StoredPoint) -> dict[str, Any]:
    """headline_row of a stored point."""
    return headline_row(read_point(p))


def point_record(p: StoredPoint) -> dict[str, Any]:
    """One JSON-lines record of a point: its headline row and its parameters (the result itself
    stays in the store and the JSON export). schemas/point-record.schema.json describes it."""
    return {"schema": RECORD_SCHEMA, **headline(p), "params": dict(p.params)}


def export_jsonl(store: ResultStore, path: str | Path) -> None:
    """point_record of every point, one JSON object a line."""
    _write_atomic(Path(path), lambda f: f.writelines(
        json.dumps(point_record(p), sort_keys=False) + "\n" for p in store.points()))


def export_json(store: ResultStore, path: str | Path) -> None:
    """Runs and points exactly as stored, each point with its headline row beside its result."""
    data = {"schema_version": SCHEMA_VERSION, "vswbench_version": __version__,
            "runs": [asdict(r) for r in store.runs()],
            "points": [{**asdict(p), "headline": headline(p)} for p in store.points()]}
    _write_atomic(Path(path), lambda f: json.dump(data, f, indent=1))


def export_csv(store: ResultStore, path: str | Path) -> None:
    rows = [headline(p) for p in store.points()]

    def write(f: Any) -> None:
        w = csv.DictWriter(f, fieldnames=HEADLINE_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    _write_atomic(Path(path), write, newline="")


def export_parquet(store: ResultStore, path: str | Path) -> None:
    """Headline columns plus params and result as JSON text (pyarrow, optional)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError("export to Parquet needs pyarrow, a dependency of vswbench: run "
                         "./setup.sh again (or .venv/bin/pip install -e .)") from None
    rows = [{**headline(p), "params": json.dumps(p.params), "result": json.dumps(p.result)}
            for p in store.points()]
    columns = [*HEADLINE_COLUMNS, "params", "result"]
    table = pa.Table.from_pydict({c: _typed([r[c] for r in rows]) for c in columns})
    with atomic_writer(path, "wb") as f:
        pq.write_table(table, f)


def _typed(values: list[Any]) -> list[Any]:
    """A column Parquet can type: values of mixed kinds (size 64 and "imix") become text."""
    kinds = {float if type(v) is int else type(v) for v in values if v is not None}
    if len(kinds) <= 1:
        return values
    return [None if v is None else str(v) for v in values]


def export(store: ResultStore, fmt: str, path: str | Path) -> None:
    """export_json, export_csv, export_parquet, export_jsonl or export_hdr by name (FORMATS)."""
    from vswbench.results.hdr import export_hdr

    writers = {"json": export_json, "csv": export_csv, "parquet": export_parquet,
               "jsonl": export_jsonl, "hdr": export_hdr}
    if fmt not in writers:
        raise UsageError(f"export format {fmt!r}: one of {', '.join(FORMATS)}")
    writers[fmt](store, path)


def _write_atomic(path: Path, write: Any, **open_args: Any) -> None:
    """A reader never sees half an export: write beside it, then rename (safefile)."""
    with atomic_writer(path, "w", **open_args) as f:
        write(f)
