"""safefile.py: no link followed, no device, FIFO or directory replaced, no half file or half
line, a full disk named as such. Every decoy a test plants is checked untouched afterwards."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.tiny_fs import tiny_fs  # noqa: F401 - a fixture (tests/tiny_fs.py)
from tests.unit.decoys import DECOY_TEXT
from tests.unit.decoys import make_decoy
from vswbench.errors import UsageError
from vswbench.safefile import TEMP_TAG
from vswbench.safefile import WriteFailed
from vswbench.safefile import append_line
from vswbench.safefile import atomic_writer
from vswbench.safefile import check_output_dir
from vswbench.safefile import check_output_file
from vswbench.safefile import make_dir
from vswbench.safefile import open_regular
from vswbench.safefile import repair_lines
from vswbench.safefile import write_bytes
from vswbench.safefile import write_text


@pytest.fixture
def decoy(tmp_path: Path) -> Path:
    """A file that must never change (the target of planted links)."""
    return make_decoy(tmp_path)


def device_copy(path: Path) -> Path:
    """A copy of /dev/null's node (character device 1:3), as an attacker would plant it."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    return path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if TEMP_TAG in p.name)


def writers(path: Path) -> list:
    return [lambda: write_text(path, "x\n"), lambda: write_bytes(path, b"x"),
            lambda: check_output_file(path, "--out"), lambda: open_regular(path, append=True)]


@pytest.mark.parametrize("which", range(4))
def test_a_link_is_refused_and_its_target_untouched(tmp_path, decoy, which) -> None:
    link = tmp_path / "L.json"
    link.symlink_to(decoy)
    with pytest.raises(UsageError, match="symbolic link"):
        writers(link)[which]()
    assert decoy.read_text() == DECOY_TEXT and link.is_symlink()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("which", range(4))
def test_a_dangling_link_is_refused_and_nothing_created(tmp_path, which) -> None:
    target = tmp_path / "elsewhere-new"
    link = tmp_path / "L.json"
    link.symlink_to(target)
    with pytest.raises(UsageError, match="symbolic link"):
        writers(link)[which]()
    assert not target.exists() and link.is_symlink()


@pytest.mark.parametrize("which", range(4))
def test_a_device_node_is_refused_and_stays_a_device(tmp_path, which) -> None:
    node = device_copy(tmp_path / "null")
    with pytest.raises(UsageError, match="character device"):
        writers(node)[which]()
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("which", range(4))
def test_a_fifo_is_refused_at_once_and_stays_a_fifo(tmp_path, which) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="FIFO"):     # no reader: an open would block for ever
        writers(fifo)[which]()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("which", range(4))
def test_a_directory_where_a_file_is_meant_is_refused(tmp_path, which) -> None:
    folder = tmp_path / "report.html"
    folder.mkdir()
    (folder / "keep").write_text("mine")
    with pytest.raises(UsageError, match="directory"):
        writers(folder)[which]()
    assert (folder / "keep").read_text() == "mine"
    assert leftovers(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["report.html"]


def test_a_socket_is_refused(tmp_path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(UsageError, match="socket"):
            write_text(path, "x")
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_replacing_a_regular_file_keeps_its_mode_and_leaves_no_temp(tmp_path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(0o640)
    write_text(path, "new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_a_failure_while_writing_changes_nothing(tmp_path) -> None:
    path = tmp_path / "out.csv"
    path.write_text("old")
    with pytest.raises(UsageError, match="boom"), atomic_writer(path) as f:
        f.write("half")
        raise UsageError("boom")
    assert path.read_text() == "old" and leftovers(tmp_path) == []


def test_a_new_file_is_made_with_the_umask(tmp_path) -> None:
    old = os.umask(0o027)
    try:
        write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_check_output_file_refuses_a_missing_directory_and_a_file_in_the_path(tmp_path) -> None:
    with pytest.raises(UsageError, match="does not exist"):      # issue 47: named, not made
        check_output_file(tmp_path / "a" / "b" / "out.json", "--out")
    assert not (tmp_path / "a").exists()
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        check_output_file(tmp_path / "f" / "out.json", "--out")
    with pytest.raises(UsageError, match="file name"):
        check_output_file(Path(""), "--to")


def test_a_place_where_no_file_can_be_made_is_refused_up_front() -> None:
    with pytest.raises(UsageError, match="cannot write there"):
        check_output_file(Path("/proc/version"), "--out")     # a regular file in /proc
    with pytest.raises(UsageError, match="cannot write there"):
        check_output_dir(Path("/proc/sys"), "--out")


def test_make_dir_refuses_a_link_to_a_directory(tmp_path, decoy) -> None:
    (tmp_path / "plots").symlink_to(decoy.parent)
    with pytest.raises(UsageError, match="symbolic link"):
        make_dir(tmp_path / "plots")
    assert make_dir(tmp_path / "new").is_dir()
    assert os.listdir(decoy.parent) == ["passwd"]


def test_append_line_writes_whole_lines_and_repair_cuts_a_partial_one(tmp_path) -> None:
    path = tmp_path / "results.jsonl"
    fd = open_regular(path, append=True)
    try:
        append_line(fd, path, json.dumps({"a": 1}))
        append_line(fd, path, json.dumps({"b": 2}))
    finally:
        os.close(fd)
    with path.open("a") as f:
        f.write('{"c": 3, "half')         # what a crash or a full disk used to leave
    assert repair_lines(path) is True
    assert [json.loads(x) for x in path.read_text().splitlines()] == [{"a": 1}, {"b": 2}]
    assert repair_lines(path) is False and repair_lines(tmp_path / "none") is False


def test_a_full_disk_is_named_and_leaves_whole_lines_only(tiny_fs) -> None:  # noqa: F811
    path = tiny_fs / "results.jsonl"
    fd = open_regular(path, append=True)
    line = json.dumps({"point": "x" * 3000})
    written = 0
    try:
        with pytest.raises(WriteFailed, match=r"disk full: cannot write .*results.jsonl"):
            for _ in range(1000):
                append_line(fd, path, line)
                written += 1
    finally:
        os.close(fd)
    text = path.read_text()
    assert written > 0 and text.endswith("\n")
    assert len(text.splitlines()) == written
    assert all(json.loads(x) for x in text.splitlines())


def test_a_full_disk_during_a_whole_file_keeps_the_old_file(tiny_fs) -> None:  # noqa: F811
    path = tiny_fs / "report.html"
    path.write_text("old")
    with pytest.raises(WriteFailed, match="disk full"):
        write_bytes(path, b"x" * 1_000_000)
    assert path.read_text() == "old" and leftovers(tiny_fs) == []


def test_a_read_only_directory_is_refused_up_front(tiny_fs) -> None:  # noqa: F811
    import subprocess

    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    with pytest.raises(UsageError, match="cannot write there"):
        check_output_dir(tiny_fs, "--results-dir")
    with pytest.raises(UsageError, match="cannot write there"):
        check_output_file(tiny_fs / "x.json", "--out")
