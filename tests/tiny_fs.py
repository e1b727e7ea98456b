"""A tiny file system for the full-disk tests: a 200 KB tmpfs mounted on a vsb-named directory
in the test's tmp_path, unmounted and removed after the test, pass or fail. Needs root (mount);
skipped otherwise. Not a /tmp/vsb-* directory: the unit tier runs on two workers (-n 2), and the
Hypothesis tests on the other worker check that nothing named /tmp/vsb-* appears meanwhile."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = "200k"


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a tiny tmpfs needs root and mount")
    base = tmp_path / "vsb-tinyfs"
    base.mkdir()
    mnt = base / "fs"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0755", "vsbtinyfs",
                           str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(base)
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        shutil.rmtree(base, ignore_errors=True)
