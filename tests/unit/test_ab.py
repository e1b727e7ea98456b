"""`vswbench ab` without root: the A/B statistics (results/ab.py), the sides' specs, the
interleaved order and the store (campaign/ab.py), the command with a stand-in for the search.
The searches here are test doubles returning made-up NDRs with the shape of a stored search
result, never measurements."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from vswbench.campaign import ab as ab_mod
from vswbench.campaign.ab import ABPlan
from vswbench.campaign.ab import Side
from vswbench.campaign.ab import check_sysctls
from vswbench.campaign.ab import run_ab
from vswbench.campaign.ab import schedule
from vswbench.campaign.ab import side_spec
from vswbench.campaign.ab import side_switch
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.results.ab import MIN_ROUNDS
from vswbench.results.ab import SideRuns
from vswbench.results.ab import hodges_lehmann
from vswbench.results.ab import judge
from vswbench.results.ab import sides_of


def _side(name, ndrs, bound=0):
    return SideRuns(name, "bridge p2p 64 B", tuple(ndrs), 0, bound)


def test_a_clear_slowdown_differs_with_an_interval_around_it():
    a = [200_000, 204_000, 198_000, 201_000, 199_500]
    b = [160_000, 163_000, 158_500, 161_000, 159_000]
    v = judge(_side("A", a), _side("B", b))
    assert v.differs and v.p_value is not None and v.p_value < 0.01
    assert v.ratio is not None and 0.78 < v.ratio < 0.82
    low, high = v.ci
    assert low is not None and high is not None and low < v.ratio < high < 1
    assert "B differs from A: B is slower" in v.describe()


def test_the_interval_excludes_1_exactly_when_the_test_decides():
    rng = random.Random(5)
    for _ in range(40):
        a = [1e5 * (1 + rng.gauss(0, 0.1)) for _ in range(5)]
        b = [1e5 * (1 + rng.gauss(0.05, 0.1)) for _ in range(6)]
        v = judge(_side("A", a), _side("B", b))
        low, high = v.ci
        covers = (low is None or low <= 1) and (high is None or high >= 1)
        assert covers is (not v.differs)


def test_three_rounds_never_decide_and_say_so():
    v = judge(_side("A", [100, 101, 102]), _side("B", [50, 51, 52]))
    assert not v.differs and v.p_value == pytest.approx(0.1)
    assert f"can never decide at 0.05 (it takes {MIN_ROUNDS} a side" in v.describe()
    ratio, (low, high) = hodges_lehmann([100, 101, 102], [50, 51, 52])
    assert ratio == pytest.approx(0.5, rel=0.02) and low is None and high is None


def test_generator_bound_on_both_sides_is_not_judged():
    v = judge(_side("A", [3e5] * 4, bound=4), _side("B", [2e5] * 4, bound=4))
    assert not v.differs and "generator-bound" in v.describe()


def test_schedule_interleaves_each_round_in_a_random_order():
    order = schedule(40, random.Random(1))
    assert len(order) == 80
    rounds = [order[i:i + 2] for i in range(0, 80, 2)]
    assert all({s for _, s in r} == {"A", "B"} and r[0][0] == r[1][0] for r in rounds)
    firsts = [r[0][1] for r in rounds]
    assert 10 < firsts.count("A") < 30          # both orders, neither always
    assert schedule(40, random.Random(1)) == order


def test_side_spec_keeps_options_and_sysctls(tmp_path):
    plan = ABPlan(Side("A", "bridge"), Side("B", "bridge", (("function", "acl"),
                                                            ("table_size", "2000")),
                                             (("net.ipv4.ip_forward", "1"),)), rounds=4)
    spec = side_spec(plan, plan.b)
    assert spec.name == "ab-B" and "# sysctl net.ipv4.ip_forward = 1" in spec.text
    points = spec.points()
    assert len(points) == 4 and {p.repetition for p in points} == {0, 1, 2, 3}
    assert dict(points[0].options) == {"function": "acl", "table_size": "2000"}
    assert points[0].preset == "quick" and points[0].kind == "search"
    with pytest.raises(UsageError, match="cannot do function nat"):
        run_ab(ABPlan(Side("A", "bridge"), Side("B", "bridge", (("function", "nat"),))),
               tmp_path, measure=lambda *a: {}, root=False)
    with pytest.raises(UsageError):
        side_spec(plan, Side("B", "bridge", (("bad key", "1"),)))


def test_sysctls_are_checked(tmp_path):
    (tmp_path / "net" / "ipv4").mkdir(parents=True)
    (tmp_path / "net" / "ipv4" / "ip_forward").write_text("0\n")
    check_sysctls((("net.ipv4.ip_forward", "1"),), "--b-sysctl", tmp_path)
    for pair, message in (((("kernel.panic", "1"),), "net.*"),
                          ((("net.ipv4.nothing", "1"),), "no such sysctl"),
                          ((("net.ipv4.ip_forward", "1; reboot"),), "a value of")):
        with pytest.raises(UsageError, match=message):
            check_sysctls(pair, "--b-sysctl", tmp_path)


def _fake_search(levels, log, rng, stalls=2):
    def measure(side, point, store):
        log.append((point.repetition, side.name))
        ndr = levels[side.name] * (1 + rng.gauss(0, 0.03))
        return {"switch": side.switch, "scenario": "p2p", "frame_size": 64, "preset": "quick",
                "ndr_pps": ndr, "pdr_pps": ndr, "lower_bound_pps": ndr,
                "upper_bound_pps": ndr * 1.05, "generator_bound": False, "trials": [],
                "trials_rejected": stalls, "trial_count": 10}
    return measure


def test_run_ab_stores_interleaved_searches_and_judges_them(tmp_path):
    log: list = []
    plan = ABPlan(Side("A", "bridge"), Side("B", "bridge", (("function", "acl"),
                                                            ("table_size", "2000"))),
                  rounds=6, seed=3, method="searches")
    done = run_ab(plan, tmp_path / "ab", root=False, progress=lambda m: None,
                  measure=_fake_search({"A": 200_000, "B": 150_000}, log, random.Random(2)))
    assert list(done.order) == log and done.failed == 0
    a, b = sides_of(done.store)
    assert len(a.ndrs) == len(b.ndrs) == 6 and a.excised_trials == 12
    assert "function=acl" in b.label and "function=acl" not in a.label
    v = judge(a, b)
    assert v.differs and v.ratio is not None and 0.7 < v.ratio < 0.8
    assert a.trials == 60 and v.warnings() == []
    with pytest.raises(UsageError, match="already holds a results store"):
        run_ab(plan, tmp_path / "ab", root=False, measure=lambda *x: {})


def test_the_command_with_a_stand_in_search(tmp_path, monkeypatch, capsys):
    rng = random.Random(11)
    monkeypatch.setattr(ab_mod, "require_root", lambda what: None)
    monkeypatch.setattr(ab_mod, "measure_here",
                        _fake_search({"A": 200_000, "B": 200_000}, [], rng))
    same = ["ab", "--switch", "bridge", "--method", "searches", "--rounds", "5", "--seed", "1",
            "--json"]
    assert main([*same, "--out", str(tmp_path / "same"), "--fail-if", "ndr:-5%"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differs"] is False and data["verdict"].startswith("no difference")
    monkeypatch.setattr(ab_mod, "measure_here",
                        _fake_search({"A": 200_000, "B": 150_000}, [], rng))
    slower = ["ab", "--switch", "bridge", "--method", "searches", "--b-opt", "function=acl",
              "--b-opt", "table_size=2000", "--rounds", "5", "--out", str(tmp_path / "acl")]
    assert main([*slower, "--fail-if", "ndr:-5%"]) == 1
    text = capsys.readouterr()
    assert "B differs from A: B is slower" in text.out and "fail: B/A" in text.err


@pytest.mark.parametrize("argv, message", [
    (["--b-opt", "function"], "expected KEY=VALUE"),
    (["--b-opt", "a=1", "--b-opt", "a=2"], "given twice"),
    (["--fail-if", "p99:+10%"], "ab compares its sides' throughput"),
    (["--a-sysctl", "kernel.panic=1"], "net.*"),
])
def test_bad_input_exits_2(argv, message, tmp_path, capsys):
    assert main(["ab", "--switch", "bridge", "--out", str(tmp_path / "x"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_most_trials_excised_is_warned(tmp_path):
    plan = ABPlan(Side("A", "bridge"), Side("B", "bridge"), rounds=4, seed=1, method="searches")
    done = run_ab(plan, tmp_path / "ab", root=False,
                  measure=_fake_search({"A": 1e5, "B": 1e5}, [], random.Random(3), stalls=9))
    warnings = judge(*sides_of(done.store)).warnings()
    assert len(warnings) == 2 and "36 of its 40 search trials were excised" in warnings[0]


# -- sides declared in switch files (two builds of your own switch) ------------------------------
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "switches"


@pytest.fixture
def no_user_switches_after(monkeypatch):
    from vswbench.switches import catalog
    monkeypatch.setattr(catalog, "_USER", {})


def test_a_side_from_a_switch_file_declares_it_in_its_spec(no_user_switches_after):
    switch, path = side_switch("A", None, EXAMPLES / "linux-bridge.toml")
    assert switch == "ip-bridge" and Path(path).is_absolute()
    spec = side_spec(ABPlan(Side("A", switch, switch_file=path), Side("B", "bridge")),
                     Side("A", switch, switch_file=path))
    assert f'switch."ip-bridge" = "{path}"' in spec.text
    assert "declared in" in Side("A", switch, switch_file=path).describe()


def test_two_builds_as_two_switch_files(tmp_path, monkeypatch, capsys, no_user_switches_after):
    rng = random.Random(5)
    monkeypatch.setattr(ab_mod, "require_root", lambda what: None)
    seen: list = []
    measure = _fake_search({"A": 200_000, "B": 120_000}, seen, rng)
    monkeypatch.setattr(ab_mod, "measure_here",
                        lambda side, point, store: measure(side, point, store) | {
                            "switch": side.switch})
    argv = ["ab", "--a-switch-file", str(EXAMPLES / "linux-bridge.toml"), "--b-switch-file",
            str(EXAMPLES / "nft-fwd.toml"), "--method", "searches", "--rounds", "4", "--seed",
            "2", "--json",
            "--out", str(tmp_path / "builds")]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differs"] is True and data["ratio"] < 0.7
    assert "ip-bridge" in data["sides"]["A"]["setup"] and "nft-fwd" in data["sides"]["B"]["setup"]


@pytest.mark.parametrize("files, extra, message", [
    (["two.toml"], [], "name side A's switch with --a-switch"),
    (["two.toml"], ["--a-switch", "nope"], "not nope"),
    (["missing.toml"], [], "no such file"),
    (["same1.toml", "same2.toml"], [], "declared twice"),
])
def test_bad_switch_files_exit_2(files, extra, message, tmp_path, capsys, no_user_switches_after):
    bridge = (EXAMPLES / "linux-bridge.toml").read_text()
    (tmp_path / "two.toml").write_text(bridge + bridge.replace("[switch.ip-bridge]",
                                                               "[switch.ip-bridge2]"))
    (tmp_path / "same1.toml").write_text(bridge)
    (tmp_path / "same2.toml").write_text(bridge.replace("ip link", "ip  link"))
    argv = ["ab", "--a-switch-file", str(tmp_path / files[0]), "--out", str(tmp_path / "x"),
            *(["--b-switch-file", str(tmp_path / files[1])] if len(files) > 1 else
              ["--b-switch", "bridge"]), *extra]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _rounds(side: str, rates: list[float]):
    from vswbench.results.paired import Sample
    from vswbench.results.paired import SwitchRounds

    return SwitchRounds(side, tuple(Sample(side, i, 0, 0.5, int(r * 0.5 / 0.8), int(r * 0.5))
                                    for i, r in enumerate(rates)))


def test_paired_rounds_catch_a_known_slowdown_through_the_hosts_drift():
    """Synthetic rounds (NOT MEASUREMENTS): the host's mood moves 2x from round to round, B is
    10 % slower than A in every round, with 3 % of noise on each sample."""
    from vswbench.results.ab import judge_paired

    rng = random.Random(5)
    mood = [1 + rng.random() for _ in range(12)]
    a = _rounds("A", [1e6 * m * (1 + rng.uniform(-0.03, 0.03)) for m in mood])
    b = _rounds("B", [0.9e6 * m * (1 + rng.uniform(-0.03, 0.03)) for m in mood])
    v = judge_paired(a, b)
    assert v.differs and v.method == "rounds" and 0.85 < (v.ratio or 0) < 0.95
    assert v.ci[0] is not None and v.ci[1] is not None and v.ci[0] < 0.9 < v.ci[1] < 1.0
    assert v.describe().startswith("B differs from A: B is slower") and "12 paired" in \
        v.describe()
    same = judge_paired(a, _rounds("B", [x * 1.0 for x in a.rates]))
    assert not same.differs and same.describe().startswith("no difference")
    few = judge_paired(_rounds("A", [2e6] * 5), _rounds("B", [1e6] * 5))
    assert not few.differs and "more --rounds" in few.describe()


def test_a_shaped_side_names_its_switch_once() -> None:
    assert Side("B", "shaped", shape_pps=50_000).describe() == "shaped at 50,000 pps"
