"""Frame sizes above 1518 B (issue 32): 64..9018 accepted everywhere a size is (API, spec, CLI),
9019 refused with exit 2, IMIX unchanged; the links' MTU they need; io auto takes afpacket for
them; a switch whose ports cannot take MTU 9000 is refused with exit 3 (skipped in a campaign)."""
from __future__ import annotations

import pytest

from vswbench.campaign.values import BadValue
from vswbench.campaign.values import _size
from vswbench.engine.params import TrialParams
from vswbench.engine.probe import parse_backends
from vswbench.errors import UsageError
from vswbench.measure.plan import SwitchUnavailable
from vswbench.measure.plan import check_io_frame
from vswbench.measure.plan import engine_io
from vswbench.measure.plan import jumbo_problem
from vswbench.switches.catalog import all_switches
from vswbench.units import MAX_FRAME
from vswbench.units import FrameSize


def test_bounds_64_to_9018() -> None:
    assert MAX_FRAME == 9018
    for ok in (64, 1518, 1519, 9000, 9018, "9018"):
        assert FrameSize.parse(ok).bytes == int(ok)
    for bad in (63, 9019, 65536):
        with pytest.raises(UsageError, match="64..9018"):
            FrameSize.parse(bad)
    assert TrialParams(9018).frame_size == 9018
    with pytest.raises(UsageError, match="64..9018"):
        TrialParams(9019)
    assert _size(9018) == 9018
    with pytest.raises(BadValue, match="64..9018"):
        _size(9019)


def test_imix_unchanged() -> None:
    imix = FrameSize.parse("imix")
    assert imix.largest == 1518 and imix.engine_arg() == "imix" and imix.link_mtu == 1500
    with pytest.raises(UsageError):
        FrameSize.parse("imix:h")


def test_link_mtu() -> None:
    assert FrameSize.parse(64).link_mtu == 1500
    assert FrameSize.parse(1518).link_mtu == 1500     # as ever: nothing set
    assert FrameSize.parse(1519).link_mtu == 9000     # size - 18 rounded up to 9000
    assert FrameSize.parse(9018).link_mtu == 9000


def test_auto_io_takes_afpacket_for_jumbo_frames() -> None:
    sw = all_switches()

    def works() -> None:
        return None

    std, jumbo = FrameSize.parse(1518), FrameSize.parse(9018)
    # unchanged up to 1518 B
    assert engine_io(sw["bridge"], "auto", {}, works, size=std) == \
        engine_io(sw["bridge"], "auto", {}, works)
    assert engine_io(sw["bridge"], "auto", {}, works, size=std) == "xdplive"
    assert engine_io(sw["bridge"], "auto", {}, works, size=jumbo) == "afpacket"
    assert engine_io(sw["bridge"], "auto", {}, works, size=FrameSize.parse(1519)) == "afpacket"
    assert engine_io(sw["bridge"], "afpacket", {}, works, size=jumbo) == "afpacket"


def test_switches_that_refuse_jumbo_frames() -> None:
    sw = all_switches()
    jumbo = FrameSize.parse(9018)
    for name in ("bridge", "ovs", "tc-bpf", "veth"):
        assert jumbo_problem(sw[name], {}, jumbo) is None, name
    for name in ("xdp", "ovs-afxdp", "memif", "testpmd", "ovs-dpdk"):
        problem = jumbo_problem(sw[name], {}, jumbo)
        assert problem and "9018" in problem and "MTU 9000" in problem, name
        assert jumbo_problem(sw[name], {}, FrameSize.parse(1518)) is None
    from vswbench.scenario import parse

    vxlan = jumbo_problem(sw["bridge"], {}, jumbo, parse("remote-vxlan"))
    assert vxlan and "VXLAN" in vxlan and "use scenario remote" in vxlan
    assert jumbo_problem(sw["bridge"], {}, jumbo, parse("remote")) is None
    assert jumbo_problem(sw["bridge"], {}, FrameSize.parse(64), parse("remote-vxlan")) is None


def test_explicit_io_refused_above_its_limit() -> None:
    limits = {"xdplive": 1518, "afxdp": 1796, "udp": 9018}
    check_io_frame("afxdp", FrameSize.parse(1796), limits.get)
    check_io_frame("udp", FrameSize.parse(9018), limits.get)
    check_io_frame("xdplive", FrameSize.parse(1518), limits.get)     # as ever: not asked
    check_io_frame("xdplive", FrameSize.parse("imix"), limits.get)
    with pytest.raises(UsageError, match="--io xdplive carries frames up to 1518 B; use --io "
                                         "afpacket for frames above 1518 B") as e:
        check_io_frame("xdplive", FrameSize.parse(9018), limits.get)
    assert e.value.exit_code == 2
    with pytest.raises(UsageError, match="1796"):
        check_io_frame("afxdp", FrameSize.parse(1797), limits.get)


def test_probe_states_each_io_limit() -> None:
    found = parse_backends({"backends": [
        {"name": "afpacket", "usable": True, "max_frame": 9018},
        {"name": "xdplive", "usable": True, "max_frame": 1518}, {"name": "old", "usable": True}]})
    assert [b.max_frame for b in found] == [9018, 1518, None]


def _cli(capsys, *argv: str) -> tuple[int, str]:
    from vswbench.cli import app as cli

    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_cli_size_9019_exit_2(capsys, monkeypatch) -> None:
    import vswbench.run.scope

    def no_run(*a, **k):
        raise AssertionError("nothing may be created for bad input")

    monkeypatch.setattr(vswbench.run.scope, "run_scope", no_run)
    code, text = _cli(capsys, "trial", "--switch", "bridge", "--size", "9019")
    assert code == 2 and "64..9018" in text and "Traceback" not in text


def test_cli_jumbo_on_xdp_exit_3(capsys, monkeypatch) -> None:
    import vswbench.run.scope

    def no_run(*a, **k):
        raise AssertionError("nothing may be created for a refused combination")

    monkeypatch.setattr(vswbench.run.scope, "run_scope", no_run)
    code, text = _cli(capsys, "trial", "--switch", "xdp", "--size", "9018")
    assert code == 3 and "frame size 9018" in text and "frags" in text
    assert "Traceback" not in text
    assert issubclass(SwitchUnavailable, Exception)


def test_campaign_skips_jumbo_on_xdp() -> None:
    from vswbench.campaign.execute import unsupported_problem as _unsupported
    from vswbench.campaign.spec import expand
    from vswbench.campaign.spec import parse_spec

    spec = parse_spec('[campaign]\nname = "jumbo"\n[[study]]\nkind = "search"\nswitch = ["bridge", "xdp"]\n'
                      'size = [64, 9018]\n')
    reasons = {(p.switch, p.size): _unsupported(p) for p in expand(spec)}
    assert reasons[("bridge", 9018)] is None and reasons[("xdp", 64)] is None
    assert "frags" in str(reasons[("xdp", 9018)])


def test_demo_skips_a_backend_below_the_size() -> None:
    from vswbench.engine.probe import ProbeResult
    from vswbench.measure.demo import DemoOptions
    from vswbench.measure.demo import choose_backends

    backends = parse_backends({"backends": [
        {"name": "afpacket", "usable": True, "max_frame": 9018},
        {"name": "afxdp", "usable": True, "max_frame": 1796}]})
    found = ProbeResult({}, backends, None, None)
    chosen, skipped = choose_backends(DemoOptions(size=9018, backends=("afpacket", "afxdp")), found)
    assert chosen == ["afpacket"] and "up to 1796 B" in skipped["afxdp"]
    chosen, _ = choose_backends(DemoOptions(size=1518, backends=("afpacket", "afxdp")), found)
    assert chosen == ["afpacket", "afxdp"]


def test_socket_points_are_not_frames_and_every_shipped_spec_passes_the_runner_s_check() -> None:
    """A stream point's size is its message size (16384 B by default), never a frame: the jumbo
    check once refused every point of specs/sockets.toml as it ran (not in --dry-run). Every
    shipped spec's points pass the check the runner makes before building a testbed, or are
    refused for a reason the switch or scenario gives, never a frame size they do not have."""
    from pathlib import Path

    from vswbench.campaign.execute import unsupported_problem as _unsupported
    from vswbench.campaign.spec import expand
    from vswbench.campaign.spec import load_spec

    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "specs").rglob("*.toml")):
        for p in expand(load_spec(path)):
            reason = _unsupported(p)
            assert reason is None or "frame size" not in reason, (path.name, p.label, reason)
    spec = load_spec(root / "specs" / "sockets.toml")
    assert all(_unsupported(p) is None for p in expand(spec) if p.switch == "bridge")
