import subprocess
import sys

import pytest

from vswbench import __version__
from vswbench.cli import app as cli
from vswbench.engine.process import EngineError
from vswbench.errors import UsageError


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and __version__ in out


def test_help(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0 and "demo" in out and "probe" in out and "clean" in out


@pytest.mark.parametrize("argv", [
    ["--bogus"],
    ["no-such-command"],
    ["demo", "--size", "10"],
    ["demo", "--backend", "dpdk-magic"],
    ["demo", "--duration", "fast"],
    ["probe", "--bogus"],
    ["clean", "extra-arg"],
    ["clean", "--prefix", "eth"],
])
def test_usage_errors_exit_2_without_traceback(capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert "Traceback" not in out + err
    assert "Error" in err or "error" in err


def test_own_usage_error_exit_2(capsys, monkeypatch):
    import vswbench.measure.demo

    def bad(*a, **k):
        raise UsageError("--tx-cpu 9: this machine has CPUs 0..1")

    monkeypatch.setattr(vswbench.measure.demo, "run_demo", bad)
    code, _, err = run_cli(capsys, "demo")
    assert code == 2 and "--tx-cpu 9" in err and "Traceback" not in err


@pytest.mark.parametrize("returncode,expected", [(3, 3), (1, 1), (2, 1)])
def test_engine_errors_become_clean_messages(capsys, monkeypatch, returncode, expected):
    import vswbench.engine.probe

    def failing_probe(*a, **k):
        raise EngineError("probe failed", argv=["vswbench-engine", "probe"],
                          returncode=returncode, stderr="afxdp: not supported here: no AF_XDP")

    monkeypatch.setattr(vswbench.engine.probe, "probe", failing_probe)
    code, _, err = run_cli(capsys, "probe")
    assert code == expected
    assert "not supported here" in err and "Traceback" not in err


def test_probe_table_and_json(capsys, monkeypatch):
    import vswbench.engine.probe

    raw = {"backends": [{"name": "afpacket", "usable": True},
                        {"name": "afxdp", "usable": False, "reason": "no libxdp"}],
           "tsc": {"hz": 2.596e9, "invariant": True}}
    monkeypatch.setattr(vswbench.engine.probe, "probe", lambda *a, **k: vswbench.engine.probe.parse_probe(
        __import__("json").dumps(raw)))
    code, out, _ = run_cli(capsys, "probe")
    assert code == 0 and "afpacket" in out and "no libxdp" in out and "tsc.hz" in out
    code, out, _ = run_cli(capsys, "probe", "--json")
    # the engine's probe, and the VM guest's boots (stubbed in unit tests: conftest no_vm_boots)
    got = __import__("json").loads(out)
    assert code == 0 and {k: v for k, v in got.items() if k != "vm"} == raw
    assert set(got["vm"]) == {"VM guest under KVM", "VM guest under TCG (emulated)"}


def test_console_script_usage_error_in_subprocess():
    proc = subprocess.run([sys.executable, "-m", "vswbench", "--no-such-option"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "no-such-option" in proc.stderr


@pytest.mark.parametrize("exc,code,fragment", [
    (PermissionError(13, "Permission denied", "/ro/x.json"), 2, "/ro/x.json: Permission denied"),
    (FileNotFoundError(2, "No such file or directory", "/nonexistent/r.json"), 2,
     "/nonexistent/r.json"),
    (__import__("sqlite3").DatabaseError("file is not a database"), 2, "damaged or not"),
    (__import__("sqlite3").OperationalError("database is locked"), 1, "another run"),
    (RuntimeError("boom"), 1, "This is a bug"),
])
def test_error_boundary_one_line_and_documented_status(monkeypatch, capsys, exc, code, fragment):
    import vswbench.engine.probe

    def failing_probe(*a, **k):
        raise exc

    monkeypatch.setattr(vswbench.engine.probe, "probe", failing_probe)
    assert cli.main(["probe"]) == code
    captured = capsys.readouterr()
    assert fragment in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) <= 3   # one message (wrapped at most)


def test_debug_prints_the_traceback_of_a_bug(monkeypatch, capsys):
    import vswbench.engine.probe

    def failing_probe(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(vswbench.engine.probe, "probe", failing_probe)
    assert cli.main(["--debug", "probe"]) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["trial", "--switch", "bridge"], ["clean"],
                                  ["search", "--switch", "veth"], ["calibrate"], ["demo"],
                                  ["run", "--suite", "quick", "--out", "OUT"]])
def test_needs_root_is_exit_2_for_every_command(monkeypatch, capsys, tmp_path, argv):
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert cli.main(argv) == 2
    assert "run it as root" in capsys.readouterr().err
