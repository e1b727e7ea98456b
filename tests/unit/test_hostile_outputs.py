"""Issue 47, findings 2-4: what vswbench writes. A missing parent of --out, --to or a results
directory is named and never created (on 4df8ce3 `--out /nonexistent/dir/x.json` made
/nonexistent/dir/ in /); a store, lock, results.jsonl, report or plot with a second hard link,
another owner or group/other write is refused on resume and append (on 4df8ce3 a resume
truncated a hard-linked victim to 0 bytes); directories are made 0755 and files 0644 whatever
the umask (on 4df8ce3 umask 000 gave 0777 and 0666). The decoy test plants a tree outside the
results and checks its files' checksums and modes, and that nothing new appears in it."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.campaign.runner import JSONL_NAME
from vswbench.campaign.runner import CampaignRunner
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.cli.common import writable_file
from vswbench.errors import UsageError
from vswbench.results.store import ResultStore
from vswbench.safefile import check_output_dir
from vswbench.safefile import open_regular
from vswbench.safefile import write_text

TEXT = ('[campaign]\nname = "tiny"\n\n[[study]]\nkind = "trial"\nswitch = "veth"\n'
        'rate = [1000, 2000, 3000]\nduration = 1\n')
SPEC = parse_spec(TEXT)


def tiny_campaign(out: Path, points: int = 3, run_id: str = "vsb0001") -> None:
    """What a campaign writes, without measuring: the results directory made as `run --out`
    makes it, the store, the lock and results.jsonl, `points` points recorded (a resume when
    the directory holds them already)."""
    runner = CampaignRunner(SPEC, out)
    check_output_dir(out, "--out")
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        store.begin_run(run_id, SPEC, None)
        for p in expand(SPEC)[:points]:
            runner._record(store, run_id, p, {"n": 1}, "done", None, None)
        store.end_run(run_id, "done")


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Every entry under root: its mode and (files) the SHA-256 of its bytes."""
    seen: dict[str, tuple[int, str]] = {os.fspath(root): (os.lstat(root).st_mode, "")}
    for path in sorted(root.rglob("*")):
        st = os.lstat(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
        seen[os.fspath(path)] = (st.st_mode, digest)
    return seen


@pytest.fixture
def decoys(tmp_path: Path) -> Iterator[Path]:
    """A decoy tree beside the results (passwd, a private key, a world-readable log, a
    subdirectory): it must come out exactly as it went in."""
    tree = tmp_path / "decoy"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc" / "passwd").write_text("root:x:0:0:decoy\n")
    (tree / "etc" / "key").write_text("PRIVATE\n")
    os.chmod(tree / "etc" / "key", 0o600)
    (tree / "log").write_text("line\n" * 100)
    before = snapshot(tree)
    yield tree
    assert snapshot(tree) == before, "the decoy tree changed"


# -- 2. no missing parent created ------------------------------------------------------------
def test_a_file_output_in_a_missing_directory_is_named_and_not_made(tmp_path: Path) -> None:
    target = tmp_path / "nonexistent" / "dir" / "x.json"
    with pytest.raises(UsageError, match=f"its directory {tmp_path / 'nonexistent' / 'dir'} "
                                         "does not exist"):
        writable_file(target)                     # sweep/search/trial --out, before measuring
    assert not (tmp_path / "nonexistent").exists()


def test_export_to_a_missing_directory_exits_2_naming_it(tmp_path: Path, capsys) -> None:
    res = tmp_path / "res"
    res.mkdir()
    write_fixture_store(res / "results.sqlite", "quick")
    assert cli.main(["export", str(res), "--to", str(tmp_path / "nodir" / "x.csv")]) == 2
    assert f"{tmp_path / 'nodir'} does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nodir").exists()


def test_run_out_makes_one_level_under_an_existing_parent(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=f"its parent {tmp_path / 'a'} does not exist"):
        check_output_dir(tmp_path / "a" / "b", "--out", create=False)   # run, before all
    with pytest.raises(UsageError, match="does not exist"):
        check_output_dir(tmp_path / "a" / "b", "--out")
    assert not (tmp_path / "a").exists()
    assert check_output_dir(tmp_path / "a", "--out").is_dir()           # one level: made


def test_the_default_results_tree_is_made_whole(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """./results/papers/NAME (a default) is made with its parents; nothing else is."""
    monkeypatch.chdir(tmp_path)
    assert check_output_dir(Path("results/papers/x"), "--out", create=False)
    assert not (tmp_path / "results").exists()            # checked, nothing made yet
    check_output_dir(Path("results/papers/x"), "--out")
    assert stat.S_IMODE((tmp_path / "results" / "papers").stat().st_mode) == 0o755 & ~_umask()
    with pytest.raises(UsageError, match="does not exist"):
        check_output_dir(Path("elsewhere/x"), "--out")


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


# -- 3. results files trusted only when they are what this user made -------------------------
@pytest.mark.parametrize("name", [JSONL_NAME, "results.sqlite.lock", "results.sqlite"])
def test_a_hard_link_in_a_results_directory_is_refused_on_resume(name: str, tmp_path: Path,
                                                                decoys: Path) -> None:
    out = tmp_path / "run"
    tiny_campaign(out)
    victim = decoys / "etc" / "passwd"
    (out / name).unlink(missing_ok=True)
    os.link(victim, out / name)
    with pytest.raises(UsageError, match="hard links"):
        tiny_campaign(out)                        # the resume
    assert victim.read_text() == "root:x:0:0:decoy\n"


def test_a_hard_linked_report_or_plot_is_refused(tmp_path: Path, decoys: Path, capsys) -> None:
    res = tmp_path / "res"
    res.mkdir()
    write_fixture_store(res / "results.sqlite", "quick")
    os.link(decoys / "log", res / "report.html")
    assert cli.main(["report", str(res)]) == 2
    assert "hard links" in capsys.readouterr().err


@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_a_group_or_world_writable_results_file_is_refused(mode: int, tmp_path: Path) -> None:
    out = tmp_path / "run"
    tiny_campaign(out)
    os.chmod(out / JSONL_NAME, mode)
    with pytest.raises(UsageError, match="writable by group or others.*chmod go-w"):
        tiny_campaign(out)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_results_file_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tiny_campaign(out)
    os.chown(out / JSONL_NAME, 65534, 65534)
    with pytest.raises(UsageError, match="owned by user 65534"):
        tiny_campaign(out)


def test_append_refuses_a_hard_link_that_appeared(tmp_path: Path, decoys: Path) -> None:
    os.link(decoys / "log", tmp_path / "x.jsonl")
    with pytest.raises(UsageError, match="2 hard links"):
        open_regular(tmp_path / "x.jsonl", append=True)


# -- 4. modes that do not follow the umask ---------------------------------------------------
def test_under_umask_000_nothing_is_group_or_world_writable(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        out = tmp_path / "run"
        tiny_campaign(out)                        # the results directory, store, lock, jsonl
        tiny_campaign(out, run_id="vsb0002")      # and its resume
        write_text(out / "export.json", "{}")
        res = tmp_path / "res"                    # a report with its plots/
        check_output_dir(res, "--out")
        write_fixture_store(res / "results.sqlite", "quick")
        assert cli.main(["report", str(res)]) == 0
    finally:
        os.umask(old)
    made = [p for d in (out, res) for p in (d, *d.rglob("*"))]
    assert (res / "plots").is_dir() and (out / JSONL_NAME).exists()
    loose = [f"{p} {stat.S_IMODE(p.stat().st_mode):o}" for p in made
             if p.stat().st_mode & 0o022]
    assert not loose, loose
    assert {stat.S_IMODE(p.stat().st_mode) for p in made if p.is_dir()} == {0o755}
    assert {stat.S_IMODE(p.stat().st_mode) for p in made if p.is_file()} <= {0o644, 0o600}


# -- the probe's commands, against a decoy tree --------------------------------------------
def test_the_probes_commands_leave_a_decoy_tree_unchanged(tmp_path: Path, decoys: Path,
                                                        capsys) -> None:
    res = tmp_path / "res"
    res.mkdir()
    write_fixture_store(res / "results.sqlite", "quick")
    # outputs into the decoy tree's missing directories: refused, nothing made there
    assert cli.main(["export", str(res), "--to", str(decoys / "nodir" / "x.csv")]) == 2
    with pytest.raises(UsageError):
        writable_file(decoys / "etc" / "new" / "x.json")
    with pytest.raises(UsageError):
        check_output_dir(decoys / "a" / "b", "--out", create=False)
    # a resume through hard links and symbolic links to the decoys
    out = tmp_path / "run"
    tiny_campaign(out)
    for name, target in ((JSONL_NAME, "passwd"), ("results.sqlite.lock", "key")):
        (out / name).unlink(missing_ok=True)
        os.link(decoys / "etc" / target, out / name)
        with pytest.raises(UsageError):
            tiny_campaign(out)
        (out / name).unlink()
        (out / name).symlink_to(decoys / "etc" / target)
        with pytest.raises(UsageError):
            tiny_campaign(out)
        (out / name).unlink()
    # a report whose report.html is the decoy log
    os.link(decoys / "log", res / "report.html")
    assert cli.main(["report", str(res)]) == 2
    capsys.readouterr()


@pytest.mark.parametrize("where", ["report.html", "plots/cycles.svg"])
def test_a_group_writable_report_or_plot_is_refused_before_drawing(where: str,
                                                                   tmp_path: Path) -> None:
    res = tmp_path / "res"
    res.mkdir()
    write_fixture_store(res / "results.sqlite", "quick")
    (res / "plots").mkdir()
    (res / where).write_text("planted")
    os.chmod(res / where, 0o666)
    from vswbench.report.build import check_outputs

    with pytest.raises(UsageError, match="writable by group or others"):
        check_outputs(res)
    assert (res / where).read_text() == "planted"
