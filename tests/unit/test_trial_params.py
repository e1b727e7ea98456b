"""TrialParams, the one trial-parameter record: parsing sizes (IMIX a proper value), validation
before anything runs, and the engine's two encodings rendered from it alike."""

from __future__ import annotations

import math

import pytest

from vswbench.engine.params import TrialParams
from vswbench.errors import UsageError
from vswbench.units import FrameSize
from vswbench.units import frame_bytes
from vswbench.units import wire_gbps


def test_sizes_parse_once_and_keep_their_stored_form() -> None:
    assert TrialParams(64).size == FrameSize(bytes=64)
    assert TrialParams("1518").frame_size == 1518
    imix = TrialParams("imix")
    assert imix.size.is_imix and imix.frame_size == "imix" and imix.size.largest == 1518
    assert imix.size.mean_bytes == pytest.approx((7 * 64 + 4 * 512 + 1518) / 12)
    assert TrialParams("imix:aag").size.engine_arg() == "imix:aag"
    for bad in (63, 9019, "jumbo", "imix:xyz", True):
        with pytest.raises(UsageError):
            TrialParams(bad)


@pytest.mark.parametrize("change", [
    {"rate_pps": math.nan}, {"rate_pps": math.inf}, {"rate_pps": 0}, {"rate_pps": 1e26},
    {"duration": math.nan}, {"duration": 0}, {"duration": 1e9}, {"warmup": -1},
    {"flows": 0}, {"burst": 0}, {"io": "dpdk-magic"}])
def test_validation_names_the_flag(change: dict) -> None:
    with pytest.raises(UsageError, match="--"):
        TrialParams(64, **change).validate()


def test_argv_and_control_json_carry_the_same_traffic() -> None:
    p = TrialParams("imix", rate_pps=200_000, duration=2.5, flows=16, burst=4)
    argv = p.send_args(senders=2)
    opts = dict(zip(argv[::2], argv[1::2]))
    assert opts == {"--size": "imix", "--rate": "100000", "--duration": "2.5",
                    "--flows": "16", "--burst": "4"}
    cmd = p.at(50_000, 1.0).control_command(count=50_000, cap_s=1.005, drain=0.05)
    assert cmd == {"cmd": "trial", "mode": "loop", "rate": 50_000, "size": "imix", "burst": 4,
                   "flows": 16, "warmup": 0, "drain": 0.05, "count": 50_000, "duration": 1.005}
    assert p.at(50_000, 1.0).size == p.size and p.at(50_000, 1.0).flows == p.flows


def test_wire_arithmetic_counts_preamble_and_gap() -> None:
    assert wire_gbps(1_000_000, 64) == pytest.approx(0.672)
    assert wire_gbps(1_000_000, "imix") == pytest.approx(
        1e6 * (frame_bytes("imix") + 20) * 8 / 1e9, rel=1e-6)
    assert wire_gbps(None, 64) is None and wire_gbps(1000, "bogus") is None


def test_io_auto_takes_the_in_kernel_tester_only_where_it_works() -> None:
    from vswbench.measure.plan import engine_io
    from vswbench.switches.catalog import all_switches

    sw = all_switches()
    works, refused = (lambda: None), (lambda: "kernel older than 5.18")
    assert engine_io(sw["bridge"], "auto", {}, works) == "xdplive"
    assert engine_io(sw["ovs-afxdp"], "auto", {}, works) == "xdplive"
    assert engine_io(sw["bridge"], "auto", {}, refused) == "afpacket"      # probe says no
    # no NAPI on the tester's veth peer: every frame would be dropped uncounted
    for name, options in (("macvlan", {}), ("ovs", {}), ("shaped", {}),
                          ("bridge", {"kernel_mode": "softirq"}), ("veth", {"nf": "ovs"})):
        assert engine_io(sw[name], "auto", options, works) == "afpacket", name
        with pytest.raises(UsageError, match="--io xdplive"):
            engine_io(sw[name], "xdplive", options, works)
    for name in ("memif", "testpmd", "ovs-dpdk"):
        assert engine_io(sw[name], "auto", {}, works) == "dpdk"
    assert engine_io(sw["bridge"], "afpacket", {}, works) == "afpacket"   # forcing the old one
