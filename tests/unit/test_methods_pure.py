"""Pure parts of the methodology: load lists, fractions, the shaper's arithmetic, the control
session's trial command."""
import pytest

from vswbench.errors import UsageError
from vswbench.loadcurve import parse_fractions, sweep_loads
from vswbench.session import ControlSession, Workload
from vswbench.switches.shaped import Shaper, shaper_from_options


def test_sweep_loads():
    assert sweep_loads(100_000, 5) == [20_000, 40_000, 60_000, 80_000, 100_000]
    assert sweep_loads(100, 3, min_load=10) == [10, 55, 100]
    for bad in ((100, 1, None), (0, 5, None), (100, 5, 200)):
        with pytest.raises(UsageError):
            sweep_loads(*bad)


def test_fractions():
    assert parse_fractions("10,50,90,100") == (0.1, 0.5, 0.9, 1.0)
    for bad in ("", "ten", "0", "300"):
        with pytest.raises(UsageError):
            parse_fractions(bad)


def test_shaper_rates_count_frames_without_fcs():
    s = Shaper(100_000, 64)
    assert s.rate_bits == 100_000 * 60 * 8
    assert s.burst_bytes == 100 * 60 and s.limit_bytes == 200 * 60
    args = s.tbf_args()
    assert args[:3] == ["tbf", "rate", "48000000bit"]
    tiny = Shaper(100, 1518)
    assert tiny.burst_bytes >= 2 * 1514 and tiny.limit_bytes >= 4 * 1514


def test_shaper_options():
    assert shaper_from_options({"shape_pps": "50k", "shape_frame_size": "512"}) == Shaper(50_000, 512)
    for bad in ({}, {"shape_pps": "fast"}, {"shape_pps": "1k", "shape_frame_size": "9000"},
                {"shape_pps": "1k", "shape_frame_size": "x"}, {"shape_pps": "1G"}):
        with pytest.raises(UsageError):
            shaper_from_options(bad)


def test_control_trial_command_sends_an_exact_count():
    s = ControlSession.__new__(ControlSession)
    s.workload, s.drain = Workload(512, 4, 1, "afpacket"), 0.05
    cmd, count, cap = s._command(100_000, 2.0, None)
    assert count == 200_000 and cmd["count"] == 200_000
    assert 2.0 < cmd["duration"] < 2.01 and cmd["size"] == "512" and cmd["flows"] == 4
    assert cmd["warmup"] == 0 and cmd["drain"] == 0.05
    cmd, count, cap = s._command(0, 0, 5000)       # back-to-back burst: max rate, no cap
    assert cmd["count"] == 5000 and "duration" not in cmd and cmd["rate"] == 0
    cmd, count, cap = s._command(0, 1.0, None)     # calibration: max rate for a second
    assert "count" not in cmd and cmd["duration"] == 1.0
