"""The OVS studies without root: option checks, per-flow rules and their addresses, OVS's cache
statistics, the campaign and CLI refusing bad option values, the shipped specs."""

from pathlib import Path

import pytest

from vswbench.campaign.execute import plan_for
from vswbench.campaign.spec import load_spec
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import plan_trial
from vswbench.switches.catalog import all_switches
from vswbench.switches.ovs.rules import FlowSource
from vswbench.switches.ovs.rules import OvsOptions
from vswbench.switches.ovs.rules import RulePath
from vswbench.switches.ovs.rules import check_flow_range
from vswbench.switches.ovs.rules import flow_addresses
from vswbench.switches.ovs.rules import mac_plus
from vswbench.switches.ovs.rules import parse_ovs_options
from vswbench.switches.ovs.rules import rule_lines
from vswbench.switches.ovs.stats import datapath_stats

SPECS = Path(__file__).resolve().parents[2] / "specs"


# -- options -----------------------------------------------------------------------------------
def test_options_defaults_and_values() -> None:
    assert parse_ovs_options({}) == OvsOptions("p2p", "port", 1)
    opts = parse_ovs_options({"flow_table": "exact", "clones": "3"})
    assert opts.exact and opts.clones == 3
    assert parse_ovs_options({"ovs_mode": "normal"}).mode == "normal"


@pytest.mark.parametrize("options, message", [
    ({"clones": "0"}, "clones must be a whole number of output ports 1..8"),
    ({"clones": "9"}, "clones must be"), ({"clones": "two"}, "clones must be"),
    ({"clones": "2.0"}, "clones must be"),
    ({"flow_table": "bogus"}, "flow_table must be port .* or exact"),
    ({"ovs_mode": "learn"}, "ovs_mode must be one of p2p, normal"),
    ({"ovs_mode": "normal", "clones": "2"}, "ovs_mode=normal .* installs no rules"),
    ({"ovs_mode": "normal", "flow_table": "exact"}, "need the default ovs_mode=p2p")])
def test_bad_options_refused(options, message) -> None:
    with pytest.raises(UsageError, match=message):
        parse_ovs_options(options)
    for name in ("ovs", "ovs-afxdp", "ovs-dpdk"):
        with pytest.raises(UsageError, match=f"^{name}: "):
            all_switches()[name].check_options(options)


def test_dpdk_refuses_exact_and_clones_others_ignore_them() -> None:
    dpdk = all_switches()["ovs-dpdk"]
    for options in ({"flow_table": "exact"}, {"clones": "2"}):
        with pytest.raises(UsageError, match="kernel ports"):
            dpdk.check_options(options)
    dpdk.check_options({"clones": "1", "flow_table": "port"})
    all_switches()["bridge"].check_options({"clones": "0"})       # not a bridge option


def test_cli_and_campaign_refuse_before_building() -> None:
    with pytest.raises(UsageError, match="clones must be"):
        plan_trial(TrialOptions("ovs", "p2p", options={"clones": "0"}))
    with pytest.raises(UsageError, match="flow_table must be"):
        plan_trial(TrialOptions("ovs", "p2p", options={"flow_table": "bogus"}))
    spec = """[campaign]
name = "bad"
[[study]]
kind = "search"
switch = ["bridge", "ovs", "ovs-afxdp"]
options = [{clones = 0}, {flow_table = "bogus"}, {clones = 2}]
"""
    with pytest.raises(UsageError) as info:
        parse_spec(spec)
    text = str(info.value)
    assert "has 6 problems" in text
    assert "study 1, options: switch bridge does not read option clones" in text
    assert "study 1, options: ovs: clones must be" in text
    assert "study 1, options: ovs-afxdp: flow_table must be" in text


# -- addresses and rules -----------------------------------------------------------------------
def test_mac_plus_follows_the_engine() -> None:
    assert mac_plus("02:00:00:ff:ff:fe", 0) == "02:00:00:ff:ff:fe"
    assert mac_plus("02:00:00:ff:ff:fe", 1) == "02:00:00:ff:ff:ff"
    assert mac_plus("02:00:00:ff:ff:fe", 2) == "02:00:00:00:00:00"      # low 24 bits wrap
    assert mac_plus("AA:BB:CC:00:00:01", 255) == "aa:bb:cc:00:01:00"
    src = FlowSource("96:F8:3F:ff:ff:00", "198.18.1.1")
    got = list(flow_addresses(src, 1000))
    assert got[0] == ("96:f8:3f:ff:ff:00", "198.18.1.1")
    assert got[255] == ("96:f8:3f:ff:ff:ff", "198.18.2.0")
    assert all(mac == mac_plus(src.mac, i) for i, (mac, _) in enumerate(got))
    assert len({m for m, _ in got}) == len({a for _, a in got}) == 1000


def test_flow_range_stays_in_the_benchmark_net() -> None:
    check_flow_range("198.18.1.1", 100_000)                   # up to 198.19.135.160
    last_fit = int.from_bytes(bytes([198, 19, 255, 255]), "big") - \
        int.from_bytes(bytes([198, 18, 1, 1]), "big") + 1
    check_flow_range("198.18.1.1", last_fit)
    with pytest.raises(UsageError, match=r"198\.18\.1\.1\.\.198\.20\.0\.0, outside "
                                         r"198\.18\.0\.0/15"):
        check_flow_range("198.18.1.1", last_fit + 1)
    with pytest.raises(UsageError, match="outside"):
        check_flow_range("10.0.0.1", 1)


def test_rule_lines() -> None:
    port = list(rule_lines([RulePath(3, (2,))], 100))
    assert port == ["cookie=0x0,in_port=3,actions=output:2"]
    exact = list(rule_lines([RulePath(1, (2, 3, 4), FlowSource("02:00:00:00:00:01",
                                                                "198.18.1.1")),
                             RulePath(5, (1,))], 3))
    assert exact == [
        "cookie=0x1,in_port=1,ip,dl_src=02:00:00:00:00:01,nw_src=198.18.1.1,"
        "actions=output:2,output:3,output:4",
        "cookie=0x1,in_port=1,ip,dl_src=02:00:00:00:00:02,nw_src=198.18.1.2,"
        "actions=output:2,output:3,output:4",
        "cookie=0x1,in_port=1,ip,dl_src=02:00:00:00:00:03,nw_src=198.18.1.3,"
        "actions=output:2,output:3,output:4",
        "cookie=0x0,in_port=5,actions=output:1"]
    big = rule_lines([RulePath(1, (2,), FlowSource("02:00:00:00:00:01", "198.18.1.1"))],
                     100_000)
    assert sum(1 for _ in big) == 100_000
    with pytest.raises(UsageError, match="outside"):
        next(rule_lines([RulePath(1, (2,), FlowSource("02:00:00:00:00:01",
                                                      "198.19.255.0"))], 1000))


# -- OVS's own statistics (texts as OVS 3.1 printed them here) ---------------------------------
DPCTL = """netdev@ovs-netdev:
  lookups: hit:14000 missed:1000 lost:0
  flows: 1000
  port 0: ovs-netdev (tap)
"""
UPCALL = """netdev@ovs-netdev:
  flows         : (current 23468) (avg 23673) (max 25567) (limit 25000)
  dump duration : 16ms
  ufid enabled : true
"""
PMD = """main thread:
  packets received: 15000
  simple match hits: 0
  emc hits: 840
  smc hits: 0
  megaflow hits: 13160
  avg. subtable lookups per megaflow hit: 1.00
  miss with success upcall: 1000
  miss with failed upcall: 0
pmd thread numa_id 0 core_id 1:
  packets received: 5
  emc hits: 5
"""


def test_datapath_stats() -> None:
    stats = datapath_stats(DPCTL, PMD, UPCALL)
    assert stats["datapath_flows"] == 1000 and stats["lookups_hit"] == 14000
    assert stats["flow_limit"] == 25000 and stats["upcall_flows_max"] == 25567
    assert stats["dump_duration_ms"] == 16
    assert stats["cache"] == {"packets_received": 15005, "simple_match_hits": 0,
                              "emc_hits": 845, "smc_hits": 0,
                              "megaflow_hits": 13160, "miss_with_success_upcall": 1000,
                              "miss_with_failed_upcall": 0}
    assert datapath_stats("", "", "") == {}


# -- specs and the runner ----------------------------------------------------------------------
def test_shipped_specs() -> None:
    flows = load_spec(SPECS / "ovs-flows.toml").points()
    assert [p.flows for p in flows] == [1, 10, 100, 1000, 10_000, 100_000]
    assert {(p.switch, p.scenario, p.size, p.preset, p.options) for p in flows} == {
        ("ovs", "p2p", 64, "quick", (("flow_table", "exact"),))}
    clones = load_spec(SPECS / "ovs-cloning.toml").points()
    assert sorted((p.size, dict(p.options)["clones"]) for p in clones) == [
        (s, k) for s in (64, 1518) for k in ("1", "2", "3")]
    # the warm-up sends every flow once at 10 kpps
    assert plan_for(flows[-1]).trial.params.warmup == 10.0
    assert plan_for(flows[0]).trial.params.warmup == 1.0
