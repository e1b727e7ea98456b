"""compare.py over stores written here. The results are test doubles of stored searches (made-up
numbers with the shape of real results), never measurements."""
from pathlib import Path

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.results.compare import compare
from vswbench.results.compare import parse_threshold
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "cmp"

[[study]]
kind = ["search", "latency"]
switch = ["bridge", "veth"]
size = 64
fractions = [90]
"""


def write_run(path: Path, ndr: dict[str, float], p99: float = 20.0, reps: int = 1,
              spread: float = 0.0) -> Path:
    spec = parse_spec(SPEC)
    path.mkdir(parents=True, exist_ok=True)
    with ResultStore(path / "results.sqlite") as store:
        store.begin_run(path.name, spec, {})
        for p in expand(spec):
            value = ndr[p.switch]
            if p.kind == "search":
                result = {"ndr_pps": value, "pdr_pps": value * 1.01,
                          "lower_bound_pps": value, "upper_bound_pps": value * 1.005,
                          "generator_bound": False, "trials": []}
                if reps > 1:
                    vals = [value * (1 + spread * ((i % 3) - 1)) for i in range(reps)]
                    result["statistics"] = {"ndr_pps": {"values": vals, "cv": 0.0}}
            else:
                result = {"ndr_pps": value, "points": [
                    {"fraction_of_ndr": 0.9, "latency_us": {"p50": 10.0, "p99": p99}}]}
            store.record_point(path.name, p, result, "done")
        store.end_run(path.name, "done")
    return path


def test_nothing_changed_nothing_flagged(tmp_path):
    a = write_run(tmp_path / "a", {"bridge": 200_000, "veth": 390_000})
    b = write_run(tmp_path / "b", {"bridge": 201_000, "veth": 388_000})
    c = compare([a, b], thresholds=[parse_threshold("ndr:-5%")])
    assert c.changes and not any(ch.significant for ch in c.changes)
    assert not c.failures and not c.unmatched
    metrics = {ch.metric for ch in c.changes}
    assert {"ndr", "pdr", "p99"} <= metrics


def test_a_real_drop_is_flagged_and_fails_the_gate(tmp_path):
    a = write_run(tmp_path / "a", {"bridge": 200_000, "veth": 390_000})
    b = write_run(tmp_path / "b", {"bridge": 150_000, "veth": 390_000}, p99=40.0)
    c = compare([a, b], thresholds=[parse_threshold("ndr:-5%"), parse_threshold("p99:+10%")])
    flagged = {(ch.label.split()[1], ch.metric) for ch in c.changes if ch.significant}
    assert ("bridge", "ndr") in flagged and ("veth", "ndr") not in flagged
    assert any("ndr" in f for f in c.failures)
    # p99 doubled (20 -> 40 us): beyond the 30 % latency noise band of single trials
    assert any("p99" in f and "latency noise band" in f for f in c.failures)
    assert main(["compare", str(a), str(b), "--fail-if", "ndr:-5%"]) == 1
    assert main(["compare", str(a), str(a), "--fail-if", "ndr:-5%"]) == 0


def test_generator_bound_on_both_sides_is_never_significant():
    from vswbench.results.compare import PointValues
    from vswbench.results.compare import judge

    a = PointValues("search veth", {"ndr_pps": 330_000.0, "generator_bound": True}, {})
    b = PointValues("search veth", {"ndr_pps": 380_000.0, "generator_bound": True}, {})
    change = judge("ndr", a, b, 0.10)
    assert change is not None and not change.significant and "generator-bound" in change.how
    b.row["generator_bound"] = False
    b.row["ndr_pps"] = 200_000.0
    assert judge("ndr", a, b, 0.10).significant


def test_repetitions_use_the_bootstrap(tmp_path):
    a = write_run(tmp_path / "a", {"bridge": 200_000, "veth": 390_000}, reps=6, spread=0.01)
    b = write_run(tmp_path / "b", {"bridge": 180_000, "veth": 390_000}, reps=6, spread=0.01)
    c = compare([a, b])
    bridge = next(ch for ch in c.changes if "bridge" in ch.label and ch.metric == "ndr")
    veth = next(ch for ch in c.changes if "veth" in ch.label and ch.metric == "ndr")
    assert bridge.how.startswith("bootstrap") and bridge.significant and bridge.ci[1] < 1
    assert not veth.significant


def test_series_change_detection(tmp_path):
    runs = [write_run(tmp_path / f"r{i}", {"bridge": v, "veth": 390_000})
            for i, v in enumerate([200_000, 201_000, 199_000, 200_500, 150_000, 151_000])]
    c = compare(runs)
    bridge = next(ch for ch in c.changes if "bridge" in ch.label and ch.metric == "ndr")
    veth = next(ch for ch in c.changes if "veth" in ch.label and ch.metric == "ndr")
    assert bridge.series_groups == 2 and veth.series_groups == 1


@pytest.mark.parametrize("bad", ["ndr", "ndr:5", "foo:-5%", "ndr:-five%"])
def test_bad_thresholds(bad):
    with pytest.raises(UsageError):
        parse_threshold(bad)


def test_missing_store(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(tmp_path / "empty")]) == 2
    assert "no results store" in " ".join(capsys.readouterr().err.split())
