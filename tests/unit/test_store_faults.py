"""A full disk loses nothing (issue 30, item 4): the store keeps every finished point and says
"disk full", results.jsonl never holds a partial line and a resume writes it whole again from
the store; a store holds one campaign and one spec unless told (--append)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.tiny_fs import tiny_fs  # noqa: F401 - a fixture (tests/tiny_fs.py)
from vswbench.campaign.identity import check_campaign
from vswbench.campaign.identity import spec_difference
from vswbench.campaign.runner import JSONL_NAME
from vswbench.campaign.runner import CampaignRunner
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.results.store import ResultStore
from vswbench.safefile import WriteFailed

TEXT = ('[campaign]\nname = "demo"\n\n[[study]]\nkind = "trial"\nswitch = "veth"\n'
        'rate = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 11000, 12000]\n'
        'duration = 1\n')
SPEC = parse_spec(TEXT)
BIG = {"note": "x" * 6000}          # a result of some size: the disk fills within a few points


def fill(directory: Path, leave: int) -> Path:
    """A ballast file taking all but `leave` bytes of the file system."""
    ballast = directory / "ballast"
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    with ballast.open("wb") as f:
        f.write(b"\0" * max(0, free - leave))
    return ballast


def jsonl_records(out: Path) -> list[dict]:
    text = (out / JSONL_NAME).read_text()
    assert text == "" or text.endswith("\n"), "a partial last line"
    return [json.loads(line) for line in text.splitlines()]


def test_a_full_disk_keeps_the_finished_points_and_whole_lines(tiny_fs) -> None:  # noqa: F811
    out = tiny_fs / "run"
    runner = CampaignRunner(SPEC, out)
    points = expand(SPEC)
    runner.out_dir.mkdir()
    recorded = []
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        store.begin_run("vsb0001", SPEC, None)
        ballast = fill(tiny_fs, 40_000)
        with pytest.raises(WriteFailed, match=r"disk full: cannot write .*run/results"):
            for p in points:
                runner._record(store, "vsb0001", p, BIG, "done", None, None)
                recorded.append(p.key)
    assert 0 < len(recorded) < len(points)
    assert {r["point_key"] for r in jsonl_records(out)} <= {p.key for p in points}
    with ResultStore(out / "results.sqlite", create=False) as store:
        kept = store.finished_keys("demo")
        assert set(recorded) <= kept                  # every point that finished is there
        assert store.runs()[0].status == "killed"     # not "running" for ever: resumable
    ballast.unlink()                                  # the user frees space
    subprocess.run(["mount", "-o", "remount,size=2m", str(tiny_fs)], check=True)
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        # the resume: the JSON lines hold every stored point again, each line whole
        assert {r["point_key"] for r in jsonl_records(out)} == kept
        store.begin_run("vsb0002", SPEC, None)
        todo = [p for p in points if p.key not in kept]
        for p in todo:
            runner._record(store, "vsb0002", p, {"note": "small"}, "done", None, None)
        store.end_run("vsb0002", "done")
        assert store.finished_keys("demo") == {p.key for p in points}
    assert len(jsonl_records(out)) == len(points)


def test_a_resume_cuts_a_partial_line_and_rewrites_what_is_missing(tmp_path) -> None:
    out = tmp_path / "run"
    runner = CampaignRunner(SPEC, out)
    points = expand(SPEC)
    out.mkdir()
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        store.begin_run("vsb0001", SPEC, None)
        for p in points[:3]:
            runner._record(store, "vsb0001", p, {"n": 1}, "done", None, None)
    lines = (out / JSONL_NAME).read_text().splitlines(keepends=True)
    (out / JSONL_NAME).write_text(lines[0] + lines[1][:17])   # a point lost, half a line
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        pass
    assert [r["point_key"] for r in jsonl_records(out)] == [p.key for p in points[:3]]
    repaired = (out / JSONL_NAME).read_text()
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        pass                                  # complete now: left as it is
    assert (out / JSONL_NAME).read_text() == repaired


def test_results_jsonl_that_is_a_link_or_a_directory_is_refused(tmp_path) -> None:
    decoy = tmp_path / "decoy"
    decoy.write_text("mine\n")
    for make in (lambda p: p.symlink_to(decoy), lambda p: p.mkdir()):
        out = tmp_path / f"run{make.__hash__()}"
        out.mkdir()
        make(out / JSONL_NAME)
        runner = CampaignRunner(SPEC, out)
        with (pytest.raises(UsageError, match="not a regular file"),
              ResultStore(out / "results.sqlite") as store, runner._jsonl(store)):
            pass
    assert decoy.read_text() == "mine\n"


# -- one campaign, one spec per store -----------------------------------------------------------
def store_with(tmp_path: Path, text: str) -> ResultStore:
    store = ResultStore(tmp_path / "results.sqlite")
    store.begin_run("vsb0001", parse_spec(text), None)
    store.end_run("vsb0001", "done")
    return store


def test_the_same_spec_resumes_and_comments_do_not_count(tmp_path) -> None:
    with store_with(tmp_path, TEXT) as store:
        check_campaign(store, "demo", TEXT)
        check_campaign(store, "demo", "# a comment\n" + TEXT.replace(" = ", "="))


def test_another_campaign_is_refused_unless_appended(tmp_path) -> None:
    with store_with(tmp_path, TEXT) as store:
        with pytest.raises(UsageError, match=r"holds campaign demo, not other: .*--append"):
            check_campaign(store, "other", TEXT.replace("demo", "other"))
        check_campaign(store, "other", TEXT.replace("demo", "other"), append=True)


def test_a_changed_spec_is_refused_naming_the_difference(tmp_path) -> None:
    changed = TEXT.replace("duration = 1", "duration = 2")
    with store_with(tmp_path, TEXT) as store:
        with pytest.raises(UsageError, match=r"changed since run vsb0001 .*study 1: duration 1 "
                                             r"is now 2.*--append"):
            check_campaign(store, "demo", changed)
        check_campaign(store, "demo", changed, append=True)


def test_spec_difference_in_words() -> None:
    assert spec_difference(TEXT, TEXT) is None
    assert spec_difference(TEXT, TEXT + 'size = [64]\n') == "study 1: size was added ([64])"
    assert spec_difference(TEXT, TEXT.replace('duration = 1\n', '')) == \
        "study 1: duration was removed (it was 1)"
    two = TEXT + '\n[[study]]\nkind = "trial"\nswitch = "bridge"\n'
    assert spec_difference(TEXT, two) == "[[study]]: 1 table, now 2"
