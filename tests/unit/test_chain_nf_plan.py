"""Chain elements built three ways (option nf of the veth backend, switches/chain/nf.py): validation,
planning, per-element counters and the parsers, without root (no kernel object is created)."""
import pytest

from tests.unit.fake_testbed import wired_plan
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.engine.params import TrialParams as Traffic
from vswbench.errors import UsageError
from vswbench.host.netns import LinkCounters
from vswbench.models.chain_data import from_points
from vswbench.models.chain_data import layout_of
from vswbench.models.chain_layout import Layout
from vswbench.results.record import Measured
from vswbench.results.record import measured_of
from vswbench.results.store import StoredPoint
from vswbench.run.ids import RunId
from vswbench.scenario import parse
from vswbench.switches.base import Attachment
from vswbench.switches.base import Placement
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.chain import nf as chain_nf
from vswbench.switches.chain.ovs import bridge_commands
from vswbench.switches.chain.ovs import parse_dpctl_ports
from vswbench.switches.chain.ovs import parse_interfaces
from vswbench.switches.chain.router import plan_elements
from vswbench.testbed.plan import plan_paths
from vswbench.testbed.plan import plan_ports

RID = RunId("vsb1a2b")


def result(r: dict) -> Measured:
    """A stored result dict as the chain model reads it (record.Measured)."""
    return measured_of("search", r)


# -- bad input: exit 2, nothing created --------------------------------------------------------
@pytest.fixture
def nothing_created(monkeypatch):
    import vswbench.run.scope

    def no_run(*a, **k):
        raise AssertionError("nothing may be created for bad input")

    monkeypatch.setattr(vswbench.run.scope, "run_scope", no_run)


@pytest.mark.parametrize("argv, needles", [
    (["--switch", "bridge", "--scenario", "chain:3", "--option", "nf=ovs"],
     ["option nf=ovs needs switch veth", "use switch veth"]),
    (["--switch", "ovs", "--scenario", "pvp", "--option", "nf=router"],
     ["option nf=router needs switch veth"]),
    (["--switch", "veth", "--scenario", "chain:2", "--option", "nf=bogus"],
     ["option nf='bogus'", "fwd, router, ovs"]),
    (["--switch", "veth", "--scenario", "p2p", "--option", "nf=router"],
     ["applies to scenarios with network functions", "chain:N"]),
    (["--switch", "veth", "--scenario", "chain:2", "--option", "nf_poll=lazy"],
     ["option nf_poll='lazy'", "auto", "busy", "sleep"]),
    (["--switch", "veth", "--scenario", "chain:2", "--option", "nf=router",
      "--option", "nf_poll=sleep"], ["nf_poll applies to fwd engines", "leave nf_poll out"]),
    (["--switch", "bridge", "--scenario", "p2p", "--option", "nf_poll=busy"],
     ["nf_poll applies to scenarios with network functions"]),
])
def test_bad_combinations_exit_2(capsys, nothing_created, argv, needles):
    code = cli.main(["trial", *argv])
    captured = capsys.readouterr()
    text = " ".join((captured.out + captured.err).split())   # rich wraps long lines
    assert code == 2, text
    assert all(n in text for n in needles), text
    assert "Traceback" not in text


def test_campaign_reports_bad_nf_per_study():
    spec = ('[campaign]\nname = "c"\n[[study]]\nkind = "search"\nswitch = ["veth", "bridge"]\n'
            'scenario = "chain"\nchain = [1, 2]\noptions = {nf = "router"}\n'
            '[[study]]\nkind = "search"\nswitch = "veth"\noptions = {nf = "bogus"}\n'
            '[[study]]\nkind = "search"\nswitch = "veth"\nscenario = "pvp"\n'
            'options = {nf_poll = "never"}\n')
    with pytest.raises(UsageError) as e:
        parse_spec(spec)
    text = str(e.value)
    assert "study 3, options: option nf_poll='never'" in text
    assert "study 1, options: option nf=router needs switch veth" in text
    assert "study 2, options: option nf='bogus'" in text
    good = parse_spec('[campaign]\nname = "c"\n[[study]]\nkind = "search"\nswitch = "veth"\n'
                      'scenario = "chain"\nchain = [1, 3]\noptions = [{nf = "router"}, '
                      '{nf = "ovs"}, {}]\n')
    assert len(good.points()) == 6


def test_kind_and_placement():
    assert chain_nf.nf_kind({}) == "fwd" and chain_nf.nf_kind({"nf": "ovs"}) == "ovs"
    assert chain_nf.nf_kind({"nf": "ovs-afxdp"}) == "ovs-afxdp"
    with pytest.raises(UsageError, match="expected one of fwd, router, ovs, ovs-afxdp"):
        chain_nf.nf_kind({"nf": "OVS"})     # exact, as the point keys and model groups are
    pl = Placement(0, 1, (0, 1))
    assert chain_nf.effective_placement("ovs", pl) == Placement(0, 1, (1,))
    assert chain_nf.effective_placement("ovs-afxdp", pl) == Placement(0, 1, (1,))
    assert chain_nf.ports_in_switch_namespace("ovs-afxdp")
    assert chain_nf.effective_placement("router", pl) == pl
    assert pl.nf_cpu(1) == 0 and pl.nf_cpu(2) == 1 and pl.nf_cpu(3) == 0
    assert Placement(0, 1, ()).nf_cpu(2) == 1


# -- planning ------------------------------------------------------------------------------------
def test_ovs_elements_live_in_the_switch_namespace():
    sc = parse("chain:3")
    ports = {p.key: p for p in plan_ports(sc, RID, l3=False,
                                          in_switch=frozenset(chain_nf.nf_hosts(sc)))}
    assert ports["nf2.in"].netns == "vsb1a2bsw" and ports["nf2.in"].ip_cidr == ""
    assert ports["tester.p0"].netns == "vsb1a2btester" and ports["tester.p0"].ip_cidr
    assert len({p.ifname for p in ports.values()}) == len(ports)


class _Veth:
    name, l3, direct, port_kind = "veth", False, True, "kernel"


def _commands(spec: str, nf: str) -> list:
    plan, wiring = wired_plan(spec, _Veth, Placement(0, 1, (0, 1)), RID, {"nf": nf})
    return plan.engine_commands(wiring, Traffic(64, 10000, 2))


@pytest.mark.parametrize("nf", ["router", "ovs", "ovs-afxdp"])
def test_no_engine_runs_for_built_elements(nf):
    cmds = _commands("chain:3", nf)
    assert [c.label for c in cmds] == ["tester"]
    fwd = _commands("chain:3", "fwd")
    assert [c.label for c in fwd] == ["tester", "nf1", "nf2", "nf3"]


def test_router_elements_route_to_the_tester_via_the_next_hop():
    sc = parse("chain:3")
    ports = plan_ports(sc, RID, l3=False)
    atts = {hp.key: Attachment(hp, None, host_mac=f"02:00:00:00:00:{i:02x}")
            for i, hp in enumerate(ports)}
    ctx = SwitchContext(RID, None, "vsb1a2bsw", Placement(0, 1, (0, 1)))  # type: ignore[arg-type]
    elements = plan_elements(chain_nf.nf_hosts(sc), plan_paths(sc), atts, ctx)
    p1 = atts["tester.p1"].host.ip_cidr.split("/")[0]
    assert [e.destination for e in elements] == [p1, p1, p1]
    assert [e.next_mac for e in elements] == [atts["nf2.in"].host_mac, atts["nf3.in"].host_mac,
                                              atts["tester.p1"].host_mac]
    assert [e.cpu for e in elements] == [0, 1, 0]
    assert elements[1].in_if == atts["nf2.in"].host.ifname and elements[1].netns == "vsb1a2bnf2"


# -- per-element counters (Raumer Fig. 5) --------------------------------------------------------
def _lc(rx=0, tx=0, rx_drop=0, tx_drop=0):
    return LinkCounters(rx, tx, rx * 60, tx * 60, rx_drop, tx_drop)


def test_element_counters_attribute_drops_to_elements():
    sc = parse("chain:2")
    delta = {"tester.p0": _lc(tx=1000, tx_drop=50), "nf1.in": _lc(rx=1000),
             "nf1.out": _lc(tx=900, tx_drop=30), "nf2.in": _lc(rx=900, rx_drop=2),
             "nf2.out": _lc(tx=880), "tester.p1": _lc(rx=880)}
    got = chain_nf.element_counters(sc, "router", delta, {}, [], [])
    # nf1: 1000 in, 900 out, 30 refused by nf2, so 70 lost inside; the tester's tx_dropped are
    # resent by AF_PACKET and never count
    assert got["nf1"] == {"rx_packets": 1000, "tx_packets": 900, "input_dropped": 0,
                          "lost_inside": 70, "output_dropped": 30, "dropped": 70,
                          "switch_rx_dropped": 0, "switch_tx_dropped": 0}
    assert got["nf2"]["input_dropped"] == 32 and got["nf2"]["lost_inside"] == 20
    fwd = chain_nf.element_counters(sc, "fwd", delta, {}, [], [])
    assert fwd["nf2"]["input_dropped"] == 2          # engines resend: their tx_dropped is no loss


def test_element_counters_read_ovs_bridge_ports():
    sc = parse("pvp")
    delta = {"tester.p0": _lc(tx=10), "nf1.in": _lc(rx=10), "nf1.out": _lc(tx=10),
             "tester.p1": _lc(rx=10)}
    names = {"nf1.in": "vsb1a2bn1p0", "nf1.out": "vsb1a2bn1p1"}
    before = [PortCounters("ovs:vsb1a2bn1p0", rx_dropped=3)]
    after = [PortCounters("ovs:vsb1a2bn1p0", rx_dropped=7),
             PortCounters("ovs:vsb1a2bn1p1", tx_dropped=1), PortCounters("vsb1a2bn1p0")]
    got = chain_nf.element_counters(sc, "ovs", delta, names, before, after)["nf1"]
    assert (got["switch_rx_dropped"], got["switch_tx_dropped"]) == (4, 1)


# -- OVS parsers -----------------------------------------------------------------------------------
DPCTL = """netdev@ovs-netdev:
  lookups: hit:74661 missed:3 lost:0
  flows: 3
  port 0: ovs-netdev (tap)
    RX packets:0 errors:0 dropped:0 overruns:0 frame:0
    TX packets:0 errors:0 dropped:0 aborted:0 carrier:0
  port 1: vsb1b03n1p1
    RX packets:5 errors:1 dropped:2 overruns:0 frame:0
    TX packets:24888 errors:0 dropped:7 aborted:0 carrier:0
    collisions:0
    RX bytes:0  TX bytes:1144848 (1.1 MiB)
  port 2: vsb1b03n1p0
    RX packets:24888 errors:0 dropped:0 overruns:0 frame:0
    TX packets:? errors:? dropped:? aborted:? carrier:?
"""


def test_parse_dpctl_ports():
    ports = parse_dpctl_ports(DPCTL)
    assert set(ports) == {"ovs-netdev", "vsb1b03n1p1", "vsb1b03n1p0"}
    p = ports["vsb1b03n1p1"]
    assert (p.rx_packets, p.rx_errors, p.rx_dropped, p.tx_packets, p.tx_dropped) == \
        (5, 1, 2, 24888, 7)
    assert ports["vsb1b03n1p0"].rx_packets == 24888 and ports["vsb1b03n1p0"].tx_packets == 0


def test_parse_interfaces_and_bridge_commands():
    text = ('{"data":[["a",1,["set",[]]],["b",["set",[]],"could not open network device b"]],'
            '"headings":["name","ofport","error"]}')
    assert parse_interfaces(text) == {"a": (1, ""), "b": (None, "could not open network device b")}
    args = bridge_commands([("vsb1a2bbr1", "i1", "o1")])
    assert args[:4] == ["--", "add-br", "vsb1a2bbr1", "--"]
    assert "datapath_type=netdev" in args and "fail_mode=secure" in args
    assert "ofport_request=1" in args and "ofport_request=2" in args
    assert not [a for a in args if a.startswith("type=")]      # system ports
    afxdp = bridge_commands([("vsb1a2bbr1", "i1", "o1"), ("vsb1a2bbr2", "i2", "o2")], "afxdp")
    assert afxdp.count("type=afxdp") == 4                      # every port of every bridge


# -- the cost model fits each NF kind on its own ------------------------------------------------
def _search(nf: str, n: int, ndr: float, mode: str) -> StoredPoint:
    params = {"kind": "search", "switch": "veth", "scenario": f"chain:{n}", "size": 64,
              "placement": "pbp", "options": {"nf": nf} if nf != "fwd" else None}
    result = {"ndr_pps": ndr, "forwarding_mode": mode, "tsc_hz": 2.5e9,
              "placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [0, 1]}}
    return StoredPoint("c", "r", f"{nf}{n}", f"{nf} {n}", params, "search", "done", result,
                       None, None, "now")


def test_model_groups_by_nf_kind():
    per_element = "per-element napi-threaded (nf cpus 0,1)"
    assert layout_of(result({"placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [0, 1]},
                             "forwarding_mode": per_element}), 2) == Layout(0, (0, 1), None)
    ovs = {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [1]}
    assert layout_of(result({"placement": ovs, "forwarding_mode": "ovs-vswitchd pinned cpu1, "
                             "links napi-threaded cpu1"}), 2) == Layout(0, (1, 1), 1)
    assert layout_of(result({"placement": ovs, "forwarding_mode": "ovs-vswitchd pinned cpu1, "
                             "links sender-softirq"}), 2) == Layout(0, (1, 1), None)
    data = from_points([_search("fwd", 1, 2e5, "napi-threaded cpu1"),
                        _search("fwd", 2, 1e5, "napi-threaded cpu1"),
                        _search("router", 1, 3e5, per_element),
                        _search("router", 2, 2e5, per_element)])
    groups = {o.group for o in data.observations}
    assert groups == {("veth", "fwd", 64, True), ("veth", "router", 64, False)}
    from vswbench.models.chain_analysis import analyze

    done, failed = analyze(data)
    assert not failed and sorted(a.model.label for a in done) == [
        "veth 64 B (links on a switch core)", "veth nf=router 64 B"]
    assert {a.model.nf for a in done} == {"fwd", "router"}


def test_latency_points_give_the_breakdown_near_saturation():
    per_element = "per-element napi-threaded (nf cpus 0,1)"
    point = {"offered_pps": 9e4, "achieved_pps": 9e4, "cycles_per_packet": 30000.0,
             "cycles_per_packet_by_process": {"tester": 12000.0, "nf1": 7000.0, "nf2": 8000.0},
             "cpu": {"0": {"busy_s": 1.0}, "1": {"busy_s": 0.5}}}
    p = _search("router", 2, 1e5, per_element)
    lat = StoredPoint("c", "r", "lat2", "lat 2", {**p.params, "kind": "latency"}, "latency",
                      "done", {**p.result, "points": [point]}, None, None, "now")
    data = from_points([p, lat])
    (b,) = data.breakdowns
    assert b.group == ("veth", "router", 64, False)
    assert (b.tester, b.vnf, b.outside) == (12000.0, (7000.0, 8000.0), 3000.0)


def test_router_and_ovs_are_calibrated_on_the_tester_alone():
    sc, pl = parse("chain:4"), Placement(0, 1, (0, 0, 1, 1))
    assert chain_nf.calibration_target({}, sc, pl) == (sc, pl)
    # a fwd chain on the baseline switch is what is measured: the tester alone is the ceiling
    base_sc, base_pl = chain_nf.calibration_target({}, sc, pl, on_baseline=True)
    assert base_sc.name == "p2p" and base_pl.nf_cpus == ()
    cal_sc, cal_pl = chain_nf.calibration_target({"nf": "router"}, sc, pl)
    assert cal_sc.name == "p2p" and cal_pl == Placement(0, 1, ())


def test_the_chains_campaign_parses():
    from pathlib import Path

    from vswbench.campaign.spec import load_spec

    spec = load_spec(Path(__file__).parents[2] / "specs" / "chains.toml")
    points = spec.points()
    kinds = {dict(p.options).get("nf", "fwd") for p in points}
    assert kinds == {"fwd", "router", "ovs"}
    for nf in kinds:
        lengths = {p.scenario for p in points if p.kind == "search"
                   and dict(p.options).get("nf", "fwd") == nf}
        assert lengths == {"pvp", *(f"chain:{n}" for n in range(2, 11))}, nf


def test_campaign_refuses_sleeping_dpdk_network_functions():
    with pytest.raises(UsageError, match="study 1, options: option nf_poll=sleep: with switch "
                                         "testpmd the network functions are DPDK engines"):
        parse_spec('[campaign]\nname = "c"\n[[study]]\nkind = "search"\nswitch = "testpmd"\n'
                   'scenario = "pvp"\noptions = {nf_poll = "sleep"}\n')
