"""Every output of the commands goes through safefile.py (issue 30, S1-S3 and "checked too
late"): `export --to`, `report`, a method's `--out`, the store, its lock, results.jsonl, the
calibration cache. A link, a device node, a FIFO or a directory at an output is refused with
exit 2 and left as it was; nothing is measured first (the method commands fail before
planning: these tests run as any user, the checks come before the root check)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from tests.unit.decoys import DECOY_TEXT
from tests.unit.decoys import make_decoy
from vswbench.cli import app as cli
from vswbench.errors import UsageError
from vswbench.results.store import ResultStore

TEMP_TAG = ".vsb-tmp-"                 # safefile.TEMP_TAG (kept here: the test runs on old code too)



@pytest.fixture
def store_dir(tmp_path) -> Path:
    base = tmp_path / "run"
    base.mkdir()
    write_fixture_store(base / "results.sqlite", variant="quick")
    return base


@pytest.fixture
def decoy(tmp_path) -> Path:
    return make_decoy(tmp_path)


def node(path: Path) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))     # a copy of /dev/full
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    return path


def no_temp(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if TEMP_TAG in p.name or p.suffix == ".tmp"]


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl", "parquet", "hdr"])
def test_export_to_a_link_is_refused(store_dir, decoy, fmt, capsys) -> None:
    link = store_dir / f"out.{fmt}"
    link.symlink_to(decoy)
    assert cli.main(["export", str(store_dir), "--format", fmt, "--to", str(link)]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and len(err.strip().splitlines()) == 1
    assert decoy.read_text() == DECOY_TEXT and link.is_symlink() and no_temp(store_dir)


def test_export_to_a_device_node_or_a_fifo_is_refused_and_left_alone(store_dir, capsys) -> None:
    full = node(store_dir / "full")
    assert cli.main(["export", str(store_dir), "--to", str(full)]) == 2
    assert "character device" in capsys.readouterr().err
    st = os.lstat(full)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 7)
    fifo = store_dir / "fifo"
    os.mkfifo(fifo)
    assert cli.main(["export", str(store_dir), "--format", "json", "--to", str(fifo)]) == 2
    assert "FIFO" in capsys.readouterr().err and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert no_temp(store_dir)


def test_export_to_nothing_is_usage_error(store_dir, capsys) -> None:
    assert cli.main(["export", str(store_dir), "--to", ""]) == 2
    assert "--to is empty: give a file" in capsys.readouterr().err


def test_report_over_a_directory_or_a_link_is_refused_and_leaves_nothing(store_dir, decoy,
                                                                         capsys) -> None:
    (store_dir / "report.html").mkdir()
    assert cli.main(["report", str(store_dir)]) == 2
    assert "report.html is a directory" in capsys.readouterr().err
    assert no_temp(store_dir) and not (store_dir / "plots").exists()
    (store_dir / "report.html").rmdir()
    (store_dir / "report.html").symlink_to(decoy)
    assert cli.main(["report", str(store_dir)]) == 2
    assert decoy.read_text() == DECOY_TEXT
    (store_dir / "report.html").unlink()
    (store_dir / "plots").symlink_to(decoy.parent)        # plots/ inside the decoy's directory
    assert cli.main(["report", str(store_dir)]) == 2
    assert sorted(os.listdir(decoy.parent)) == ["passwd"]
    (store_dir / "plots").unlink()
    assert cli.main(["report", str(store_dir)]) == 0       # and a clean directory still works
    assert (store_dir / "report.html").is_file() and no_temp(store_dir)


METHOD = ["--switch", "veth", "--points", "2", "--duration", "1", "--warmup", "0",
          "--max-load", "10k", "--min-load", "1k", "--no-calibration"]


@pytest.mark.parametrize("kind", ["link", "dangling", "device", "fifo", "directory", "proc"])
def test_sweep_out_is_refused_before_anything_runs(tmp_path, decoy, kind, capsys,
                                                   monkeypatch) -> None:
    planned = []
    monkeypatch.setattr("vswbench.cli.common.plan_method", lambda *a: planned.append(a))
    out = tmp_path / "L.json"
    if kind == "link":
        out.symlink_to(decoy)
    elif kind == "dangling":
        out.symlink_to(tmp_path / "made-by-nobody")
    elif kind == "device":
        node(out)
    elif kind == "fifo":
        os.mkfifo(out)
    elif kind == "directory":
        out.mkdir()
    else:
        out = Path("/proc/version")
    assert cli.main(["sweep", *METHOD, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    if kind == "directory":                   # click's own check of --out (dir_okay=False)
        assert "is a directory" in err
    else:
        assert err.startswith("vswbench: error: --out") and len(err.strip().splitlines()) == 1
    assert planned == []                                  # refused before the plan
    assert decoy.read_text() == DECOY_TEXT and not (tmp_path / "made-by-nobody").exists()
    if kind == "device":
        assert stat.S_ISCHR(os.lstat(out).st_mode)


# -- the store's files ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["results.sqlite.lock", "results.sqlite", "results.sqlite-wal",
                                  "results.sqlite-journal", "results.sqlite-shm"])
def test_a_link_among_the_stores_files_is_refused(tmp_path, decoy, name) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(decoy)
    with pytest.raises(UsageError, match="symbolic link"):
        ResultStore(out / "results.sqlite")
    assert decoy.read_text() == DECOY_TEXT


def test_a_dangling_store_link_is_refused_and_its_target_not_created(tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "created-by-sqlite"
    (out / "results.sqlite").symlink_to(target)
    with pytest.raises(UsageError, match="symbolic link"):
        ResultStore(out / "results.sqlite")
    assert not target.exists()
    assert not (out / "results.sqlite.lock").exists()


def test_a_readers_store_link_is_refused_too(store_dir, decoy, capsys) -> None:
    (store_dir / "results.sqlite-shm").symlink_to(decoy)
    assert cli.main(["export", str(store_dir), "--to", str(store_dir / "x.csv")]) == 2
    assert decoy.read_text() == DECOY_TEXT


def test_the_calibration_cache_never_follows_a_link(tmp_path, decoy) -> None:
    from vswbench.measure.calibration import Calibration
    from vswbench.measure.calibration import _load_cache
    from vswbench.measure.calibration import _store

    link = tmp_path / "generator-ceiling.json"
    link.symlink_to(decoy)
    assert _load_cache(link) == {}
    _store(link, Calibration("k", 1e6, 1e6, 3, 1.0, 0.0, "p2p", 64, "afpacket", 1))
    assert decoy.read_text() == DECOY_TEXT and link.is_symlink()
    fresh = tmp_path / "cache.json"
    _store(fresh, Calibration("k", 1e6, 1e6, 3, 1.0, 0.0, "p2p", 64, "afpacket", 1))
    assert _load_cache(fresh)["k"]["ceiling_pps"] == 1e6
