"""The linter and the type checker, run for real on the tree: zero findings (configuration in
pyproject.toml, [tool.ruff] and [tool.mypy]; setup.sh installs both with the test extras). bench/'s
scripts, Python without the .py extension, are checked by both.

By hand, from the repository root:
    .venv/bin/ruff check .
    .venv/bin/mypy
"""
from __future__ import annotations

import glob
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH_SCRIPTS = sorted(p for p in (ROOT / "bench").iterdir()
                       if p.is_file() and not p.name.startswith("."))


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


def test_the_configuration_holds_the_project_s_rules():
    """The checks above are only as wide as pyproject.toml says (issue 45): ruff selects
    pycodestyle, pyflakes, bugbear, pyupgrade, isort, mccabe at complexity 10 and simplify, with
    no file excepted from those three; mypy is strict on the whole package and bench/."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    lint = tool["ruff"]["lint"]
    assert {"E", "W", "F", "B", "UP", "I", "C901", "SIM"} <= set(lint["select"])
    assert lint["mccabe"]["max-complexity"] == 10
    ours = re.compile(r"(I|C9|SIM)\d*")      # isort, mccabe, simplify: a rule or a prefix
    assert not [r for r in lint.get("ignore", []) if ours.fullmatch(r)]
    excepted = {f: rules for f, rules in lint.get("per-file-ignores", {}).items()
                if any(ours.fullmatch(r) for r in rules)}
    assert excepted == {}, excepted
    mypy = tool["mypy"]
    assert mypy["strict"] is True and {"src/vswbench", "bench/*"} <= set(mypy["files"])
    modules = [m for o in mypy.get("overrides", [])
               for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])]
    assert not [m for m in modules if m.split(".")[0] == "vswbench"], modules


def test_bench_scripts_are_among_the_checked_files():
    """Every file in bench/ is one ruff checks and one of mypy's configured files (scripts named
    without .py are neither by default: ruff skips them, mypy names them all __main__)."""
    assert BENCH_SCRIPTS, "bench/ has no scripts"
    done = _tool("ruff", "check", "--no-cache", "--show-files", ".")
    shown = {Path(line.strip()) for line in done.stdout.splitlines() if line.strip()}
    assert [p for p in BENCH_SCRIPTS if p not in shown] == [], "pyproject.toml: ruff extend-include"
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    files = {Path(p).resolve() for f in mypy["files"] for p in glob.glob(str(ROOT / f))}
    assert [p for p in BENCH_SCRIPTS if p not in files] == [], "pyproject.toml: [tool.mypy] files"
    assert mypy.get("scripts_are_modules") is True


def test_mypy_checks_every_script_without_an_extension(tmp_path: Path):
    """With the project's configuration two scripts without .py are each checked (without
    scripts_are_modules both are module __main__ and mypy stops before checking either)."""
    (tmp_path / "one").write_text("def f(x):\n    return x\n")
    (tmp_path / "two").write_text("y: int = 'a'\n")
    done = _tool("mypy", "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "one"),
                 str(tmp_path / "two"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Incompatible types in assignment" in done.stdout, done.stdout
    assert "Function is missing a type annotation" in done.stdout, done.stdout


def test_the_tools_report_a_finding(tmp_path: Path):
    """The two checks above can fail: with the project's configuration each tool reports a
    planted finding (an unused import; a str where an int is declared, an unannotated function
    under strict)."""
    done = _tool("ruff", "check", "--no-cache", "--stdin-filename", "src/vswbench/probe.py", "-",
                 stdin="import os\n")
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + done.stderr
    # eleven ifs and an except (complexity over 10: C901) and a try/except/pass (SIM105)
    branchy = "def f(x: int) -> int:\n" + "".join(f"    if x == {i}:\n        return {i}\n"
                                                   for i in range(11))
    branchy += "    try:\n        x += 1\n    except ValueError:\n        pass\n    return x\n"
    done = _tool("ruff", "check", "--no-cache", "--stdin-filename", "src/vswbench/probe.py", "-",
                 stdin=branchy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "C901" in done.stdout and "SIM105" in done.stdout, done.stdout
    probe = tmp_path / "probe.py"
    probe.write_text("def f(x):\n    return x\n\n\ny: int = 'a'\n")
    done = _tool("mypy", "--cache-dir", str(tmp_path / "cache"), str(probe))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Incompatible types in assignment" in done.stdout, done.stdout      # type checked
    assert "Function is missing a type annotation" in done.stdout, done.stdout  # strict
