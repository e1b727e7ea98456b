"""Flow churn on the Python side: TrialParams renders it into argv and control JSON, checks it like
the engine does, `auto` io takes afpacket with it, and campaign specs have a `churn` dimension that
leaves the keys of points without churn unchanged."""

from __future__ import annotations

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.engine.params import TrialParams
from vswbench.engine.params import churn_text
from vswbench.engine.params import parse_churn
from vswbench.errors import UsageError
from vswbench.measure.plan import engine_io
from vswbench.results.export import HEADLINE_COLUMNS
from vswbench.switches.catalog import all_switches


def spec(study: str) -> str:
    return f'[campaign]\nname = "t"\n[[study]]\n{study}'


@pytest.mark.parametrize("text, want", [
    ("1000/0.5", (1000.0, 0.5)), ("10k/1", (10_000.0, 1.0)), ("1M/0.001", (1e6, 0.001)),
    ("off", (0.0, 0.0)), (None, (0.0, 0.0)), ("", (0.0, 0.0))])
def test_parse_churn(text, want) -> None:
    assert parse_churn(text) == want


@pytest.mark.parametrize("text", ["1000", "a/b", "1000/0.5/2", "/1"])
def test_parse_churn_refuses(text) -> None:
    with pytest.raises(UsageError, match="--churn"):
        parse_churn(text)


def test_argv_and_control_json_carry_churn() -> None:
    p = TrialParams(64, rate_pps=100_000, flow_arrival=1000, flow_life=0.5)
    p.validate()
    assert p.churn == "1000/0.5"
    argv = p.send_args()
    assert argv[argv.index("--flow-arrival") + 1] == "1000"
    assert argv[argv.index("--flow-life") + 1] == "0.5"
    cmd = p.at(50_000, 2).control_command(count=None, cap_s=2, drain=0.5)
    assert (cmd["flow_arrival"], cmd["flow_life"]) == (1000, 0.5)
    plain = TrialParams(64)
    assert plain.churn is None and "--flow-arrival" not in plain.send_args()
    assert "flow_arrival" not in plain.control_command(count=10, cap_s=0, drain=0.5)


@pytest.mark.parametrize("kw, what", [
    ({"flow_arrival": 1000}, "lifetime"),                        # one without the other
    ({"flow_arrival": 10, "flow_life": 0.05}, "at least 1"),     # 0.5 active
    ({"flow_arrival": 100_000, "flow_life": 1}, "source ports"),  # more than the tuple space
    ({"flow_arrival": 100, "flow_life": 1, "flows": 8}, "--flows"),
    ({"flow_arrival": 100, "flow_life": 1, "io": "xdplive"}, "afpacket"),
    ({"flow_arrival": 100, "flow_life": 1, "io": "udp"}, "afpacket"),
    ({"flow_arrival": float("nan"), "flow_life": 1}, "flows per second")])
def test_validate_refuses(kw, what) -> None:
    with pytest.raises(UsageError, match=what):
        TrialParams(64, **kw).validate()


def test_auto_io_takes_afpacket_with_churn() -> None:
    bridge = all_switches()["bridge"]
    assert engine_io(bridge, "auto", {}, lambda: None) == "xdplive" or \
        bridge.kernel_tx_problem({}) is not None
    assert engine_io(bridge, "auto", {}, lambda: None, churn=True) == "afpacket"
    assert engine_io(bridge, "afxdp", {}, lambda: None, churn=True) == "afxdp"


def test_spec_churn_dimension() -> None:
    base = 'kind = "search"\nswitch = "bridge"\nsize = [64, 512]\n'
    plain = expand(parse_spec(spec(base)))
    pts = expand(parse_spec(spec(base + 'churn = ["off", "1000/0.5", "10k/1"]\n')))
    assert len(pts) == 3 * len(plain)
    assert {p.churn for p in pts} == {None, "1000/0.5", "10000/1"}
    # points without churn keep the keys they had before the dimension existed
    assert {p.key for p in plain} == {p.key for p in pts if p.churn is None}
    churned = [p for p in pts if p.churn is not None]
    assert all("churn=" in p.label and p.params()["churn"] == p.churn for p in churned)
    assert "churn" not in plain[0].params()
    assert churn_text(1000, 0.5) == "1000/0.5"


@pytest.mark.parametrize("line, what", [
    ('churn = "1000"', "A/D"), ('churn = 5', "not a churn"), ('churn = "10/0.01"', "at least 1"),
    ('churn = "1000/0.5"\nio = "xdplive"', "fixed set of flows"),
    ('churn = "1000/0.5"\nflows = [1, 8]', r"give flows = \[1\]")])
def test_spec_churn_refused(line, what) -> None:
    with pytest.raises(UsageError, match=r"study 1, churn"):
        parse_spec(spec(f'kind = "search"\nswitch = "bridge"\n{line}\n'))
    with pytest.raises(UsageError, match=what):
        parse_spec(spec(f'kind = "search"\nswitch = "bridge"\n{line}\n'))


def test_export_has_churn_column() -> None:
    assert HEADLINE_COLUMNS.index("churn") == HEADLINE_COLUMNS.index("flows") + 1
