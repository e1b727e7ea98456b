"""The placement rule on more than 2 cores (measure/cores.py), with a made-up CPU count: every
engine's --cpu and every NAPI thread's core follow it, and 2 cores place as they always did."""
import pytest

from tests.unit.fake_testbed import wired_plan
from vswbench.engine.params import TrialParams as Traffic
from vswbench.errors import UsageError
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import make_placement
from vswbench.results.record import read_placement
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.base import Placement
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel import napi
from vswbench.testbed.plan import TestbedPlan

RID = RunId("vsb1a2b")
SCENARIOS = ["p2p", "pvp", "rr", "pairs:1", "pairs:2", "pairs:8", "chain:1", "chain:3"]

# today's placement on 2 cores (the values make_placement gave before the rule existed)
TWO_CORES = {"p2p": (0, 1, (1,)), "pvp": (0, 1, (1,)), "rr": (0, 1, (1,)),
             "pairs:1": (0, 1, (1,)), "pairs:2": (0, 1, (1,)), "pairs:8": (0, 1, (1,)),
             "chain:1": (0, 1, (1,)), "chain:3": (0, 1, (0, 1))}

# (cores, scenario) -> tester cores, switch cores, NF cores, for a kernel switch (bridge)
RULE = {
    (3, "pairs:1"): ((0,), (1, 2), (1,)),
    (3, "pairs:2"): ((0, 1), (2,), (2,)),
    (3, "pairs:8"): ((0, 1), (2,), (2,)),
    (3, "chain:1"): ((0,), (1,), (2,)),
    (3, "chain:3"): ((0,), (1,), (2,)),
    (4, "pairs:1"): ((0,), (1, 2, 3), (1,)),
    (4, "pairs:2"): ((0, 1), (2, 3), (2,)),
    (4, "pairs:8"): ((0, 1), (2, 3), (2,)),
    (4, "chain:1"): ((0,), (1, 2), (3,)),
    (4, "chain:3"): ((0,), (1,), (2, 3)),
    (16, "pairs:1"): ((0,), tuple(range(1, 16)), (1,)),
    (16, "pairs:2"): ((0, 1), tuple(range(2, 16)), (2,)),
    (16, "pairs:8"): (tuple(range(8)), tuple(range(8, 16)), (8,)),
    (16, "chain:1"): ((0,), tuple(range(1, 15)), (15,)),
    (16, "chain:3"): ((0,), tuple(range(1, 13)), (13, 14, 15)),
}


class _Kernel:
    name, l3, direct, port_kind = "fake", False, False, "kernel"


def _place(scenario: str, cpus: int, switch: str = "bridge", **flags) -> Placement:
    return make_placement(TrialOptions(switch, scenario, **flags), cpus=cpus)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_two_cores_as_before(scenario):
    t, sw, nf = TWO_CORES[scenario]
    for switch in ("bridge", "testpmd", "ovs"):
        p = _place(scenario, 2, switch)
        assert p == Placement(t, sw, nf)
        assert (p.tester_cpus, p.switch_cpus) == ((t,), (sw,))
        assert p.legacy() == {"tester_cpu": t, "switch_cpu": sw, "nf_cpus": list(nf)}


@pytest.mark.parametrize("key", sorted(RULE))
def test_rule(key):
    cpus, scenario = key
    tester, switch, nf = RULE[key]
    p = _place(scenario, cpus)
    assert (p.tester_cpus, p.switch_cpus, p.nf_cpus) == (tester, switch, nf)
    assert (p.tester_cpu, p.switch_cpu) == (tester[0], switch[0])


def test_polling_switch_keeps_one_core_and_gives_the_tester_the_rest():
    p = _place("pairs:8", 16, "testpmd")
    assert p.tester_cpus == tuple(range(8)) and p.switch_cpus == (8,)
    p = _place("pairs:8", 4, "ovs")
    assert p.tester_cpus == (0, 1, 2) and p.switch_cpus == (3,)
    assert _place("chain:3", 16, "ovs-dpdk").switch_cpus == (1,)


def _engine_cpus(plan: TestbedPlan) -> dict[str, int]:
    from tests.unit.fake_testbed import fake_wiring

    cmds = plan.engine_commands(fake_wiring(plan), Traffic(64, 10000, 1))
    out = {}
    for c in cmds:
        i = c.args.index("--cpu")
        out[c.label] = int(c.args[i + 1])
        assert c.cpu == out[c.label]
    return out


@pytest.mark.parametrize("cpus", [2, 3, 4, 16])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_engine_on_its_rule_core(cpus, scenario):
    p = _place(scenario, cpus)
    plan, _ = wired_plan(scenario, _Kernel, p, RID)
    got = _engine_cpus(plan)
    assert got == plan.engine_cpus()
    for label, cpu in got.items():
        if label[0] in "sr" and label[1:].isdigit():        # pair i: sender and receiver
            assert cpu == p.tester_cpus[(int(label[1:]) - 1) % len(p.tester_cpus)], label
        elif label.startswith("nf"):
            assert cpu == p.nf_cpus[(int(label[2:]) - 1) % len(p.nf_cpus)], label
        elif label == "server":
            assert cpu == p.nf_cpus[0]
        else:
            assert cpu == p.tester_cpu, label
    if cpus == 2:   # today's: every tester-side engine on core 0
        assert all(c == 0 for lab, c in got.items() if not lab.startswith(("nf", "server")))


@pytest.mark.parametrize("cpus", [3, 4, 16])
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("switch", ["bridge", "testpmd"])
def test_no_two_pollers_on_a_core_while_one_is_free(cpus, scenario, switch):
    p = _place(scenario, cpus, switch)
    plan, _ = wired_plan(scenario, _Kernel, p, RID)
    pollers: dict[int, int] = {}
    for label, cpu in plan.engine_cpus().items():
        if not label.startswith("r"):      # a receiver shares its sender's core by the rule
            pollers[cpu] = pollers.get(cpu, 0) + 1
    used = {*p.tester_cpus, *p.switch_cpus, *p.nf_cpus}
    if any(n > 1 for n in pollers.values()):
        assert used == set(range(cpus)), (p, pollers)
    assert not set(p.tester_cpus) & ({*p.switch_cpus, *p.nf_cpus})


@pytest.mark.parametrize("cpus", [2, 3, 4, 16])
@pytest.mark.parametrize("scenario", ["p2p", "pairs:2", "pairs:8", "chain:3"])
def test_napi_threads_round_robin_over_the_switch_cores(monkeypatch, cpus, scenario):
    pinned: dict[int, int] = {}
    monkeypatch.setattr(napi, "ethtool_k", lambda *a, **k: None)
    monkeypatch.setattr(napi, "write_sys", lambda *a, **k: None)
    monkeypatch.setattr(napi, "napi_thread_pids", lambda ifname: [1000 + int(ifname[3:])])
    monkeypatch.setattr(napi, "pin", lambda pid, cpu: pinned.__setitem__(pid, cpu))
    monkeypatch.setattr(napi, "make_fifo", lambda pid: None)
    p = _place(scenario, cpus)
    plan, _ = wired_plan(scenario, _Kernel, p, RID)
    ctx = SwitchContext(RID, CleanupRegistry(), RID.name("sw"), p)
    placed = napi.Placed()
    for i, _port in enumerate(plan.host_ports):      # a kernel switch places its ports in order
        napi.place_napi(ctx, ctx.netns, f"vsb{i}", placed)
    assert pinned == {1000 + i: p.switch_cpus[i % len(p.switch_cpus)]
                      for i in range(len(plan.host_ports))}
    if cpus == 2:
        assert set(pinned.values()) == {1} and placed.mode() == "napi-threaded cpu1 fifo"
    elif len(p.switch_cpus) > 1:
        assert placed.mode().startswith(f"napi-threaded cpu{p.switch_cpus[0]},")


def test_cpu_flags_keep_todays_rule_and_list_forms():
    assert _place("pairs:8", 16, tester_cpu=3) == Placement(3, 4, tuple(
        c for c in range(16) if c not in (3, 4)))
    p = _place("pairs:4", 16, tester_cpus="0-3", switch_cpus="4,5,8-9")
    assert p.tester_cpus == (0, 1, 2, 3) and p.switch_cpus == (4, 5, 8, 9)
    assert p.nf_cpus == (6, 7, *range(10, 16))
    assert _place("pairs:2", 4, tester_cpus="0-1").switch_cpus == (2,)


@pytest.mark.parametrize("flags, words", [
    ({"tester_cpus": "0-x"}, "is not a CPU or range"),
    ({"tester_cpus": ""}, "is not a CPU or range"),
    ({"switch_cpus": "5-2"}, "from low to high"),
    ({"switch_cpus": "2-20"}, "this machine has CPUs 0..15"),
    ({"tester_cpus": "0,1,1"}, "named twice"),
    ({"tester_cpus": "0-1", "tester_cpu": 0}, "give one of them"),
    ({"switch_cpus": "4", "switch_cpu": 4}, "give one of them"),
])
def test_bad_lists_are_usage_errors(flags, words):
    with pytest.raises(UsageError, match=words):
        _place("pairs:2", 16, **flags)


def test_stored_placement_reads_back_typed():
    p = _place("pairs:8", 16)
    import json
    from dataclasses import asdict
    back = read_placement(json.loads(json.dumps(asdict(p))))     # as a result file holds it
    assert back is not None and back.tester_cpus == tuple(range(8))
    assert back.switch_cpus == tuple(range(8, 16)) and back.tester_cpu == 0
    assert back.nf_cpus == (8,)
    old = read_placement({"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [1]})
    assert old is not None and (old.tester_cpus, old.switch_cpus) == ((0,), (1,))


def test_report_states_the_rule():
    from vswbench.report.backends import RULE as SAID
    from vswbench.report.backends import BackendInfo
    from vswbench.report.backends import placement_text as shown
    from vswbench.results.record import Placement as Stored
    many = shown(Stored(0, 8, (8,), tester_cpus=tuple(range(8)), switch_cpus=tuple(range(8, 16))))
    assert many == "tester cpu0-7, switch cpu8-15"
    assert shown(Stored(0, 1, (1,))) == "tester cpu0, switch cpu1"
    info = BackendInfo("bridge", "", "", "", (), (), (many,), ())
    assert SAID in info.where()
    assert SAID not in BackendInfo("bridge", "", "", "", (), (), ("tester cpu0, switch cpu1",),
                                   ()).where()


def test_trial_table_shows_the_cores_only_where_a_side_has_several():
    from dataclasses import asdict

    from vswbench.cli.trial import _cores_text
    assert _cores_text(asdict(_place("pairs:8", 2))) == ""
    assert _cores_text(asdict(_place("pairs:8", 16))) == "tester cpu0-7, switch cpu8-15"


@pytest.mark.parametrize("cpus, cores", [(2, [1, 1, 1, 1]), (16, [2, 3, 4, 5])])
def test_rps_round_robin_over_the_switch_cores(monkeypatch, cpus, cores):
    written: list[str] = []
    monkeypatch.setattr(napi, "write_sys", lambda ns, path, value: written.append(value))
    p = _place("pairs:2", cpus)
    ctx = SwitchContext(RID, CleanupRegistry(), RID.name("sw"), p)
    placed = napi.Placed()
    for i in range(4):
        napi.place_rps(ctx, ctx.netns, f"vsb{i}", placed)
    assert written == [format(1 << c, "x") for c in cores]
