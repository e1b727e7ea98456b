"""compare_noise.py and its use by compare(): trial ranges and the common shift between runs.
The stored searches are test doubles (made-up figures with the shape of real results)."""
import math
from pathlib import Path

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.results.compare import compare
from vswbench.results.compare import parse_threshold
from vswbench.results.noise import common_shift
from vswbench.results.noise import half_log_width
from vswbench.results.noise import overlap
from vswbench.results.noise import transition_interval
from vswbench.results.store import ResultStore

SWITCHES = ["bridge", "veth", "macvlan", "router", "ovs", "tc-bpf", "xdp", "ovs-afxdp"]
SPEC = f"""
[campaign]
name = "shift"

[[study]]
kind = "search"
switch = {SWITCHES!r}
size = 64
"""


def trial(load: float, lost: int = 0, unsent: int = 0) -> dict:
    count = int(load * 0.25)
    return {"intended_pps": load, "intended_count": count, "lost": lost, "unsent": unsent}


def search_result(ndr: float, fail_low: float | None = None) -> dict:
    """A search whose NDR goal ended at [ndr, 1.01 ndr], trials passing just below and failing
    just above; `fail_low` adds a failed trial that far below (sporadic loss)."""
    trials = [trial(ndr * 1.3, lost=500), trial(ndr), trial(ndr * 1.01, lost=3), trial(ndr)]
    if fail_low is not None:
        trials.append(trial(fail_low, lost=32))
    goals = [{"name": name, "loss_ratio": ratio, "lower_bound_pps": ndr,
              "upper_bound_pps": ndr * 1.01} for name, ratio in (("NDR", 0.0), ("PDR", 0.005))]
    return {"ndr_pps": ndr, "pdr_pps": ndr, "lower_bound_pps": ndr, "upper_bound_pps": ndr * 1.01,
            "generator_bound": False, "goals": goals, "trials": trials}


def write_run(path: Path, ndr: dict[str, float]) -> Path:
    spec = parse_spec(SPEC)
    path.mkdir(parents=True, exist_ok=True)
    with ResultStore(path / "results.sqlite") as store:
        store.begin_run(path.name, spec, {})
        for p in expand(spec):
            store.record_point(path.name, p, search_result(ndr[p.switch]), "done")
        store.end_run(path.name, "done")
    return path


def test_transition_interval_spans_mixed_trials():
    assert transition_interval(search_result(100_000), "NDR") == (100_000, 101_000)
    low, high = transition_interval(search_result(100_000, fail_low=60_000), "NDR")
    assert (low, high) == (60_000, 101_000)
    # 32 frames lost of 15,000 is within PDR's 0.5 %: the low trial passes that goal
    assert transition_interval(search_result(100_000, fail_low=60_000), "PDR") == (100_000, 101_000)
    unsent = search_result(100_000)
    unsent["trials"].append(trial(80_000, unsent=10))
    assert transition_interval(unsent, "NDR")[0] == 80_000      # unsent counts as lost
    assert transition_interval({"ndr_pps": 1.0}, "NDR") is None  # older results: no trials
    assert overlap((1, 2), (2, 3)) and not overlap((1, 2), (2.5, 3))
    assert math.isclose(half_log_width((1.0, math.e ** 2)), 1.0)


def test_common_shift_needs_points_and_floors_its_scatter():
    assert common_shift("ndr", [1.1] * 5, 0.10) is None
    shift = common_shift("ndr", [1.15] * 8, 0.10)
    assert shift is not None and math.isclose(shift.ratio, 1.15)
    assert math.isclose(shift.scale, math.log1p(0.10) / 3.5)     # no scatter: the noise floor
    assert abs(shift.z(1.15)) < 1e-9 and shift.z(1.15 * 1.5) > 3.5


def test_a_whole_run_faster_is_a_shift_not_a_change(tmp_path):
    base = {s: 100_000 + 20_000 * i for i, s in enumerate(SWITCHES)}
    scatter = [1.02, 0.97, 1.05, 1.0, 0.96, 1.03, 0.99, 1.01]
    a = write_run(tmp_path / "a", base)
    b = write_run(tmp_path / "b", {s: base[s] * 1.2 * f for s, f in zip(SWITCHES, scatter)})
    c = compare([a, b], thresholds=[parse_threshold("ndr:-5%")])
    assert not any(ch.significant for ch in c.changes) and not c.failures
    ndr_shift = next(s for s in c.shifts if s.metric == "ndr")
    assert ndr_shift.points == len(SWITCHES) and 1.15 < ndr_shift.ratio < 1.25


def test_one_switch_falling_out_of_a_shifted_run_is_flagged(tmp_path):
    base = {s: 100_000 + 20_000 * i for i, s in enumerate(SWITCHES)}
    a = write_run(tmp_path / "a", base)
    b = write_run(tmp_path / "b", {s: base[s] * (0.5 if s == "router" else 1.1) for s in SWITCHES})
    c = compare([a, b], thresholds=[parse_threshold("ndr:-5%")])
    flagged = {(ch.label.split()[1], ch.metric) for ch in c.changes if ch.significant}
    assert flagged == {("router", "ndr"), ("router", "pdr")}
    assert any("router" in f for f in c.failures)


def test_a_search_with_sporadic_loss_is_not_told_apart(tmp_path):
    """A wide transition interval (a trial failed at half the NDR) keeps a 40 % move within that
    point's own uncertainty, though the ranges do not overlap."""
    base = {s: 100_000 + 20_000 * i for i, s in enumerate(SWITCHES)}
    a = write_run(tmp_path / "a", base)
    with ResultStore(a / "results.sqlite") as store:
        point = next(p for p in expand(parse_spec(SPEC)) if p.switch == "ovs")
        store.record_point("a", point, search_result(base["ovs"], fail_low=base["ovs"] * 0.5),
                           "done")
    b = write_run(tmp_path / "b", {s: base[s] * (1.4 if s == "ovs" else 1.0) for s in SWITCHES})
    c = compare([a, b])
    ovs = next(ch for ch in c.changes if " ovs " in ch.label and ch.metric == "ndr")
    assert not ovs.significant and "apart" in ovs.how and "z +1.0" in ovs.how
    assert ovs.ranges[0] == (base["ovs"] * 0.5, base["ovs"] * 1.01)


REPEATED = SPEC + """
[[study]]
kind = "search"
switch = "ovs"
size = 64
repetitions = 3
"""


def write_repeated(path: Path, ndr: dict[str, float], ovs_reps: list[float]) -> Path:
    spec = parse_spec(REPEATED)
    path.mkdir(parents=True, exist_ok=True)
    with ResultStore(path / "results.sqlite") as store:
        store.begin_run(path.name, spec, {})
        for p in expand(spec):
            value = ovs_reps[p.repetition] if p.switch == "ovs" else ndr[p.switch]
            store.record_point(path.name, p, search_result(value), "done")
        store.end_run(path.name, "done")
    return path


def test_repetitions_on_fresh_testbeds_are_judged_by_their_spread(tmp_path):
    """A switch whose testbed instantiations differ (two modes, as ovs-dpdk at 1518 B here) is
    one point of three repetitions: its medians may differ by 2x between runs without a flag,
    while all three repetitions lower is flagged."""
    base = {s: 100_000 + 20_000 * i for i, s in enumerate(SWITCHES)}
    high, low = base["ovs"], base["ovs"] / 2
    a = write_repeated(tmp_path / "a", base, [high, high, low])
    b = write_repeated(tmp_path / "b", base, [low, low, high])
    c = compare([a, b], thresholds=[parse_threshold("ndr:-5%")])
    ovs = next(ch for ch in c.changes if " ovs " in ch.label and ch.metric == "ndr")
    assert "(3 repetitions)" in ovs.label and (ovs.a, ovs.b) == (high, low)
    assert not ovs.significant and "overlap" in ovs.how and not c.failures
    assert len([ch for ch in c.changes if ch.metric == "ndr"]) == len(SWITCHES)
    steady = write_repeated(tmp_path / "c", base, [high, high * 1.02, high * 0.98])
    worse = write_repeated(tmp_path / "d", base, [low, low * 1.02, low * 0.98])
    c = compare([steady, worse], thresholds=[parse_threshold("ndr:-5%")])
    flagged = {ch.metric for ch in c.changes if ch.significant and " ovs " in ch.label}
    assert flagged == {"ndr", "pdr"} and any("ovs" in f for f in c.failures)
