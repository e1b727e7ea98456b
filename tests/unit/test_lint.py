"""The linter and the type checker, run for real on the tree: zero findings (configuration in
pyproject.toml, [tool.ruff] and [tool.mypy]; setup.sh installs both with the test extras).

By hand, from the repository root:
    .venv/bin/ruff check .
    .venv/bin/mypy
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(module: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.fail(f"{module} is not installed: run ./setup.sh (it is a test dependency, "
                    "pyproject.toml [project.optional-dependencies] test)")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=240)


def test_ruff_finds_nothing():
    done = _tool("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing():
    done = _tool("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout, done.stdout


def test_the_tools_report_a_finding(tmp_path: Path):
    """The two checks above can fail: with the project's configuration each tool reports a
    planted finding (an unused import; a str where an int is declared, an unannotated function
    under strict)."""
    done = _tool("ruff", "check", "--no-cache", "--stdin-filename", "src/vswbench/probe.py", "-",
                 stdin="import os\n")
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + done.stderr
    probe = tmp_path / "probe.py"
    probe.write_text("def f(x):\n    return x\n\n\ny: int = 'a'\n")
    done = _tool("mypy", "--cache-dir", str(tmp_path / "cache"), str(probe))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Incompatible types in assignment" in done.stdout, done.stdout      # type checked
    assert "Function is missing a type annotation" in done.stdout, done.stdout  # strict
