"""Headless Chromium for the page tests (the report, the trend page): finding it, and one run of
it. Needs the Debian package `chromium` (setup.sh installs it); a test is skipped with that fix
when it is absent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TIMEOUT_S = 120


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed: apt-get install chromium "
                "(./setup.sh installs it)")


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless run with a profile of its own; asserts it exited 0."""
    argv = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"{' '.join(argv)} failed: {proc.stderr[-2000:]}"
    return proc
