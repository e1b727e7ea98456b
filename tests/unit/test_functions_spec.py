"""switches/functions.py and the function dimension (no root): the l3 table overlaps so the
longest prefix decides, acl rules never match the measured traffic, bad values and unsupported
(switch, function) pairs are refused with the reason, campaign specs and the CLI carry them."""

from __future__ import annotations

import ipaddress

import pytest

from vswbench.campaign.spec import parse_spec
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.switches.catalog import all_switches
from vswbench.switches.rules.functions import L3_BASE
from vswbench.switches.rules.functions import MAX_L3_TABLE
from vswbench.switches.rules.functions import Function
from vswbench.switches.rules.functions import acl_denied
from vswbench.switches.rules.functions import l3_prefixes
from vswbench.switches.rules.functions import longest_match
from vswbench.switches.rules.functions import nft_acl
from vswbench.switches.rules.functions import ovs_function_rules
from vswbench.switches.rules.functions import parse_function
from vswbench.switches.rules.functions import route_batch


def test_l3_table_overlaps_and_lpm_alternates() -> None:
    table = l3_prefixes(1001)
    assert len(table) == len({p.network for p in table}) == 1001
    assert table[0].network == "198.19.0.0/16"
    for flow in range(900):
        addr = str(ipaddress.ip_address(int(L3_BASE) + flow))
        best = longest_match(table, addr)
        assert best is not None
        # even destinations hit their /32, odd ones the /31 around them, beyond the table the /16
        assert best.role == ("leaf" if flow % 2 == 0 else "pair"), (flow, best)
    assert longest_match(table, "198.19.200.1").role == "cover"
    assert len(l3_prefixes(MAX_L3_TABLE)) == MAX_L3_TABLE
    for p in l3_prefixes(MAX_L3_TABLE)[-3:]:
        assert ipaddress.ip_network(p.network).subnet_of(ipaddress.ip_network("198.18.0.0/15"))


def test_rule_texts() -> None:
    batch = route_batch(l3_prefixes(3), "add", "198.18.2.2", "vsbx", "100")
    assert batch.splitlines()[2] == "route add 198.19.0.0/32 via 198.18.2.2 dev vsbx table 100"
    acl = nft_acl("vsbfn", 3)
    assert acl.count(" drop") == 3 and "hook forward" in acl
    bridged = nft_acl("vsbfn", 3, family="bridge")     # the bridge's: its own forward hook
    assert bridged.startswith("table bridge vsbfn") and bridged.count(" drop") == 3
    denied = set(acl_denied(32768))
    assert "198.19.255.255" in denied and not denied & {"198.18.2.2", "198.19.0.1"}
    rules = ovs_function_rules(Function("l3", 3), 1, 2)
    assert [r.split("priority=")[1].split(",")[0] for r in rules] == ["116", "131", "132"]
    assert "ct(commit,nat(src=" in ovs_function_rules(Function("nat"), 1, 2)[0]


@pytest.mark.parametrize("options, message", [
    ({"function": "l4"}, "choose from"),
    ({"function": "nat", "table_size": "10"}, "only functions l3 and acl"),
    ({"function": "acl", "table_size": "40000"}, "1..32,768"),
    ({"function": "l3", "table_size": "x"}, "table_size"),
])
def test_bad_values_are_refused(options, message) -> None:
    with pytest.raises(UsageError, match=message):
        parse_function(options)


def test_switches_declare_their_functions() -> None:
    switches = all_switches()
    assert switches["router"].unread_options({"function": "nat"}) is None
    assert switches["ovs"].unread_options({"function": "l3", "table_size": "10"}) is None
    problem = switches["bridge"].unread_options({"function": "nat"})
    assert problem and "cannot do function nat" in problem and "implements l2, acl" in problem
    assert switches["bridge"].unread_options({"function": "acl", "table_size": "2000"}) is None


SPEC = """
[campaign]
name = "f"
[[study]]
kind = "trial"
switch = {switches}
function = ["l2", "nat", "l3"]
table_size = [10, 1000]
rate = "10k"
"""


def test_spec_function_dimension() -> None:
    points = parse_spec(SPEC.format(switches='["router"]')).points()
    opts = [dict(p.options) for p in points]
    assert opts == [{}, {"function": "nat"}, {"function": "l3", "table_size": "10"},
                    {"function": "l3", "table_size": "1000"}]
    with pytest.raises(UsageError, match="switch bridge cannot do function nat"):
        parse_spec(SPEC.format(switches='["router", "bridge"]'))
    with pytest.raises(UsageError, match="table_size: only function"):
        parse_spec(SPEC.format(switches='["router"]').replace('"l2", "nat", "l3"', '"nat"'))


def test_cli_refuses_unsupported_pairs_with_exit_2(capsys) -> None:
    assert main(["trial", "--switch", "bridge", "--function", "nat", "--rate", "10k"]) == 2
    assert "cannot do function nat" in capsys.readouterr().err
    assert main(["search", "--switch", "router", "--table-size", "5"]) == 2
    assert "--table-size" in capsys.readouterr().err


RULE_SPEC = """
[campaign]
name = "r"
[[study]]
kind = "rule-update"
switch = {switches}
rules = [1000, 10000]
preset = "quick"
"""


def test_spec_rule_update_kind() -> None:
    points = parse_spec(RULE_SPEC.format(switches='["router", "ovs"]')).points()
    assert [(p.switch, p.rules, p.update_rate, p.rate) for p in points] == [
        ("router", 1000, 2.0, None), ("router", 10000, 2.0, None),
        ("ovs", 1000, 2.0, None), ("ovs", 10000, 2.0, None)]
    assert "1000 rules 2/s" in points[0].label
    with pytest.raises(UsageError, match="switch bridge: no rule-update mechanism"):
        parse_spec(RULE_SPEC.format(switches='["bridge"]'))


# -- the report's sections, from synthetic points (FIXTURES, NOT MEASUREMENTS) -------------------
def _stored(kind: str, params: dict, result: dict):
    from vswbench.results.store import StoredPoint

    return StoredPoint("f", "r", str(id(params)), kind, {"kind": kind, **params}, kind, "done",
                       result, None, None, "now")


def test_report_sections_from_fixture_points(tmp_path) -> None:
    from vswbench.report.functions import rule_update_plot
    from vswbench.report.functions import rule_update_rows
    from vswbench.report.functions import rule_update_tables
    from vswbench.report.functions import table_size_plot
    from vswbench.report.functions import table_size_points
    from vswbench.results.points import StoredResults

    points = [_stored("search", {"switch": "router", "scenario": "p2p", "size": 64,
                                 "preset": "quick",
                                 "options": {"function": "l3", "table_size": str(n)}},
                      {"ndr_pps": 100_000.0 / (1 + i)})
              for i, n in enumerate((100, 1000, 10000))]
    timing = {"mechanism": "nft transaction", "rules": 1000, "install_s": [0.02],
              "remove_s": [0.01], "install_median_s": 0.02, "remove_median_s": 0.01}
    phase = {"name": "quiet", "offered_pps": 5000.0, "tx_frames": 100, "lost": 1,
             "loss_ratio": 0.01, "latency_us": {"p50": 10.0, "p99": 20.0}, "updates": 0}
    points.append(_stored("rule-update", {"switch": "router", "scenario": "p2p", "size": 64,
                                          "rules": 1000, "update_rate": 2.0},
                          {"timings": [timing], "update_rules": 1000, "update_rate": 2.0,
                           "during": {"nft transaction": [phase]}}))
    data = StoredResults(tmp_path, tuple(points), ())
    curve = table_size_points(data)
    assert [q.x for q in curve] == [100, 1000, 10000]
    assert "function=l3" in curve[0].variant and "table_size" not in curve[0].variant
    assert table_size_plot(curve, lambda s: "C0") is not None
    rows, during = rule_update_rows(data)
    assert rows[0].rules == 1000 and rows[0].install_s == 0.02 and during[0].lost == 1
    assert rule_update_plot(rows, lambda s: "C0") is not None
    html = rule_update_tables(rows, during)
    assert "nft transaction" in html and "50,000" in html   # rules/s installed
