"""A tiny file system for the full-disk tests: a 200 KB tmpfs mounted on a directory under a
vsb-named temp dir, unmounted and removed after the test, pass or fail. Needs root (mount);
skipped otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = "200k"


@pytest.fixture
def tiny_fs() -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a tiny tmpfs needs root and mount")
    base = Path(tempfile.mkdtemp(prefix="vsb-tinyfs-"))
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
