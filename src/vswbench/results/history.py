"""The history of runs: one SQLite file (default results/history.sqlite) that keeps every run a
user adds, so a series of nightly runs can be read as a trend (results/trend.py).

`vswbench history add DIR...` (and `vswbench run --history FILE`) reads a results store through
points.py and setups.py, the report's own reading (one row per setup: the median NDR and PDR over
its repetitions, host-stall trials excised as the searches excised them), and appends one history
run per campaign in the store with one row per setup, keyed by the setup: switch, scenario, frame
size, variant (the non-default knobs) and preset. Each history run carries:

- the machine: a short hash (`machine`) of what identifies the hardware in the run's fingerprint
  (host/sysinfo.py: host name, CPU model, logical CPUs, architecture, virtualization), never the
  kernel or the versions, which are what a trend is meant to follow; trend.py keeps each machine's
  runs in their own series unless told otherwise;
- the versions: the kernel release, vswbench's version, and per setup the switch's own versions
  as the search recorded them (`switch_versions`);
- the time: the first start of the campaign's runs in the store.

A store's campaign is added once (its first run id is its identity): adding it again is skipped
and said, so a nightly job may add the same directory twice. The file is versioned
(`history_schema`, SQLite application id "vswh"); a newer file, a results store, a foreign or
damaged database and an empty file are refused (UsageError, exit 2) before anything is written.
Writes are transactions (rollback journal, synchronous FULL): an add is all of one store's runs
or nothing; links, devices and FIFOs at the file or its journal are refused (safefile).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.jsonvalues import number
from vswbench.results.points import load
from vswbench.results.points import store_file
from vswbench.results.setups import search_setups
from vswbench.results.store import now
from vswbench.safefile import WriteFailed
from vswbench.safefile import check_output_dir
from vswbench.safefile import refuse_unsafe
from vswbench.saferead import check_input

DEFAULT_HISTORY = Path("results/history.sqlite")
SCHEMA_VERSION = 1
APPLICATION_ID = 0x76737768            # "vswh"
RESULTS_STORE_ID = 0x76737762          # a results store's ("vswb"): named as such when given
MACHINE_FIELDS = ("hostname", "cpu_model", "logical_cpus", "machine", "virtualization")
UNKNOWN_MACHINE = "unknown"
StoreRows = tuple[dict[str, Any], list[tuple[Any, ...]]]   # a history run's columns, its rows

SCHEMA = """
CREATE TABLE history_schema (version INTEGER NOT NULL, created TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, campaign TEXT NOT NULL, first_run_id TEXT NOT NULL,
    run_ids TEXT NOT NULL, source TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,
    machine TEXT NOT NULL, machine_name TEXT NOT NULL, kernel TEXT NOT NULL,
    vswbench TEXT NOT NULL, fingerprint TEXT, added TEXT NOT NULL,
    UNIQUE (campaign, first_run_id));
CREATE TABLE results (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    switch TEXT NOT NULL, scenario TEXT NOT NULL, size TEXT NOT NULL, variant TEXT NOT NULL,
    preset TEXT NOT NULL, ndr_pps REAL, pdr_pps REAL, repetitions INTEGER NOT NULL,
    excised_trials INTEGER NOT NULL, generator_bound INTEGER NOT NULL,
    switch_version TEXT NOT NULL,
    PRIMARY KEY (run, switch, scenario, size, variant, preset));
"""


@dataclass(frozen=True, order=True)
class SetupKey:
    """What a series follows: one setup measured with one preset."""
    switch: str
    scenario: str
    size: str
    variant: str
    preset: str

    @property
    def label(self) -> str:
        size = f"{self.size} B" if self.size.isdigit() else self.size
        variant = " ".join(v for v in self.variant.split() if not v.startswith("preset="))
        parts = [self.switch, self.scenario, size, variant, f"preset {self.preset}"]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class HistoryRun:
    id: int
    campaign: str
    run_ids: tuple[str, ...]
    source: str
    started: str
    finished: str | None
    machine: str                  # the hash of the machine's identity (MACHINE_FIELDS)
    machine_name: str             # "host: CPU model, N CPUs"
    kernel: str
    vswbench: str
    added: str


@dataclass(frozen=True)
class HistoryResult:
    run: HistoryRun
    setup: SetupKey
    ndr_pps: float | None
    pdr_pps: float | None
    repetitions: int
    excised_trials: int           # host-stall trials the searches excised
    generator_bound: bool
    switch_version: str           # "name version, ..." as the search recorded them; "" if none


@dataclass(frozen=True)
class Added:
    source: str
    campaign: str
    run: int | None               # None: already in the history (skipped)
    setups: int


def machine_of(fp: dict[str, Any] | None) -> tuple[str, str]:
    """(hash, name) of the machine in a run's fingerprint; ("unknown", ...) without one."""
    if not fp:
        return UNKNOWN_MACHINE, "machine not recorded"
    ident = {k: fp.get(k) for k in MACHINE_FIELDS}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()
    cpus = fp.get("logical_cpus")
    name = f"{fp.get('hostname') or '?'}: {fp.get('cpu_model') or 'CPU not recorded'}"
    if isinstance(cpus, int):
        name += f", {cpus} CPU{'s' if cpus != 1 else ''}"
    return digest[:12], name


class History:
    """with History(path) as h: ... (create=False: it must exist, opened read-only unless
    `write`: `history remove`)."""

    def __init__(self, path: str | Path, *, create: bool = True, write: bool = False,
                 flag: str | None = "--history") -> None:
        """flag: the option that named the file, the only one its errors name (None: an
        argument, as `trend HISTORY_FILE`)."""
        self.path = Path(path)
        self.what = f"{flag} {self.path}" if flag else f"history {self.path}"
        self.writable = create or write
        if os.path.lexists(self.path) and not self.path.is_symlink():
            check_input(self.path, "history", flag)    # saferead: a regular file, opened O_NONBLOCK
        for p in (self.path, self.path.with_name(self.path.name + "-journal")):
            refuse_unsafe(p, flag)
        if self.path.exists() and self.path.stat().st_size == 0:
            raise UsageError(f"{self.what} is an empty file, not a vswbench history: "
                             "remove it, or give another file")
        if not self.path.exists():
            if not create:
                raise UsageError(f"no history at {self.path}: make one with `vswbench history "
                                 "add DIR --history FILE`")
            check_output_dir(self.path.parent, f"{self.what}: its directory")
        try:
            if self.writable:
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            else:
                uri = self.path.resolve().as_uri()
                self.db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
            self._check_or_create()
        except sqlite3.Error as exc:
            self.close()
            if self.writable and "readonly" in str(exc).lower():
                raise WriteFailed(self.path, str(exc)) from None
            raise UsageError(f"{self.what} is not a vswbench history ({exc}): give "
                             "the file `vswbench history add` wrote, or a new file name") from None
        except BaseException:
            self.close()
            raise

    def _check_or_create(self) -> None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        if app_id == RESULTS_STORE_ID:
            raise UsageError(f"{self.what} is a results store (what `vswbench run` "
                             "writes), not a history: give a history file, e.g. "
                             f"{DEFAULT_HISTORY}, and the results directory to `history add`")
        if not tables and app_id == 0:
            if not self.writable:
                raise UsageError(f"{self.what} is not a vswbench history")
            self.db.execute("PRAGMA journal_mode=DELETE")
            self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.db.executescript("BEGIN;" + SCHEMA + "COMMIT;")
            self.db.execute("INSERT INTO history_schema VALUES (?, ?)", (SCHEMA_VERSION, now()))
        elif app_id != APPLICATION_ID or "history_schema" not in tables:
            raise UsageError(f"{self.what} is not a vswbench history: give the file "
                             "`vswbench history add` wrote, or a new file name")
        else:
            check = self.db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise UsageError(f"{self.what} is damaged (SQLite: {check}): add the "
                                 "results directories again into a new history file")
            version = self.db.execute("SELECT MAX(version) FROM history_schema").fetchone()[0]
            if version is None or version > SCHEMA_VERSION:
                raise UsageError(f"{self.what} was written by a newer vswbench "
                                 f"(history schema {version}, this one reads {SCHEMA_VERSION}): "
                                 "upgrade vswbench")
        if self.writable:
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if hasattr(self, "db"):
            self.db.close()

    # -- writing -------------------------------------------------------------------------------
    def add(self, results_dir: str | Path) -> list[Added]:
        """Every campaign of a results store, one history run each (skipped when already in)."""
        return self.add_rows(store_rows(results_dir))

    def add_rows(self, rows: list[StoreRows]) -> list[Added]:
        """store_rows' runs and rows, in one transaction."""
        out = []
        try:
            self.db.execute("BEGIN IMMEDIATE")
            for run, results in rows:
                found = self.db.execute("SELECT id FROM runs WHERE campaign = ? AND "
                                        "first_run_id = ?", (run["campaign"], run["run_ids"][0]))
                if found.fetchone() is not None:
                    out.append(Added(run["source"], run["campaign"], None, len(results)))
                    continue
                cur = self.db.execute(
                    "INSERT INTO runs (campaign, first_run_id, run_ids, source, started, finished,"
                    " machine, machine_name, kernel, vswbench, fingerprint, added) VALUES"
                    " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run["campaign"], run["run_ids"][0], ",".join(run["run_ids"]),
                     run["source"], run["started"], run["finished"], run["machine"],
                     run["machine_name"], run["kernel"], run["vswbench"], run["fingerprint"],
                     now()))
                ident = int(cur.lastrowid or 0)
                self.db.executemany(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(ident, *r) for r in results])
                out.append(Added(run["source"], run["campaign"], ident, len(results)))
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise WriteFailed(self.path, str(exc)) from None
        return out

    def remove(self, ids: Sequence[int]) -> None:
        """Remove history runs (and their rows) by id; an unknown id is refused, nothing removed."""
        known = {r.id for r in self.runs()}
        missing = [i for i in ids if i not in known]
        if missing:
            raise UsageError(f"no history run {', '.join(map(str, missing))} in {self.path}: "
                             "`vswbench history list` shows the ids")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in ids])
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise WriteFailed(self.path, str(exc)) from None

    # -- reading -------------------------------------------------------------------------------
    def runs(self) -> list[HistoryRun]:
        """Every history run, oldest first (by the time it was measured)."""
        return [_run(r) for r in self.db.execute(
            "SELECT id, campaign, run_ids, source, started, finished, machine, machine_name,"
            " kernel, vswbench, added FROM runs ORDER BY started, id")]

    def run(self, ident: int) -> HistoryRun:
        found = [r for r in self.runs() if r.id == ident]
        if not found:
            raise UsageError(f"no history run {ident} in {self.path}: `vswbench history list` "
                             "shows the ids")
        return found[0]

    def results(self, run: int | None = None) -> list[HistoryResult]:
        """Every result row (of one run), its runs oldest first."""
        runs = {r.id: r for r in self.runs()}
        sql = ("SELECT run, switch, scenario, size, variant, preset, ndr_pps, pdr_pps,"
               " repetitions, excised_trials, generator_bound, switch_version FROM results")
        rows = self.db.execute(sql + (" WHERE run = ?" if run is not None else ""),
                               (run,) if run is not None else ())
        out = [HistoryResult(runs[r[0]], SetupKey(*r[1:6]), r[6], r[7], int(r[8]), int(r[9]),
                             bool(r[10]), str(r[11])) for r in rows]
        order = {ident: i for i, ident in enumerate(runs)}
        return sorted(out, key=lambda x: (order[x.run.id], x.setup))


def _run(r: Iterable[Any]) -> HistoryRun:
    (ident, campaign, run_ids, source, started, finished, machine, name, kernel, version,
     added) = r
    return HistoryRun(int(ident), campaign, tuple(run_ids.split(",")), source, started, finished,
                      machine, name, kernel, version, added)


def store_rows(results_dir: str | Path) -> list[StoreRows]:
    """Per campaign of a results store: its history run (as columns) and its result rows."""
    path = store_file(results_dir)
    data = load(path)
    out = []
    for campaign in data.campaigns:
        runs = [r for r in data.runs if r.spec_name == campaign]
        if not runs:
            continue
        fp = next((r.fingerprint for r in reversed(runs) if r.fingerprint), None)
        machine, machine_name = machine_of(fp)
        kernel = str((fp or {}).get("kernel_release") or "n/a")
        finished = [r.finished for r in runs if r.finished]
        run = {"campaign": campaign, "run_ids": [r.run_id for r in runs],
               "source": str(path.parent.resolve()), "started": runs[0].started,
               "finished": max(finished) if finished else None, "machine": machine,
               "machine_name": machine_name, "kernel": kernel, "vswbench": runs[-1].version,
               "fingerprint": json.dumps(fp, sort_keys=True) if fp else None}
        records = [r for r in data.records("search") if r.campaign == campaign]
        rows = []
        for s in search_setups(records):
            head = s.chosen.headline
            versions = ", ".join(f"{k} {v}" for k, v in s.chosen.measured.switch_versions)
            excised = sum(r.headline.trials_rejected or 0 for r in s.repetitions)
            rows.append((s.setup.switch, s.setup.scenario, str(s.setup.size), s.setup.variant,
                         head.preset or s.chosen.params.preset or "fast", number(s.ndr_pps),
                         number(s.pdr_pps), len(s.repetitions), excised,
                         int(bool(head.generator_bound)), versions))
        out.append((run, rows))
    if not out:
        raise UsageError(f"{path} holds no run: give the --out directory of a finished "
                         "`vswbench run`")
    return out
