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
from vswbench.switches.functions import (L3_BASE, MAX_L3_TABLE, Function, acl_denied,
                                         l3_prefixes, longest_match, nft_acl, ovs_function_rules,
                                         parse_function, route_batch)


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
    assert problem and "cannot do function nat" in problem and "implements l2" in problem


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
