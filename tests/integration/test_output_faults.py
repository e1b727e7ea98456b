"""`vswbench run` and `demo` against hostile outputs (issue 30): a full disk is "disk full",
exit 1, every finished point kept, results.jsonl whole lines only, and the same command
resumes; another campaign or a changed spec is refused before anything is measured; a
results.jsonl that is a directory or a link, a read-only results directory: refused first."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiny_fs import tiny_fs  # noqa: F401 - a fixture (tests/tiny_fs.py)
from vswbench.campaign.spec import parse_spec
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "vsbtest-disk"

[[study]]
kind = "trial"
switch = "veth"
scenario = "p2p"
rate = ["1k", "2k", "3k", "4k", "5k"]
duration = 0.5
"""


def vswbench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vswbench", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"})


def error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.startswith("vswbench: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def jsonl(out: Path) -> list[dict]:
    text = (out / "results.jsonl").read_text()
    assert text.endswith("\n"), "a partial last line in results.jsonl"
    return [json.loads(x) for x in text.splitlines()]


def stored(out: Path) -> tuple[set[str], list[str]]:
    with ResultStore(out / "results.sqlite", create=False) as store:
        return ({p.key for p in store.points() if p.status == "done"},
                [r.status for r in store.runs()])


@pytest.mark.timeout(400)
def test_a_full_disk_is_exit_1_loses_nothing_and_resumes(root, engine, tmp_path,
                                                         tiny_fs) -> None:  # noqa: F811
    spec = tmp_path / "disk.toml"
    spec.write_text(SPEC)
    out = tiny_fs / "run"
    first = vswbench("run", str(spec), "--out", str(out), "--no-report")
    assert first.returncode == 1, first.stderr
    assert error_line(first.stderr).startswith(
        f"vswbench: error: disk full: cannot write {out}/results.sqlite")
    assert "testbed:" not in first.stderr
    done, statuses = stored(out)
    assert 0 < len(done) < 5 and statuses in (["failed"], ["killed"])   # never "running"
    assert {r["point_key"] for r in jsonl(out) if r["status"] == "done"} <= done
    subprocess.run(["mount", "-o", "remount,size=4m", str(tiny_fs)], check=True)   # space freed
    second = vswbench("run", str(spec), "--out", str(out), "--no-report")
    assert second.returncode == 0, second.stderr
    all_done, statuses = stored(out)
    assert len(all_done) == 5 and done <= all_done and statuses[1:] == ["done"]
    assert {r["point_key"] for r in jsonl(out) if r["status"] == "done"} == all_done


def seeded_store(out: Path, text: str) -> None:
    with ResultStore(out / "results.sqlite") as store:
        store.begin_run("vsb0001", parse_spec(text), None)
        store.end_run("vsb0001", "done")


@pytest.mark.parametrize("change, words", [
    (lambda t: t.replace("vsbtest-disk", "vsbtest-other"),
     "holds campaign vsbtest-disk, not vsbtest-other"),
    (lambda t: t.replace("duration = 0.5", "duration = 1"),
     "changed since run vsb0001"),
])
def test_another_campaign_or_a_changed_spec_is_refused_before_measuring(root, tmp_path, change,
                                                                        words) -> None:
    out = tmp_path / "out"
    seeded_store(out, SPEC)
    spec = tmp_path / "other.toml"
    spec.write_text(change(SPEC))
    done = vswbench("run", str(spec), "--out", str(out), "--no-report", timeout=30)
    assert done.returncode == 2 and words in error_line(done.stderr) and "--append" in done.stderr
    assert stored(out)[1] == ["done"]             # no run began: nothing was measured


@pytest.mark.timeout(120)
def test_append_adds_another_campaign(root, engine, tmp_path) -> None:
    out = tmp_path / "out"
    seeded_store(out, SPEC)
    spec = tmp_path / "one.toml"
    spec.write_text(SPEC.replace("vsbtest-disk", "vsbtest-one").replace(
        '["1k", "2k", "3k", "4k", "5k"]', '["1k"]'))
    done = vswbench("run", str(spec), "--out", str(out), "--no-report", "--append")
    assert done.returncode == 0, done.stderr
    with ResultStore(out / "results.sqlite", create=False) as store:
        assert [r.spec_name for r in store.runs()] == ["vsbtest-disk", "vsbtest-one"]


@pytest.mark.parametrize("plant", ["directory", "link"])
def test_a_results_jsonl_that_is_no_file_is_refused_before_measuring(root, tmp_path,
                                                                     plant) -> None:
    out = tmp_path / "out"
    out.mkdir()
    decoy = tmp_path / "decoy.txt"
    decoy.write_text("mine\n")
    if plant == "directory":
        (out / "results.jsonl").mkdir()
    else:
        (out / "results.jsonl").symlink_to(decoy)
    spec = tmp_path / "disk.toml"
    spec.write_text(SPEC)
    done = vswbench("run", str(spec), "--out", str(out), "--no-report", timeout=30)
    assert done.returncode == 2 and "results.jsonl is a" in error_line(done.stderr)
    assert not (out / "results.sqlite").exists() and decoy.read_text() == "mine\n"


def test_a_report_html_that_is_a_directory_is_refused_before_measuring(root, tmp_path) -> None:
    out = tmp_path / "out"
    (out / "report.html").mkdir(parents=True)
    spec = tmp_path / "disk.toml"
    spec.write_text(SPEC)
    done = vswbench("run", str(spec), "--out", str(out), timeout=30)
    assert done.returncode == 2 and "report.html is a directory" in error_line(done.stderr)
    assert not (out / "results.sqlite").exists()


def test_demo_into_a_read_only_directory_is_refused_before_measuring(root, tiny_fs) -> None:  # noqa: F811
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    done = vswbench("demo", "--duration", "1", "--results-dir", str(tiny_fs), timeout=30)
    assert done.returncode == 2 and "cannot write there" in error_line(done.stderr)
    assert "Read-only" in done.stderr and "backend" not in done.stdout   # nothing measured
