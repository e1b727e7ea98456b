"""Bad input to the methodology commands: one clear message, exit 2, nothing created (these
checks all run before anything touches the kernel, so they need no root)."""
import pytest

from vswbench.cli.app import main


@pytest.mark.parametrize("argv,needle", [
    (["search", "--switch", "shaped"], "--shape-pps"),
    (["search", "--switch", "bridge", "--shape-pps", "10k"], "shaped"),
    (["search", "--switch", "nope"], "unknown switch"),
    (["search", "--switch", "bridge", "--preset", "slow"], "slow"),
    (["search", "--switch", "bridge", "--latency-at", "ten"], "--latency-at"),
    (["search", "--switch", "bridge", "--min-load", "fast"], "rate"),
    (["search", "--switch", "bridge", "--scenario", "chain:99"], "chain"),
    (["sweep", "--switch", "bridge", "--points", "1"], "points"),
    (["sweep", "--switch", "bridge", "--max-load", "100k", "--min-load", "200k"], "--min-load"),
    (["latency", "--switch", "bridge", "--at", "500"], "--at '500'"),
    (["b2b", "--switch", "bridge", "--scenario", "p2p-pair"], "back-to-back"),
    (["calibrate", "--scenario", "pairs:2"], "calibration"),
    (["search", "--switch", "shaped", "--shape-pps", "1k", "--size", "9019"], "9019"),
])
def test_bad_input_exits_2(argv, needle, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert needle in captured.err + captured.out
    assert "Traceback" not in captured.err
