"""`vswbench merge`: the stores of two hosts as one, each point keeping its host and fingerprint;
the report's ranking keeps the hosts apart. Stores are the report's fixtures (FIXTURES, NOT
MEASUREMENTS), the second one's run renamed as another host's run would be."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.report_fixtures import write_fixture_store
from vswbench.cli.app import cli
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.results.merge import merge
from vswbench.results.points import load
from vswbench.results.store import ResultStore


def host_store(tmp: Path, name: str, run_id: str, hostname: str) -> Path:
    d = tmp / name
    d.mkdir()
    path = write_fixture_store(d / "results.sqlite", "quick")
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys=OFF")
    old = db.execute("SELECT run_id FROM runs").fetchone()[0]
    db.execute("UPDATE runs SET run_id = ?, fingerprint = json_set(fingerprint, '$.hostname', ?)",
               (run_id, hostname))
    db.execute("UPDATE points SET run_id = ? WHERE run_id = ?", (run_id, old))
    db.commit()
    db.close()
    return d


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    return (host_store(tmp_path, "d1", "vsb0d01", "lab-d1"),
            host_store(tmp_path, "d2", "vsb0d02", "lab-d2"))


def test_merge_keeps_hosts_and_fingerprints(two, tmp_path):
    a, b = two
    summary = merge([a, b], tmp_path / "all")
    assert summary.hosts == ("lab-d1", "lab-d2")
    with ResultStore(summary.out, create=False) as s:
        runs, points = s.runs(), s.points()
        with ResultStore(a / "results.sqlite", create=False) as src:
            n = len(src.points())
    assert {r.run_id: r.fingerprint["host"] for r in runs} == {"vsb0d01": "lab-d1",
                                                                "vsb0d02": "lab-d2"}
    assert all(r.fingerprint["hostname"] == r.fingerprint["host"] for r in runs)
    assert len(points) == 2 * n == summary.points
    for p in points:
        assert p.params["host"] == {"vsb0d01": "lab-d1", "vsb0d02": "lab-d2"}[p.run_id]
        assert p.key.endswith("@" + p.params["host"])
    rows = load(summary.out).records()
    assert {r.setup.variant.split()[-1] for r in rows} == {"host=lab-d1", "host=lab-d2"}


def test_merge_given_host_names_and_refusals(two, tmp_path):
    a, b = two
    summary = merge([a, b], tmp_path / "named", ["dut1", "dut2"])
    assert summary.hosts == ("dut1", "dut2")
    with pytest.raises(UsageError, match="exists"):
        merge([a, b], tmp_path / "named")
    with pytest.raises(UsageError, match="given twice"):
        merge([a, a], tmp_path / "twice")
    c = host_store(tmp_path, "d3", "vsb0d03", "lab-d1")    # the same hostname as d1
    with pytest.raises(UsageError, match="--host"):
        merge([a, c], tmp_path / "clash")
    assert not (tmp_path / "clash" / "results.sqlite").exists()
    with pytest.raises(UsageError, match="one per store"):
        merge([a, b], tmp_path / "n", ["x"])
    with pytest.raises(UsageError, match="host name"):
        merge([a, b], tmp_path / "n", ["x y", "z"])
    # merged again (with a third host): the hosts it named stay
    again = merge([summary.out.parent, c], tmp_path / "again", ["ignored", "dut3"])
    assert again.hosts == ("dut1", "dut2", "dut3")


def test_merge_command_and_report_by_host(two, tmp_path, capsys):
    a, b = two
    r = CliRunner().invoke(cli, ["merge", str(a), str(b), "-o", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "2 hosts (lab-d1, lab-d2)" in r.output
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "m"), "--print", "text"])
    assert r.exit_code == 0, r.output
    assert "host=lab-d1" in r.output and "host=lab-d2" in r.output
    assert main(["merge", str(a), "-o", str(tmp_path / "m")]) == 2
    assert "exists" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "m")
