"""The results store: one SQLite file per campaign directory, written the moment each point ends.

Why SQLite (stdlib sqlite3): a crash, Ctrl-C or power cut must never lose a point that was
recorded, and a rerun must know which points are finished. Every write is its own committed
transaction (autocommit, WAL, synchronous=FULL), and points are unique per (campaign, point key),
so a rerun of the same campaign asks `finished_keys` and skips those points.

A run records the exact spec text and the system fingerprint (host/sysinfo.py) beside its points, so a
result can always be traced to the configuration that produced it (RFC 8172, RFC 8204).
Exports: JSON (everything), CSV and Parquet (one row per point with the headline numbers).
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vswbench import __version__
from vswbench.errors import UsageError, VswbenchError

STORE_NAME = "results.sqlite"       # the store's file name in a run's directory

SCHEMA_VERSION = 1
APPLICATION_ID = 0x76737762          # "vswb" in the SQLite header: identifies the file as ours
POINT_STATUSES = ("done", "failed", "skipped")
RUN_STATUSES = ("running", "done", "interrupted", "failed")

SCHEMA = """
CREATE TABLE vswbench_schema (version INTEGER NOT NULL, created TEXT NOT NULL);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
    spec_name TEXT NOT NULL, spec_text TEXT NOT NULL, fingerprint TEXT, version TEXT NOT NULL);
CREATE TABLE points (
    id INTEGER PRIMARY KEY, campaign TEXT NOT NULL, run_id TEXT NOT NULL REFERENCES runs(run_id),
    point_key TEXT NOT NULL, label TEXT NOT NULL, params TEXT NOT NULL, kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed', 'skipped')),
    result TEXT, error TEXT, started TEXT, finished TEXT NOT NULL,
    UNIQUE (campaign, point_key));
"""


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    spec_name: str                   # the campaign's name
    started: str
    finished: str | None
    status: str
    spec_text: str
    fingerprint: dict[str, Any] | None
    version: str


@dataclass(frozen=True)
class StoredPoint:
    campaign: str
    run_id: str
    key: str
    label: str
    params: dict[str, Any]
    kind: str
    status: str
    result: dict[str, Any] | None
    error: str | None
    started: str | None
    finished: str


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class ResultStore:
    """with ResultStore(DIR / "results.sqlite") as store: ... (create=False: it must exist)."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not self.path.exists():
            if not create:
                raise UsageError(f"no results store at {self.path}: give the --out directory of "
                                 "a `vswbench run`")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif self.path.is_dir():
            raise UsageError(f"{self.path} is a directory: give the store's file "
                             "(results.sqlite in the run's directory)")
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        except sqlite3.Error as e:
            raise UsageError(f"cannot open results store {self.path}: {e}") from None
        self.db.row_factory = sqlite3.Row
        try:
            self._check_or_create()
        except BaseException:
            self.db.close()
            raise

    def _check_or_create(self) -> None:
        """Look before writing: a foreign file is reported and left exactly as it was."""
        not_ours = (f"{self.path} is not a vswbench results store: give the store a `vswbench "
                    "run` wrote (results.sqlite in its --out directory), or a new file name")
        try:
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
            app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.DatabaseError:
            raise UsageError(not_ours) from None
        if not tables and app_id == 0:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.db.executescript("BEGIN;" + SCHEMA + "COMMIT;")
            self.db.execute("INSERT INTO vswbench_schema VALUES (?, ?)", (SCHEMA_VERSION, now()))
        elif app_id != APPLICATION_ID or "vswbench_schema" not in tables:
            raise UsageError(not_ours)
        else:
            version = self.db.execute("SELECT MAX(version) FROM vswbench_schema").fetchone()[0]
            if version is None or version > SCHEMA_VERSION:
                raise UsageError(f"{self.path} was written by a newer vswbench (store schema "
                                 f"{version}, this one reads {SCHEMA_VERSION}): upgrade vswbench")
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- writing -------------------------------------------------------------------------------
    def begin_run(self, run_id: str, spec: Any, fingerprint: Any = None) -> None:
        """`spec`: a campaign.CampaignSpec (its name and exact text are kept); `fingerprint`: a
        sysinfo.Fingerprint, a dict, or None."""
        fp = fingerprint.to_json() if hasattr(fingerprint, "to_json") else fingerprint
        try:
            self.db.execute("INSERT INTO runs VALUES (?, ?, NULL, 'running', ?, ?, ?, ?)",
                            (run_id, now(), spec.name, spec.text,
                             None if fp is None else json.dumps(fp, sort_keys=True), __version__))
        except sqlite3.IntegrityError:
            raise VswbenchError(f"run {run_id} is already in {self.path}: use a new run id") \
                from None

    def record_point(self, run_id: str, point: Any, result_json: dict[str, Any] | None,
                     status: str, error: str | None = None, *, started: str | None = None) -> None:
        """Write one point's outcome now, committed before this returns. `point` is a
        campaign.Point. A point recorded again (a failed point retried) replaces its row."""
        if status not in POINT_STATUSES:
            raise ValueError(f"point status {status!r}: one of {', '.join(POINT_STATUSES)}")
        campaign = self._campaign_of(run_id)
        self.db.execute(
            "INSERT INTO points (campaign, run_id, point_key, label, params, kind, status, result,"
            " error, started, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (campaign, point_key) DO UPDATE SET run_id=excluded.run_id,"
            " label=excluded.label, params=excluded.params, kind=excluded.kind,"
            " status=excluded.status, result=excluded.result, error=excluded.error,"
            " started=excluded.started, finished=excluded.finished",
            (campaign, run_id, point.key, point.label, json.dumps(point.params(), sort_keys=True),
             point.kind, status, None if result_json is None else json.dumps(result_json), error,
             started, now()))

    def end_run(self, run_id: str, status: str) -> None:
        if status not in RUN_STATUSES:
            raise ValueError(f"run status {status!r}: one of {', '.join(RUN_STATUSES)}")
        self._campaign_of(run_id)
        self.db.execute("UPDATE runs SET finished = ?, status = ? WHERE run_id = ?",
                        (now(), status, run_id))

    def _campaign_of(self, run_id: str) -> str:
        row = self.db.execute("SELECT spec_name FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise VswbenchError(f"run {run_id} is not in {self.path}: call begin_run first")
        return str(row[0])

    # -- reading -------------------------------------------------------------------------------
    def finished_keys(self, campaign_name: str, statuses: tuple[str, ...] = ("done",)) -> set[str]:
        """Keys of points a rerun skips: by default only those that succeeded (failed and
        skipped points, e.g. a switch unavailable last time, are tried again)."""
        marks = ",".join("?" * len(statuses))
        rows = self.db.execute(f"SELECT point_key FROM points WHERE campaign = ? AND status IN "
                               f"({marks})", (campaign_name, *statuses))
        return {r[0] for r in rows}

    def points(self, campaign_name: str | None = None) -> list[StoredPoint]:
        sql = "SELECT * FROM points"
        args: tuple[Any, ...] = ()
        if campaign_name is not None:
            sql, args = sql + " WHERE campaign = ?", (campaign_name,)
        return [StoredPoint(r["campaign"], r["run_id"], r["point_key"], r["label"],
                            json.loads(r["params"]), r["kind"], r["status"],
                            json.loads(r["result"]) if r["result"] is not None else None,
                            r["error"], r["started"], r["finished"])
                for r in self.db.execute(sql + " ORDER BY id", args)]

    def runs(self) -> list[StoredRun]:
        return [StoredRun(r["run_id"], r["spec_name"], r["started"], r["finished"], r["status"],
                          r["spec_text"],
                          json.loads(r["fingerprint"]) if r["fingerprint"] else None, r["version"])
                for r in self.db.execute("SELECT * FROM runs ORDER BY started, rowid")]

    # -- exports -------------------------------------------------------------------------------
    def export_json(self, path: str | Path) -> None:
        data = {"schema_version": SCHEMA_VERSION, "vswbench_version": __version__,
                "runs": [asdict(r) for r in self.runs()],
                "points": [asdict(p) for p in self.points()]}
        _write_atomic(Path(path), lambda f: json.dump(data, f, indent=1))

    def export_csv(self, path: str | Path) -> None:
        rows = [headline(p) for p in self.points()]

        def write(f: Any) -> None:
            w = csv.DictWriter(f, fieldnames=HEADLINE_COLUMNS)
            w.writeheader()
            w.writerows(rows)
        _write_atomic(Path(path), write, newline="")

    def export_parquet(self, path: str | Path) -> None:
        """Headline columns plus params and result as JSON text (pyarrow, optional)."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError("export to Parquet needs pyarrow: pip install pyarrow "
                             "(into the virtual environment: .venv/bin/pip install pyarrow)") \
                from None
        rows = [{**headline(p), "params": json.dumps(p.params), "result": json.dumps(p.result)}
                for p in self.points()]
        columns = [*HEADLINE_COLUMNS, "params", "result"]
        table = pa.Table.from_pydict({c: [r[c] for r in rows] for c in columns})
        tmp = Path(path).with_name(Path(path).name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, path)


def _write_atomic(path: Path, write: Any, **open_args: Any) -> None:
    """A reader never sees half an export: write beside it, then rename."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", **open_args) as f:
        write(f)
    os.replace(tmp, path)


# -- headline numbers --------------------------------------------------------------------------
HEADLINE_COLUMNS = [
    "campaign", "run_id", "point_key", "label", "status", "kind", "switch", "scenario", "size",
    "flows", "burst", "placement", "io", "preset", "rate_pps", "shape_pps", "repetition",
    "forwarding_mode", "ndr_pps", "ndr_gbps", "pdr_pps", "lower_bound_pps", "upper_bound_pps",
    "generator_bound", "generator_ceiling_pps", "ndr_cv", "offered_pps", "achieved_pps",
    "loss_ratio", "latency_fraction_of_ndr", "latency_p50_us", "latency_p99_us",
    "cycles_per_packet", "useful_cycles_per_packet", "peak_achieved_pps", "highest_lossless_pps", "b2b_frames",
    "implied_buffer_s", "corrected_buffer_s", "trial_count", "trial_seconds", "wall_seconds",
    "error", "started", "finished"]
LATENCY_HEADLINE_FRACTION = 0.9      # the report ranks p50/p99 at 90 % of the NDR


def wire_gbps(pps: float | None, size: Any) -> float | None:
    """Gbit/s on the wire: frame (FCS included) plus 20 bytes of preamble and gap."""
    if pps is None or not isinstance(size, int):
        return None
    return round(pps * (size + 20) * 8 / 1e9, 6)


def _as_number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def headline(p: StoredPoint) -> dict[str, Any]:
    """One flat row of the numbers a reader compares first, from whichever result shape the
    point's kind produces (search, sweep, trial, latency, b2b); absent fields stay empty."""
    r = p.result or {}
    prm = p.params
    row: dict[str, Any] = dict.fromkeys(HEADLINE_COLUMNS)
    row.update(campaign=p.campaign, run_id=p.run_id, point_key=p.key, label=p.label,
               status=p.status, kind=p.kind, error=p.error, started=p.started,
               finished=p.finished, repetition=prm.get("repetition", 0),
               switch=prm.get("switch", r.get("switch")),
               scenario=prm.get("scenario", r.get("scenario")),
               size=prm.get("size", r.get("frame_size")), rate_pps=prm.get("rate"),
               **{k: prm.get(k) for k in ("flows", "burst", "placement", "io", "preset",
                                          "shape_pps")})
    for k in ("forwarding_mode", "ndr_pps", "pdr_pps", "lower_bound_pps", "upper_bound_pps",
              "generator_bound", "generator_ceiling_pps", "offered_pps", "achieved_pps",
              "loss_ratio", "cycles_per_packet", "trial_count", "trial_seconds", "wall_seconds",
              "implied_buffer_s", "corrected_buffer_s"):
        if k in r and not isinstance(r[k], (dict, list)):
            row[k] = r[k]
    row["ndr_gbps"] = wire_gbps(_as_number(row["ndr_pps"]), row["size"])
    stats = (r.get("statistics") or {}).get("ndr_pps") if p.kind == "search" else None
    row["ndr_cv"] = stats.get("cv") if isinstance(stats, dict) else None
    if p.kind == "b2b":
        row["b2b_frames"] = r.get("benchmark_frames")
    lat = r.get("latency_us") if isinstance(r.get("latency_us"), dict) else None
    points = r.get("points") if p.kind == "latency" else r.get("latency_at_ndr")
    if isinstance(points, list) and points:
        at = min(points, key=lambda q: abs((q.get("fraction_of_ndr") or 0)
                                           - LATENCY_HEADLINE_FRACTION))
        row["latency_fraction_of_ndr"] = at.get("fraction_of_ndr")
        lat = at.get("latency_us") if isinstance(at.get("latency_us"), dict) else None
        if p.kind == "latency":
            row["cycles_per_packet"] = at.get("cycles_per_packet")
    if lat:
        row["latency_p50_us"], row["latency_p99_us"] = lat.get("p50"), lat.get("p99")
    if p.kind == "search" and row["cycles_per_packet"] is None:
        row["cycles_per_packet"] = _cycles_near_ndr(r.get("trials"))
    if p.kind == "search":
        row["useful_cycles_per_packet"] = _cycles_near_ndr(r.get("trials"),
                                                           "useful_cycles_per_packet")
    if p.kind == "sweep" and isinstance(r.get("saturation"), dict):
        row["peak_achieved_pps"] = r["saturation"].get("peak_achieved_pps")
        row["highest_lossless_pps"] = r["saturation"].get("highest_lossless_offered_pps")
    return row


def _cycles_near_ndr(trials: Any, field: str = "cycles_per_packet") -> float | None:
    """Cycles per packet of a search: from its highest-load trial without loss or unsent frames
    (the load closest to the NDR whose cost was measured at a rate the DUT sustained)."""
    if not isinstance(trials, list):
        return None
    clean = [t for t in trials if isinstance(t, dict) and t.get("lost") == 0
             and not t.get("unsent") and t.get(field) is not None]
    if not clean:
        return None
    return max(clean, key=lambda t: t.get("intended_pps") or 0)[field]
