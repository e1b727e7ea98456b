"""Testbed planning without root: names, addresses, paths, engine command lines."""
import dataclasses
import ipaddress

import pytest

from tests.unit.fake_testbed import wired_plan
from vswbench.engine.params import TrialParams as Traffic
from vswbench.errors import VswbenchError
from vswbench.run.ids import RunId
from vswbench.scenario import Role
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.testbed.cores import host_cpu
from vswbench.testbed.plan import TestbedPlan
from vswbench.testbed.plan import Wiring
from vswbench.testbed.plan import host_abbr
from vswbench.testbed.plan import plan_paths
from vswbench.testbed.plan import plan_ports
from vswbench.testbed.plan import plan_testbed

RID = RunId("vsb1a2b")
SCENARIOS = ["p2p", "p2p-pair", "pvp", "chain:3", "chain:8", "pairs:2", "pairs:8", "rr"]


@pytest.mark.parametrize("spec", SCENARIOS)
@pytest.mark.parametrize("l3", [False, True])
def test_ports_unique_short_and_in_range(spec, l3):
    sc = parse(spec)
    ports = plan_ports(sc, RID, l3=l3)
    assert [p.key for p in ports] == sc.port_keys()
    assert len({p.ifname for p in ports}) == len(ports)
    assert all(len(p.ifname) <= 15 and p.ifname.startswith("vsb1a2b") for p in ports)
    assert all(p.netns.startswith("vsb1a2b") for p in ports)
    ips = [ipaddress.ip_interface(p.ip_cidr) for p in ports]
    assert len({i.ip for i in ips}) == len(ips)
    assert all(i.ip in ipaddress.ip_network("198.18.0.0/15") for i in ips)
    if l3:
        assert all(i.network.prefixlen == 24 and str(i.ip).endswith(".2") for i in ips)
        assert len({i.network for i in ips}) == len(ips)
    else:
        assert {i.network for i in ips} == {ipaddress.ip_network("198.18.0.0/16")}


def test_names():
    assert host_abbr("tester") == "t" and host_abbr("nf3") == "n3" and host_abbr("s2") == "s2"
    ports = plan_ports(parse("pvp"), RID, l3=False)
    assert [p.ifname for p in ports] == ["vsb1a2btp0", "vsb1a2btp1", "vsb1a2bn1p0", "vsb1a2bn1p1"]
    assert ports[2].netns == "vsb1a2bnf1"


def test_paths_follow_hops_and_dedupe():
    assert [(p.src, p.dst) for p in plan_paths(parse("pvp"))] == [
        ("tester.p0", "nf1.in"), ("nf1.out", "tester.p1")]
    assert len(plan_paths(parse("rr"))) == 2


def test_cpu_placement():
    pl = Placement(0, 1, (1, 2))
    assert host_cpu(pl, Role.TESTER, 0) == 0
    assert host_cpu(pl, Role.NF, 1) == 1 and host_cpu(pl, Role.NF, 2) == 2
    assert host_cpu(pl, Role.NF, 3) == 1
    assert host_cpu(pl, Role.SERVER, 0) == 1


class _L2:
    name, l3, direct, port_kind = "fake", False, False, "kernel"


PLACEMENT = Placement(0, 1, (1,))


def _wired(spec: str, placement: Placement = PLACEMENT,
           **options: str) -> tuple[TestbedPlan, Wiring]:
    """A plan and a made-up wiring (no kernel)."""
    return wired_plan(spec, _L2, placement, RID, options)


def _commands(spec: str, traffic: Traffic, placement: Placement = PLACEMENT,
              **options: str) -> dict:
    plan, wiring = _wired(spec, placement, **options)
    return {c.label: c for c in plan.engine_commands(wiring, traffic)}


def _arg(args, flag):
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_pvp_commands():
    plan, tb = _wired("pvp")
    cmds = {c.label: c for c in plan.engine_commands(tb, Traffic(64, 10000, 2))}
    loop, fwd = cmds["tester"].args, cmds["nf1"].args
    assert loop[0] == "loop" and _arg(loop, "--port") == ["vsb1a2btp0", "vsb1a2btp1"]
    assert _arg(loop, "--dst-mac") == [tb.ports["nf1.in"].mac]
    assert _arg(loop, "--dst-ip") == ["198.18.1.2"]          # the tester's p1, the final target
    assert _arg(loop, "--cpu") == ["0"] and _arg(loop, "--netns") == ["vsb1a2btester"]
    assert fwd[0] == "fwd" and "--rewrite-mac" in fwd
    # engine: one --dst-mac per port in --port order: in -> back to the tester's p0, out -> p1
    assert _arg(fwd, "--dst-mac") == [tb.ports["tester.p0"].mac, tb.ports["tester.p1"].mac]
    assert _arg(fwd, "--cpu") == ["1"] and cmds["nf1"].long_running
    assert not cmds["tester"].long_running


def test_pairs_split_rate_and_streams():
    plan, tb = _wired("pairs:2")
    cmds = {c.label: c for c in plan.engine_commands(tb, Traffic(64, 10000, 2))}
    assert [cmds[s].args[0] for s in ("s1", "r1", "s2", "r2")] == ["gen", "sink", "gen", "sink"]
    assert _arg(cmds["s1"].args, "--rate") == ["5000"]
    assert _arg(cmds["s1"].args, "--stream-id") == ["1"]
    assert _arg(cmds["s2"].args, "--stream-id") == ["2"]
    assert _arg(cmds["s2"].args, "--dst-ip") == [tb.ports["r2.p0"].ip]


def test_rr_commands():
    cmds = _commands("rr", Traffic(64, 1000, 2))
    assert cmds["client"].args[0] == "loop" and _arg(cmds["client"].args, "--port") == ["vsb1a2bcp0"]
    assert cmds["server"].args[0] == "reflect" and "--no-busy-poll" in cmds["server"].args


def test_nf_engines_sharing_a_core_do_not_busy_poll():
    # nf1 and nf2 share CPU 1, nf3 the tester's
    cmds = _commands("chain:3", Traffic(64, 10000, 2), Placement(0, 1, (1, 1, 0)))
    assert all("--no-busy-poll" in cmds[n].args for n in ("nf1", "nf2", "nf3"))
    assert _arg(cmds["nf1"].args, "--ring") == ["8192"]
    cmds = _commands("pvp", Traffic(64, 10000, 2))   # the NF alone on its core polls
    assert "--no-busy-poll" not in cmds["nf1"].args


@pytest.mark.parametrize("mode,polls", [("sleep", [False, False]), ("busy", [True, True]),
                                        ("auto", [True, False])])
def test_option_nf_poll_decides_for_every_nf(mode, polls):
    """nf_poll=sleep: the NFs sleep at every chain length, also alone on a core (chain:1);
    busy: they poll even when sharing one; auto: chain:1's NF alone polls, chain:2's share."""
    seen = []
    for spec in ("pvp", "chain:2"):
        cmds = _commands(spec, Traffic(64, 10000, 2), nf_poll=mode)
        seen.append("--no-busy-poll" not in cmds["nf1"].args)
    assert seen == polls


class _Dpdk(_L2):
    port_kind = "dpdk"


def test_dpdk_network_functions_cannot_sleep():
    from vswbench.errors import UsageError

    with pytest.raises(UsageError, match="DPDK engines, which always poll"):
        plan_testbed(parse("pvp"), _Dpdk, RID, options={"nf_poll": "sleep"})


def test_dpdk_engines_do_not_linger_for_the_switch():
    """With a DPDK switch every engine's memif peer is the switch, which stays: no engine waits
    at its end for that peer to leave (VSB_DPDK_LINGER=0); servers report ready before their
    peers exist (VSB_DPDK_LINK_WAIT=0)."""
    plan, tb = wired_plan("pvp", _Dpdk, Placement(0, 1, (1,)), RID)
    cmds = {c.label: c for c in plan.engine_commands(tb, Traffic(64, 10000, 2))}
    assert dict(cmds["tester"].env) == {"VSB_DPDK_LINGER": "0"}
    assert dict(cmds["nf1"].env) == {"VSB_DPDK_LINK_WAIT": "0", "VSB_DPDK_LINGER": "0"}
    assert all(not c.env for c in _commands("pvp", Traffic(64, 10000, 2)).values())


# -- the plan as a value ------------------------------------------------------------------------
def test_the_plan_says_what_will_be_built():
    plan = plan_testbed(parse("chain:2"), _L2, RID, Placement(0, 1, (1, 0)))
    assert plan.switch_ns == "vsb1a2bsw"
    assert plan.host_namespaces == ("vsb1a2btester", "vsb1a2bnf1", "vsb1a2bnf2")
    assert [p.key for p in plan.host_ports] == parse("chain:2").port_keys()
    assert plan.paths == tuple(plan_paths(parse("chain:2")))
    assert plan.nf == "fwd" and plan.built_nfs == () and plan.bridged_hosts == ()
    assert plan.long_running_hosts == {"nf1", "nf2"}
    assert plan.engine_cpus() == {"tester": 0, "nf1": 1, "nf2": 0}
    assert not plan.dpdk and plan.gateway_ports == ()
    with pytest.raises(AttributeError):
        plan.nf = "router"  # type: ignore[misc]    # frozen


class _Veth(_L2):
    name, direct = "veth", True


def test_ovs_elements_are_planned_as_bridges_in_the_switch_namespace():
    plan = plan_testbed(parse("chain:2"), _Veth, RID, Placement(0, 1, (0, 0)), {"nf": "ovs"})
    assert plan.bridged_hosts == ("nf1", "nf2") and plan.built_nfs == ("nf1", "nf2")
    assert plan.host_namespaces == ("vsb1a2btester",)
    assert plan.placement == Placement(0, 1, (1,))          # ovs-vswitchd on the switch CPU
    assert plan.engine_cpus() == {"tester": 0}


class _L3(_L2):
    l3 = True


def test_l3_engines_send_to_the_gateway():
    plan, wiring = wired_plan("pvp", _L3, Placement(0, 1, (1,)), RID)
    assert plan.gateway_ports == ("tester.p0", "nf1.out", "nf1.in")
    cmds = {c.label: c for c in plan.engine_commands(wiring, Traffic(64, 10000, 2))}
    gw = wiring.gateway_macs
    assert _arg(cmds["tester"].args, "--dst-mac") == [gw["tester.p0"]]
    assert _arg(cmds["nf1"].args, "--dst-mac") == [gw["nf1.in"], gw["nf1.out"]]
    with pytest.raises(VswbenchError, match="no gateway MAC for tester.p0"):
        plan.engine_commands(Wiring(wiring.ports), Traffic(64, 10000, 2))


def test_the_drivers_skip_their_gaps_only_where_the_tester_has_its_core_alone():
    plan, tb = _wired("p2p")
    tester = {c.label: c for c in plan.engine_commands(tb, Traffic(64, 10000, 2),
                                                        tester_gap_us=100.0)}["tester"]
    assert _arg(tester.args, "--gap-us") == ["100"]
    assert "--gap-us" not in {c.label: c for c in plan.engine_commands(
        tb, Traffic(64, 10000, 2))}["tester"].args               # not asked: catch up
    shared, tb2 = _wired("p2p", Placement(0, 0, (0,)))           # the switch on the tester's core
    assert "--gap-us" not in {c.label: c for c in shared.engine_commands(
        tb2, Traffic(64, 10000, 2), tester_gap_us=100.0)}["tester"].args


@pytest.mark.parametrize("smaller,larger_with_n_1", [("p2p-pair", "pairs:1"), ("pvp", "chain:1")])
def test_smaller_scenarios_are_the_larger_ones_with_fewer_n(smaller, larger_with_n_1):
    """p2p-pair is pairs:1 and pvp is chain:1 but for their names: the same hosts, ports, hops
    and streams, so the same plan. The integration matrix runs pairs:2 and chain:3 for them."""
    a, b = parse(smaller), parse(larger_with_n_1)
    assert dataclasses.replace(a, name=b.name) == b     # parse("chain:1") is even named pvp
    assert a.port_keys() == b.port_keys()
    assert plan_ports(a, RID, l3=False) == plan_ports(b, RID, l3=False)
    assert plan_paths(a) == plan_paths(b)
