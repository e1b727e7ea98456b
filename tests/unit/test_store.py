"""store.py and export.py: points survive reopening, reruns skip finished points, exports,
foreign files."""
import csv
import json
import sqlite3

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.results.export import HEADLINE_COLUMNS
from vswbench.results.export import export_csv
from vswbench.results.export import export_json
from vswbench.results.export import export_parquet
from vswbench.results.export import headline
from vswbench.results.store import ResultStore

SPEC = parse_spec('[campaign]\nname = "demo"\n[[study]]\nkind = ["search", "latency"]\n'
                  'switch = "bridge"\nsize = [64, 1518]\nfractions = [50, 90]\n')

SEARCH = {"switch": "bridge", "scenario": "p2p", "frame_size": 64, "forwarding_mode": "napi",
          "ndr_pps": 200_000.0, "pdr_pps": 210_000.0, "lower_bound_pps": 199_000.0,
          "upper_bound_pps": 201_000.0, "generator_bound": False,
          "generator_ceiling_pps": 400_000.0, "trial_count": 12, "trial_seconds": 21.0,
          "wall_seconds": 23.5, "trials": [
              {"intended_pps": 150_000.0, "lost": 0, "unsent": 0, "cycles_per_packet": 9000.0},
              {"intended_pps": 199_000.0, "lost": 0, "unsent": 0, "cycles_per_packet": 8000.0},
              {"intended_pps": 201_000.0, "lost": 5, "unsent": 0, "cycles_per_packet": 7000.0}],
          "statistics": {"ndr_pps": {"cv": 0.02}}}
LATENCY = {"ndr_pps": 200_000.0, "points": [
    {"fraction_of_ndr": 0.5, "latency_us": {"p50": 10.0, "p99": 20.0}, "cycles_per_packet": 1.0},
    {"fraction_of_ndr": 0.9, "latency_us": {"p50": 12.0, "p99": 40.0}, "cycles_per_packet": 2.0}]}


@pytest.fixture
def db(tmp_path):
    return tmp_path / "out" / "results.sqlite"


def test_record_reopen_and_skip(db) -> None:
    pts = expand(SPEC)
    with ResultStore(db) as store:
        store.begin_run("vsb0001", SPEC, {"kernel_release": "6.18"})
        store.record_point("vsb0001", pts[0], SEARCH, "done")
        store.record_point("vsb0001", pts[1], None, "failed", "engine died")
        # no end_run: the run was killed
    with ResultStore(db, create=False) as store:
        assert store.finished_keys("demo") == {pts[0].key}
        assert store.finished_keys("other") == set()
        (run,) = store.runs()
        # its writer is gone: a reader shows it as killed, never as running for ever
        assert (run.run_id, run.spec_name, run.status, run.finished) == (
            "vsb0001", "demo", "killed", None)
        assert run.spec_text == SPEC.text and run.fingerprint == {"kernel_release": "6.18"}
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.begin_run("vsb0002", SPEC, None)   # a reader never writes
    with ResultStore(db) as store:
        store.begin_run("vsb0002", SPEC, None)
        todo = [p for p in pts if p.key not in store.finished_keys("demo")]
        assert todo == pts[1:]                  # the failed point is tried again
        for p in todo:
            store.record_point("vsb0002", p, LATENCY if p.kind == "latency" else SEARCH, "done")
        store.end_run("vsb0002", "done")
    with ResultStore(db) as store:
        assert store.finished_keys("demo") == {p.key for p in pts}
        stored = store.points("demo")
        assert len(stored) == 4 and len(store.points()) == 4
        retried = next(s for s in stored if s.key == pts[1].key)
        assert (retried.run_id, retried.status, retried.error) == ("vsb0002", "done", None)
        assert retried.params == pts[1].params() and retried.label == pts[1].label
        assert [r.status for r in store.runs()] == ["killed", "done"]


def test_misuse_is_reported(db) -> None:
    pts = expand(SPEC)
    with ResultStore(db) as store:
        with pytest.raises(VswbenchError, match="begin_run"):
            store.record_point("vsb9999", pts[0], {}, "done")
        store.begin_run("vsb0001", SPEC)
        with pytest.raises(VswbenchError, match="already"):
            store.begin_run("vsb0001", SPEC)
        with pytest.raises(ValueError):
            store.record_point("vsb0001", pts[0], {}, "ok")


def test_headline_fields() -> None:
    with_cycles = headline(_stored("search", SEARCH))
    # MLRsearch's figure is the conditional throughput; RFC 2544's NDR counts every trial
    assert with_cycles["conditional_throughput_pps"] == 200_000.0
    assert with_cycles["ndr_pps"] == 199_000.0 and with_cycles["cycles_per_packet"] == 8000.0
    assert with_cycles["conditional_throughput_gbps"] == pytest.approx(200_000 * 84 * 8 / 1e9)
    assert with_cycles["ndr_cv"] == 0.02 and with_cycles["generator_bound"] is False
    lat = headline(_stored("latency", LATENCY))
    assert (lat["latency_fraction_of_ndr"], lat["latency_p50_us"], lat["latency_p99_us"]) == (
        0.9, 12.0, 40.0)
    sweep = headline(_stored("sweep", {"saturation": {"peak_achieved_pps": 5.0,
                                                      "highest_lossless_offered_pps": 4.0}}))
    assert (sweep["peak_achieved_pps"], sweep["highest_lossless_pps"]) == (5.0, 4.0)
    assert headline(_stored("search", None))["ndr_pps"] is None
    assert set(with_cycles) == set(HEADLINE_COLUMNS)


def _stored(kind, result):
    from vswbench.results.store import StoredPoint

    return StoredPoint("demo", "vsb0001", "k", "label", {"kind": kind, "switch": "bridge",
                                                          "scenario": "p2p", "size": 64}, kind,
                       "done", result, None, None, "now")


def _filled(db) -> ResultStore:
    store = ResultStore(db)
    store.begin_run("vsb0001", SPEC, {"cpu_model": "x"})
    for p in expand(SPEC):
        store.record_point("vsb0001", p, LATENCY if p.kind == "latency" else SEARCH, "done")
    store.end_run("vsb0001", "interrupted")
    return store


def test_export_json_and_csv(db, tmp_path) -> None:
    with _filled(db) as store:
        export_json(store, tmp_path / "r.json")
        export_csv(store, tmp_path / "r.csv")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["runs"][0]["spec_text"] == SPEC.text
    assert data["runs"][0]["fingerprint"] == {"cpu_model": "x"}
    assert len(data["points"]) == 4 and data["points"][0]["result"]["ndr_pps"] == 200_000.0
    assert data["points"][0]["headline"]["cycles_per_packet"] == 8000.0
    with (tmp_path / "r.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == HEADLINE_COLUMNS
    for column in ("switch", "scenario", "size", "kind", "ndr_pps", "pdr_pps", "lower_bound_pps",
                   "upper_bound_pps", "generator_bound", "latency_p50_us", "latency_p99_us",
                   "cycles_per_packet", "trial_seconds"):
        assert column in rows[0]
    search = next(r for r in rows if r["kind"] == "search" and r["size"] == "1518")
    assert (search["switch"], search["conditional_throughput_pps"],
            search["generator_bound"]) == ("bridge", "200000.0", "False")
    latency = next(r for r in rows if r["kind"] == "latency")
    assert latency["latency_p99_us"] == "40.0"
    assert not list(tmp_path.glob("*.tmp"))


def test_export_parquet_or_clear_error(db, tmp_path) -> None:
    with _filled(db) as store:
        try:
            import pyarrow.parquet as pq
        except ImportError:
            with pytest.raises(UsageError, match="pip install pyarrow"):
                export_parquet(store, tmp_path / "r.parquet")
            assert not (tmp_path / "r.parquet").exists()
            return
        export_parquet(store, tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == 4 and "ndr_pps" in table.column_names


def test_not_a_store(tmp_path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database\n" * 100)
    before = text.read_bytes()
    with pytest.raises(UsageError, match="not a vswbench results store"):
        ResultStore(text)
    assert text.read_bytes() == before
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(UsageError, match="not a vswbench results store"):
        ResultStore(other)
    with pytest.raises(UsageError, match="no results store"):
        ResultStore(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    with pytest.raises(UsageError, match="is a directory"):
        ResultStore(tmp_path)


def test_newer_schema_refused(db) -> None:
    ResultStore(db).close()
    con = sqlite3.connect(db)
    con.execute("INSERT INTO vswbench_schema VALUES (99, 'later')")
    con.commit()
    con.close()
    with pytest.raises(UsageError, match="newer vswbench"):
        ResultStore(db)


def test_recorded_point_visible_to_another_connection_at_once(db) -> None:
    """Committed immediately: a second reader (or a crash right after) sees the point."""
    store = ResultStore(db)
    store.begin_run("vsb0001", SPEC)
    p = expand(SPEC)[0]
    store.record_point("vsb0001", p, SEARCH, "done")
    with ResultStore(db, create=False) as reader:
        assert reader.finished_keys("demo") == {p.key}
    store.close()
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_one_writer_at_a_time_names_the_holder(db) -> None:
    with ResultStore(db) as first:
        first.begin_run("vsb0001", SPEC)
        with pytest.raises(VswbenchError, match=r"in use by run vsb0001 \(pid \d+\) since"):
            ResultStore(db)
        with ResultStore(db, create=False) as reader:      # readers are never refused
            assert [r.status for r in reader.runs()] == ["running"]
        first.end_run("vsb0001", "done")
    with ResultStore(db) as again:                         # the lock went with the writer
        assert [r.status for r in again.runs()] == ["done"]
    assert not (db.parent / "results.sqlite.lock").exists()


def test_empty_damaged_and_read_only_stores(tmp_path, db) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(UsageError, match="empty file"):
        ResultStore(empty)
    assert empty.stat().st_size == 0, "an empty file is not re-initialised"
    with ResultStore(db) as store:
        store.begin_run("vsb0001", SPEC)
        for p in expand(SPEC):
            store.record_point("vsb0001", p, SEARCH, "done")
        store.end_run("vsb0001", "done")
    ro_dir = tmp_path / "ro"
    ro_dir.mkdir()
    ro = ro_dir / "results.sqlite"
    ro.write_bytes(db.read_bytes())
    ro.chmod(0o444)
    ro_dir.chmod(0o555)
    try:
        with ResultStore(ro, create=False) as reader:      # read-only file and directory
            assert len(reader.points()) == len(expand(SPEC))
    finally:
        ro_dir.chmod(0o755)
    damaged = tmp_path / "damaged.sqlite"
    data = bytearray(db.read_bytes())
    page = 4096
    for i in range(page, len(data)):                       # overwrite every page but the header
        data[i] = 0xA5
    damaged.write_bytes(bytes(data))
    with (pytest.raises(UsageError, match="damaged|not a vswbench"),
          ResultStore(damaged, create=False) as reader):
        reader.points()
