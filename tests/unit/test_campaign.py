"""campaign.py: spec validation (every mistake named by study and key), expansion, keys, suites."""
import pytest

from vswbench.campaign.point import Point
from vswbench.campaign.point import search_twin
from vswbench.campaign.spec import BUILTIN
from vswbench.campaign.spec import builtin
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import load_spec
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.switches.catalog import all_switches
from vswbench.switches.catalog import calibration_switches

(CALIBRATION_SWITCH,) = calibration_switches()   # shaped

HEAD = '[campaign]\nname = "t"\n'


def spec(study: str, head: str = HEAD) -> str:
    return head + "[[study]]\n" + study


def problems(text: str) -> str:
    with pytest.raises(UsageError) as e:
        parse_spec(text)
    assert e.value.exit_code == 2
    return str(e.value)


def test_valid_spec_expands_to_product_in_order() -> None:
    s = parse_spec(spec('kind = ["search", "latency"]\nswitch = ["bridge", "veth"]\n'
                        'size = [64, 1518]\nfractions = [90]\nflows = 2\n'))
    pts = expand(s)
    assert [(p.switch, p.size, p.kind) for p in pts] == [
        ("bridge", 64, "search"), ("bridge", 64, "latency"),
        ("bridge", 1518, "search"), ("bridge", 1518, "latency"),
        ("veth", 64, "search"), ("veth", 64, "latency"),
        ("veth", 1518, "search"), ("veth", 1518, "latency")]
    search, latency = pts[0], pts[1]
    assert search.fractions is None and search.duration is None and search.preset == "fast"
    assert latency.fractions == (0.9,) and latency.duration == 5.0
    assert all(p.flows == 2 and p.scenario == "p2p" and p.rate is None for p in pts)
    assert search.label == "search bridge p2p 64B flows=2"
    assert search_twin(latency).key == search.key


def test_scalars_rates_chains_and_repetitions() -> None:
    s = parse_spec(spec('kind = "trial"\nswitch = "bridge"\nscenario = "chain"\nchain = [1, 3]\n'
                        'rate = ["100k", 2500]\nrepetitions = 2\n'
                        'options = { bridge_fdb = "learn", kernel_mode = "napi" }\n'))
    pts = expand(s)
    assert len(pts) == 2 * 2 * 2
    assert [p.scenario for p in pts[:4]] == ["pvp", "pvp", "chain:3", "chain:3"]
    assert [p.rate for p in pts[:2]] == [100_000.0, 2500.0]
    assert [p.repetition for p in pts] == [0] * 4 + [1] * 4
    assert pts[0].options == (("bridge_fdb", "learn"), ("kernel_mode", "napi"))
    assert pts[4].label.endswith("#2")


def test_keys_stable_distinct_and_shared_across_studies() -> None:
    text = spec('kind = "search"\nswitch = ["bridge", "veth"]\nsize = [64, 512]\n')
    a, b = expand(parse_spec(text)), expand(parse_spec(text))
    assert [p.key for p in a] == [p.key for p in b]
    assert len({p.key for p in a}) == len(a) == 4
    # the same parameters give the same key, independent of order in the file and of defaults
    c = expand(parse_spec(spec('size = 64\nswitch = "bridge"\nkind = ["search"]\nflows = 1\n')))
    assert c[0].key == a[0].key
    assert a[0].key == Point("search", "bridge", "p2p", 64, None, 1, 1, "default", "fast", None,
                             None, None, "auto", (), None, None, None).key
    # a point produced by two studies is measured once
    both = parse_spec(text + "[[study]]\nkind = \"search\"\nswitch = \"bridge\"\n")
    assert len(expand(both)) == 4
    # repetition 0 keeps its key when repetitions grow
    more = expand(parse_spec(text + "repetitions = 3\n"))
    assert [p.key for p in more[:4]] == [p.key for p in a]


def test_shape_pps_only_for_shaped_points() -> None:
    pts = expand(parse_spec(spec('kind = "search"\nswitch = ["bridge", "shaped"]\n'
                                 'shape_pps = ["100k", "200k"]\n')))
    assert [(p.switch, p.shape_pps) for p in pts] == [
        ("bridge", None), ("shaped", 100_000.0), ("shaped", 200_000.0)]


def test_star_means_every_switch_but_calibration_and_the_container_networks() -> None:
    pts = expand(parse_spec(spec('kind = "search"\nswitch = "*"\n')))
    networks = {n for n, cls in all_switches().items() if cls.container_network}
    assert {"cni-bridge", "docker-bridge"} <= networks and "bridge" not in networks
    assert {p.switch for p in pts} == set(all_switches()) - {CALIBRATION_SWITCH} - networks


BAD = [
    ('kind = "search"\nswitch = "bridge"\nsise = 64\n', "study 1, unknown key 'sise'",
     "did you mean 'size'"),
    ('kind = "search"\nswitch = "brige"\n', "study 1, switch", "did you mean 'bridge'"),
    ('kind = "serch"\nswitch = "bridge"\n', "study 1, kind", "did you mean 'search'"),
    ('kind = "search"\nswitch = "bridge"\nscenario = "star"\n', "study 1, scenario", "unknown"),
    ('kind = "search"\nswitch = "bridge"\nscenario = "chain:99"\n', "study 1, scenario", "1..10"),
    ('kind = "search"\nswitch = "bridge"\npreset = "slow"\n', "study 1, preset", "fast"),
    ('kind = "search"\nswitch = "bridge"\nsize = 9019\n', "study 1, size", "64..9018"),
    ('kind = "search"\nswitch = "bridge"\nsize = "64"\n', "study 1, size", "not a frame size"),
    ('kind = "search"\nswitch = "bridge"\nflows = 0\n', "study 1, flows", "out of range 1..1000000"),
    ('kind = "search"\nswitch = "bridge"\nburst = 1.5\n', "study 1, burst", "whole number"),
    ('kind = "search"\nswitch = "bridge"\nflows = true\n', "study 1, flows", "whole number"),
    ('kind = "search"\nswitch = "bridge"\nsize = []\n', "study 1, size", "empty list"),
    ('kind = "search"\nswitch = "bridge"\nrepetitions = [2]\n', "study 1, repetitions",
     "not a list"),
    ('kind = "search"\nswitch = "bridge"\nrepetitions = 0\n', "study 1, repetitions", "range"),
    ('kind = "search"\nswitch = "bridge"\nrate = "100k"\n', "study 1, rate", "only kind trial"),
    ('kind = "trial"\nswitch = "bridge"\n', "study 1, rate", "needs rate"),
    ('kind = "trial"\nswitch = "bridge"\nrate = "fast"\n', "study 1, rate", "packets per second"),
    ('kind = "search"\nswitch = "bridge"\npoints = 5\n', "study 1, points", "only kind sweep"),
    ('kind = "latency"\nswitch = "bridge"\nfractions = [0]\n', "study 1, fractions", "(0, 200]"),
    ('kind = "latency"\nswitch = "bridge"\nduration = -1\n', "study 1, duration",
     "give seconds from 0.1 to 86400"),
    ('kind = "b2b"\nswitch = "bridge"\nscenario = "p2p-pair"\n', "study 1, scenario",
     "tester that also receives"),
    ('kind = "b2b"\nswitch = "bridge"\nscenario = "pairs:2"\n', "study 1, scenario",
     "tester that also receives"),
    ('kind = "search"\nswitch = "bridge"\nshape_pps = "100k"\n', "study 1, shape_pps",
     "only switch \"shaped\""),
    ('kind = "search"\nswitch = "shaped"\n', "study 1, shape_pps", "needs shape_pps"),
    ('kind = "search"\nswitch = "bridge"\nscenario = "p2p"\nchain = 2\n', "study 1, chain",
     "needs scenario = \"chain\""),
    ('kind = "search"\nswitch = "bridge"\nscenario = "chain"\n', "study 1, scenario",
     "needs chain"),
    ('kind = "search"\nswitch = "bridge"\nio = "dpdk"\n', "study 1, io", "afxdp"),
    ('kind = "search"\nswitch = "bridge"\nplacement = "pinned"\n', "study 1, placement", "pbp"),
    ('kind = "search"\nswitch = "bridge"\noptions = "x=1"\n', "study 1, options", "table"),
    ('switch = "bridge"\n', "study 1, kind", "missing"),
    ('kind = "search"\n', "study 1, switch", "missing"),
]


@pytest.mark.parametrize("study,where,what", BAD)
def test_invalid_study_named_by_index_and_key(study: str, where: str, what: str) -> None:
    ok = '[[study]]\nkind = "search"\nswitch = "veth"\n'
    message = problems(HEAD + ok + "[[study]]\n" + study)
    assert where.replace("study 1", "study 2") in message
    assert what in message
    assert "study 1" not in message            # the valid first study is not blamed


def test_all_problems_listed_one_per_line() -> None:
    message = problems(spec('kind = "search"\nswitch = "brige"\nsize = 9019\nfoo = 1\n')
                       + '[[study]]\nkind = "trial"\nswitch = "veth"\n')
    lines = message.splitlines()
    assert lines[0].endswith("has 4 problems:")
    assert len(lines) == 5
    assert any("study 2, rate" in line for line in lines[1:])


@pytest.mark.parametrize("text,what", [
    ('[[study]]\nkind = "search"\nswitch = "veth"\n', "[campaign] is missing"),
    ('[campaign]\nname = "a b"\n[[study]]\nkind = "search"\nswitch = "veth"\n', "name"),
    ('[campaign]\nname = "a"\nnmae = "b"\n[[study]]\nkind = "search"\nswitch = "veth"\n',
     "did you mean 'name'"),
    ('[campaign]\nname = "a"\n', "no [[study]]"),
    ('[campaign]\nname = "a"\n[[studies]]\nkind = "search"\n', "did you mean 'study'"),
])
def test_invalid_campaign_table(text: str, what: str) -> None:
    assert what in problems(text)


def test_toml_syntax_error_names_the_line() -> None:
    message = problems('[campaign]\nname = "a"\n[[study]\nkind = "search"\n')
    assert "TOML syntax error" in message and "line 3" in message


def test_unreadable_file(tmp_path) -> None:
    with pytest.raises(UsageError, match="cannot read campaign spec .*missing.toml"):
        load_spec(tmp_path / "missing.toml")
    with pytest.raises(UsageError, match="cannot read"):
        load_spec(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[campaign]\nname = "\xe9"\n')
    with pytest.raises(UsageError, match="cannot read"):
        load_spec(bad)


def test_load_spec_keeps_text_and_source(tmp_path) -> None:
    text = spec('kind = "search"\nswitch = "veth"\n', head='[campaign]\nname = "x"\nout = "o"\n')
    path = tmp_path / "c.toml"
    path.write_text(text)
    s = load_spec(path)
    assert (s.name, s.text, s.source, s.out) == ("x", text, str(path), "o")


def test_builtin_suites() -> None:
    switches = {n for n, cls in all_switches().items()
                if not cls.calibration and not cls.container_network}
    quick = builtin("quick")
    pts = expand(quick)
    assert quick.name == "quick" and quick.text == BUILTIN["quick"]
    # every switch: search + latency at 2 sizes; repetitions are the decide phase's (budget)
    assert len(pts) == len(switches) * 2 * 2 and not any(p.repetition for p in pts)
    assert quick.budget_s == 390.0
    assert {(p.kind, p.size, p.scenario) for p in pts} == {
        (k, s, "p2p") for k in ("search", "latency") for s in (64, 1518)}
    assert {p.fractions for p in pts if p.kind == "latency"} == {(0.9,)}
    assert {p.preset for p in pts} == {"brief"}   # 0.25 s trials, 1 s sum: the rounds rank
    standard = expand(builtin("standard"))
    assert {p.size for p in standard} == {64, 512, 1518, "imix"}
    assert {p.scenario for p in standard} == {"p2p", "pvp"}
    assert {p.kind for p in standard} == {"search", "latency", "sweep"}
    assert {p.size for p in standard if p.kind == "sweep"} == {64}
    assert all(0.5 in p.fractions for p in standard if p.kind == "latency")
    with pytest.raises(UsageError, match="did you mean 'quick'"):
        builtin("quik")


def test_options_and_io_a_switch_would_ignore_are_refused() -> None:
    """kernel_mode on testpmd, clones on bridge, io afxdp on ovs-dpdk: each would be ignored and
    the point stored labelled with it."""
    for body, fragment in (('switch = "testpmd"\noptions = { kernel_mode = "softirq" }\n',
                            "switch testpmd does not read option kernel_mode"),
                           ('switch = "bridge"\noptions = { clones = 2 }\n',
                            "switch bridge does not read option clones"),
                           ('switch = "ovs-dpdk"\nio = "afxdp"\n', "io afxdp: switch ovs-dpdk")):
        with pytest.raises(UsageError, match=fragment):
            parse_spec(spec('kind = "search"\n' + body))
    for io in ("auto", "afpacket"):          # the defaults: the DPDK switches' tester is dpdk
        parse_spec(spec(f'kind = "search"\nswitch = "ovs-dpdk"\nio = "{io}"\n'))
        cls = all_switches()["testpmd"]
        assert cls.unread_options({}, io) is None


def test_latency_estimate_counts_its_search_unless_the_twin_is_in_the_campaign():
    from vswbench.campaign.estimate import QUICK_SEARCH_SECONDS
    from vswbench.campaign.estimate import TESTBED_SECONDS
    from vswbench.campaign.estimate import estimates

    alone = expand(parse_spec(spec('kind = "latency"\nswitch = "bridge"\npreset = "quick"\n'
                                   'fractions = [50]\nduration = 5\n')))
    paired = expand(parse_spec(spec('kind = ["search", "latency"]\nswitch = "bridge"\n'
                                    'preset = "quick"\nfractions = [50]\nduration = 5\n')))
    lat_alone = estimates(alone)[alone[0].key]
    lat_paired = next(s for k, s in estimates(paired).items()
                      if k == next(p.key for p in paired if p.kind == "latency"))
    # the lone latency point is its testbed's first: it counts the build too
    assert lat_alone == pytest.approx(QUICK_SEARCH_SECONDS + lat_paired + TESTBED_SECONDS)
    assert lat_paired == pytest.approx(5.1)
