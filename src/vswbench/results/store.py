"""The results store: one SQLite file per campaign directory, written the moment each point ends.

Why SQLite (stdlib sqlite3): a crash, Ctrl-C or power cut must never lose a point that was
recorded, and a rerun must know which points are finished. Every write is its own committed
transaction (autocommit, WAL, synchronous=FULL), and points are unique per (campaign, point key),
so a rerun of the same campaign asks `finished_keys` and skips those points.

A run records the exact spec text and the system fingerprint (host/sysinfo.py) beside its points, so a
result can always be traced to the configuration that produced it (RFC 8172, RFC 8204).
Reading points as typed records with their headline numbers is points.py's; exports are
export.py's.

Who may open it how: commands that only read (report, export, compare, the models) open it
read-only (`create=False`), so a read-only store or root's store read by another user works. One
writer at a time: a writer holds an exclusive lock on `results.sqlite.lock` (flock) naming its run
and pid; a second writer is refused with the holder's run id, pid and start. A run still marked
"running" whose writer is gone was killed: readers show it as "killed", the next writer records
it so. An empty file, a damaged file and a foreign database are each named as such, with the fix.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench import __version__
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.results.fingerprint import RunFingerprint
from vswbench.safefile import WriteFailed
from vswbench.safefile import check_output_dir
from vswbench.safefile import open_regular
from vswbench.safefile import refuse_unsafe
from vswbench.safefile import refuse_untrusted
from vswbench.saferead import check_input

STORE_NAME = "results.sqlite"       # the store's file name in a run's directory

SCHEMA_VERSION = 1
APPLICATION_ID = 0x76737762          # "vswb" in the SQLite header: identifies the file as ours
POINT_STATUSES = ("done", "failed", "skipped")
RUN_STATUSES = ("running", "done", "interrupted", "failed", "killed")
LOCK_SUFFIX = ".lock"
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")   # SQLite's files beside the store

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

    @property
    def system(self) -> RunFingerprint | None:
        """The stored fingerprint, typed (results/fingerprint.py); None: none recorded."""
        return None if self.fingerprint is None else RunFingerprint.from_json(self.fingerprint)


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
        """create=True: the writer (made if missing, locked for this process); create=False: a
        reader of an existing store, opened read-only."""
        self.path = Path(path)
        self.writable = create
        self._lock_fd: int | None = None
        self._check_path()
        if create:
            check_output_dir(self.path.parent)
            self._lock()
        self.db = self._open()
        self.db.row_factory = sqlite3.Row
        try:
            self._check_or_create()
        except sqlite3.Error as e:
            self.close()
            if self.writable and _write_failure(e):
                raise WriteFailed(self.path, str(e)) from None
            raise
        except BaseException:
            self.close()
            raise

    def _check_path(self) -> None:
        """The store's path before anything is opened: a regular file (or, for the writer,
        nothing yet), not empty, no link at it or its side files."""
        if self.path.is_dir() and not self.path.is_symlink():
            raise UsageError(f"{self.path} is a directory: give the store's file "
                             "(results.sqlite in the run's directory)")
        if os.path.lexists(self.path) and not self.path.is_symlink():
            check_input(self.path, "store")      # saferead: a regular file, opened O_NONBLOCK
        self.refuse_links()
        if not self.path.exists() and not self.writable:
            raise UsageError(f"no results store at {self.path}: give the --out directory of "
                             "a `vswbench run`")
        if self.path.exists() and self.path.stat().st_size == 0:
            raise UsageError(f"{self.path} is an empty file, not a vswbench results store: "
                             "remove it, or give another --out directory")

    def _open(self) -> sqlite3.Connection:
        """_connect, its failure named (the lock given back)."""
        try:
            return self._connect()
        except sqlite3.Error as e:
            self._unlock()
            if self.writable and _write_failure(e):
                raise WriteFailed(self.path, str(e)) from None
            if isinstance(e, sqlite3.DatabaseError) and "not a database" in str(e):
                raise UsageError(f"{self.path} is not a vswbench results store: give the store a "
                                 "`vswbench run` wrote (results.sqlite in its --out directory), "
                                 "or a new file name") from None
            raise UsageError(f"cannot open results store {self.path}: {e}") from None

    def refuse_links(self) -> None:
        """The store, its lock and SQLite's -wal, -shm and -journal files are regular files
        or nothing: a link (even a dangling one, which SQLite would create), a directory, a
        device or a FIFO at any of them is refused (UsageError), untouched; so is, for the
        writer, one with a second hard link, another owner or group/other write."""
        for path in (self.path, self.lock_path,
                     *(self.path.with_name(self.path.name + s) for s in SIDE_SUFFIXES)):
            refuse_unsafe(path)
            if self.writable:
                refuse_untrusted(path)

    def _connect(self) -> sqlite3.Connection:
        if self.writable:
            return sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        uri = self.path.resolve().as_uri()
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=10.0)
            db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return db
        except sqlite3.OperationalError:
            # a WAL store in a directory this user cannot write (no -shm to share): read the
            # file as it is; no writer can be running where nobody may write
            return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)

    # -- one writer ----------------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + LOCK_SUFFIX)

    def _lock(self, run_id: str = "?") -> None:
        try:
            fd = open_regular(self.lock_path, read=True, mode=0o644)
        except WriteFailed as exc:
            raise UsageError(f"results store {self.path}: cannot write beside it "
                             f"({exc}): give an --out directory you may write") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace")
            os.close(fd)
            raise VswbenchError(f"results store {self.path} is in use by {_holder(holder)}: "
                                "wait for that run to end, or give another --out directory") \
                from None
        self._lock_fd = fd
        self._write_holder(run_id)

    def _write_holder(self, run_id: str) -> None:
        if self._lock_fd is None:
            return
        text = json.dumps({"run_id": run_id, "pid": os.getpid(), "since": now()})
        try:
            os.ftruncate(self._lock_fd, 0)
            os.pwrite(self._lock_fd, text.encode(), 0)
        except OSError as exc:
            raise WriteFailed(self.lock_path, exc) from None

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                self.lock_path.unlink(missing_ok=True)
            os.close(self._lock_fd)
            self._lock_fd = None

    def writer_alive(self) -> bool:
        """Does some process (this one included) hold the writer's lock now?"""
        if self._lock_fd is not None:
            return True
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False
        except OSError:
            return True
        finally:
            os.close(fd)

    def _check_or_create(self) -> None:
        """Look before writing: a foreign file is reported and left exactly as it was."""
        not_ours = (f"{self.path} is not a vswbench results store: give the store a `vswbench "
                    "run` wrote (results.sqlite in its --out directory), or a new file name")
        try:
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
            app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.DatabaseError:
            raise UsageError(not_ours) from None
        if app_id == APPLICATION_ID:
            self._check_intact()
        if not tables and app_id == 0:
            if not self.writable:
                raise UsageError(not_ours)
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
            if self.writable:
                self.db.execute("PRAGMA journal_mode=WAL")
        if self.writable:
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            # no other writer can exist now: a run still "running" was killed
            self.db.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")

    def _check_intact(self) -> None:
        """SQLite's quick_check of one of our stores: a damaged one is refused."""
        try:
            verdict = self.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            verdict = str(exc)
        if verdict != "ok":
            raise UsageError(f"{self.path} is a damaged vswbench results store (SQLite: "
                             f"{verdict}): its points cannot be trusted; measure again into a "
                             "new --out directory (sqlite3's .recover may save what is left)")

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if hasattr(self, "db"):
            self.db.close()
        self._unlock()

    # -- writing -------------------------------------------------------------------------------
    def begin_run(self, run_id: str, spec: Any, fingerprint: Any = None) -> None:
        """`spec`: a campaign.CampaignSpec (its name and exact text are kept); `fingerprint`: a
        sysinfo.Fingerprint, a dict, or None."""
        fp = fingerprint.to_json() if hasattr(fingerprint, "to_json") else fingerprint
        self._write_holder(run_id)
        try:
            self._write("INSERT INTO runs VALUES (?, ?, NULL, 'running', ?, ?, ?, ?)",
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
        self._write(
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
        self._write("UPDATE runs SET finished = ?, status = ? WHERE run_id = ?",
                    (now(), status, run_id))

    def copy_run(self, run: StoredRun) -> None:
        """A run of another store as it is (results/merge.py): id, times, status, spec,
        fingerprint, version."""
        fp = None if run.fingerprint is None else json.dumps(run.fingerprint, sort_keys=True)
        self._write("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (run.run_id, run.started, run.finished, run.status, run.spec_name,
                     run.spec_text, fp, run.version))

    def copy_point(self, p: StoredPoint) -> None:
        """A point of another store as it is (results/merge.py); its run copied before."""
        self._write(
            "INSERT INTO points (campaign, run_id, point_key, label, params, kind, status, result,"
            " error, started, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (p.campaign, p.run_id, p.key, p.label, json.dumps(p.params, sort_keys=True), p.kind,
             p.status, None if p.result is None else json.dumps(p.result), p.error, p.started,
             p.finished))

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        """One committed write; a full disk or an unwritable file is WriteFailed (exit 1: the
        points committed before stay, the same command resumes), not a damaged store."""
        try:
            self.db.execute(sql, args)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            if self.writable and _write_failure(exc):
                raise WriteFailed(self.path, str(exc)) from None
            raise

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
        """Every run; one still "running" whose writer is gone is shown as "killed"."""
        alive = self.writer_alive()
        return [StoredRun(r["run_id"], r["spec_name"], r["started"], r["finished"],
                          "killed" if r["status"] == "running" and not alive else r["status"],
                          r["spec_text"],
                          json.loads(r["fingerprint"]) if r["fingerprint"] else None, r["version"])
                for r in self.db.execute("SELECT * FROM runs ORDER BY started, rowid")]


def _write_failure(exc: sqlite3.Error) -> bool:
    """SQLite's words for a write the file system refused (full, read-only, I/O error)."""
    text = str(exc).lower()
    return any(w in text for w in ("disk is full", "disk i/o error", "readonly database",
                                   "unable to open database file"))


def _holder(text: str) -> str:
    """Who holds the lock, as its file says, or that this cannot be told."""
    try:
        data = json.loads(text)
        run, pid, since = data.get("run_id"), int(data["pid"]), data.get("since", "?")
    except (ValueError, KeyError, TypeError, AttributeError):
        return "another process (which one cannot be told: the lock file names no holder)"
    if run and run != "?":
        return f"run {run} (pid {pid}) since {since}"
    return f"pid {pid} since {since} (a vswbench that has not named its run yet)"
