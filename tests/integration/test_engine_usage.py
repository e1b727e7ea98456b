"""(d) Bad usage: exit status 2, a message on stderr, no crash and no core file."""

import subprocess

import pytest


@pytest.mark.parametrize("argv", [
    [],
    ["frobnicate"],
    ["gen", "--bogus-option"],
    ["gen", "--port", "lo", "--size", "12"],
    ["gen", "--port", "lo", "--size", "imix:xyz"],
    ["gen", "--port", "lo", "--rate", "fast"],
    ["gen", "--port", "lo", "--io", "carrier-pigeon"],
    ["sink", "--port", "lo", "--duration", "-3"],
    ["gen", "--port", "lo", "--flows", "0"],
    ["gen", "--port", "lo", "--batch", "100000"],
    ["gen", "--port"],
])
@pytest.mark.timeout(60)
def test_bad_usage_exits_2_with_message(engine, tmp_path, argv):
    proc = subprocess.run([str(engine), *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2, f"{argv}: status {proc.returncode}, stderr {proc.stderr!r}"
    assert proc.stderr.strip(), f"{argv}: no message on stderr"
    assert not list(tmp_path.glob("core*")), f"{argv}: left a core file"
