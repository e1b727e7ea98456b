"""`vswbench` starts without the heavy libraries: the CLI's modules load matplotlib, scipy and
numpy only in the commands that use them (the report, the models, the bootstrap; numpy another
0.1 s a start: cli/model.py loads its commands lazily). Loaded at start-up they
cost 1.2-1.5 s of CPU to every command, `--help` included (2026-12-02: 1.25-1.7 s to import
vswbench.cli.app before, 0.4 s after), and to each of the test suite's hundred-odd CLI runs."""

import subprocess
import sys

HEAVY = ("matplotlib", "scipy", "numpy", "pandas", "pyarrow")


def test_cli_start_up_loads_no_heavy_library() -> None:
    code = ("import sys, vswbench.cli.app\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "", f"loaded at start-up: {done.stdout.strip()}"


def test_the_check_sees_a_heavy_import() -> None:
    """The check above can fail: the same probe after importing the report's page module."""
    code = ("import sys, vswbench.report.build\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert "matplotlib" in done.stdout
