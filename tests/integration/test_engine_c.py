"""(f) The engine's C unit tests and (g) a bounded fuzzing run, driven from pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ENGINE_DIR = Path(__file__).resolve().parents[2] / "engine"
# the bounded run checks that the target builds and runs clean; its coverage levels off within
# seconds (edges: 760 after 5 s, 174,096 runs; 766 after 20 s, 1,075,153 runs, 2026-12-02).
# Longer campaigns: make -C engine fuzz-run FUZZ_SECONDS=600
FUZZ_SECONDS = 5


def make(*targets: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-C", str(ENGINE_DIR), *targets], capture_output=True,
                          text=True, timeout=timeout)


def tail(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout[-3000:] + "\n" + proc.stderr[-3000:]).strip()


@pytest.mark.timeout(900)
def test_engine_unit_tests_pass():
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    proc = make("check", timeout=850)
    assert proc.returncode == 0, tail(proc)


def libfuzzer_missing(workdir: Path) -> str | None:
    """Why clang cannot build a libFuzzer target here, or None if it can."""
    if shutil.which("clang") is None:
        return "clang not installed"
    src = workdir / "probe_fuzzer.c"
    src.write_text("#include <stdint.h>\n#include <stddef.h>\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n")
    proc = subprocess.run(["clang", "-fsanitize=fuzzer", "-o", str(workdir / "probe_fuzzer"),
                           str(src)], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return f"clang cannot link libFuzzer: {proc.stderr.strip()[-300:]}"
    return None


@pytest.mark.timeout(900)
def test_fuzz_target_runs_bounded(tmp_path):
    reason = libfuzzer_missing(tmp_path)
    if reason:
        pytest.skip(reason)
    proc = make("fuzz-run", f"FUZZ_SECONDS={FUZZ_SECONDS}", timeout=850)
    assert proc.returncode == 0, tail(proc)
    assert "Done" in proc.stderr or "done" in proc.stderr.lower(), tail(proc)
