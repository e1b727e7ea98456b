"""The report's flow-count and cloning data (report/studies.py) from stored points, without
root."""

from pathlib import Path

from vswbench.report.studies import cloning_points
from vswbench.report.studies import flow_count_points
from vswbench.results.points import StoredResults
from vswbench.results.store import StoredPoint


def _point(ndr: float, flows: int = 1, rep: int = 0, options: dict | None = None,
           dp: int | None = None, switch: str = "ovs") -> StoredPoint:
    prm = {"kind": "search", "switch": switch, "scenario": "p2p", "size": 64, "flows": flows,
           "burst": 1, "placement": "default", "io": "afpacket", "preset": "quick",
           **({"options": options} if options else {}), **({"repetition": rep} if rep else {})}
    result = {"ndr_pps": ndr, **({"switch_stats": {"datapath_flows": dp}} if dp else {})}
    key = f"{switch}-{flows}-{rep}-{options}"
    return StoredPoint("c", "vsb0001", key, key, prm, "search", "done", result, None, None, "now")


def _data(*points: StoredPoint) -> StoredResults:
    return StoredResults(Path("results.sqlite"), points, ())


def test_flow_count_points() -> None:
    exact = {"flow_table": "exact"}
    data = _data(_point(100.0, 1, options=exact, dp=1), _point(90.0, 1000, options=exact, dp=990),
                 _point(80.0, 1000, rep=1, options=exact, dp=1010),
                 _point(70.0, 1000, rep=2, options=exact),
                 _point(50.0, 1, switch="bridge"))               # one flow count: no series
    pts = flow_count_points(data)
    assert [(q.switch, q.x, q.throughput_pps, q.datapath_flows) for q in pts] == [
        ("ovs", 1, 100.0, 1), ("ovs", 1000, 80.0, 1000)]
    assert {q.variant for q in pts} == {"preset=quick flow_table=exact"}
    assert flow_count_points(_data(_point(1.0), _point(2.0, rep=1))) == []


def test_cloning_points() -> None:
    data = _data(_point(98.0, options={"clones": "1"}), _point(69.0, options={"clones": "2"}),
                 _point(52.0, options={"clones": "3", "flow_table": "exact"}),
                 _point(90.0))                                   # no clones option: left out
    pts = cloning_points(data)
    assert [(q.x, q.throughput_pps, q.variant) for q in pts] == [
        (1, 98.0, "preset=quick"), (2, 69.0, "preset=quick"),
        (3, 52.0, "preset=quick flow_table=exact")]
