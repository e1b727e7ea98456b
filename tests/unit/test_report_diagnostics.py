"""The report's diagnostics and profiles from hand-made stored points (FIXTURES, not
measurements): pinned vs unpinned NDR, drops per chain element, interrupts vs latency, and
which points count as profiled."""

from __future__ import annotations

from pathlib import Path

from vswbench.report.diagnostics import drops_per_element
from vswbench.report.diagnostics import irq_latency
from vswbench.report.diagnostics import placement_ndr
from vswbench.report.profiles import cpu_check_table
from vswbench.report.profiles import flame_graph
from vswbench.report.profiles import profiled_points
from vswbench.report.profiles import write_folded
from vswbench.results.points import StoredResults
from vswbench.results.store import StoredPoint


def _point(kind: str, params: dict, result: dict, key: str = "k") -> StoredPoint:
    return StoredPoint("c", "vsb0000", key, f"{kind} {params.get('switch')}", params, kind,
                       "done", result, None, None, "now")


def _data(points: list[StoredPoint]) -> StoredResults:
    return StoredResults(Path("x.sqlite"), tuple(points), ())


def test_placement_ndr_needs_both_placements() -> None:
    base = {"switch": "bridge", "scenario": "p2p", "size": 64}
    pts = [_point("search", {**base, "placement": "default"}, {"ndr_pps": 200_000.0}),
           _point("search", {**base, "placement": "default"}, {"ndr_pps": 220_000.0}),
           _point("search", {**base, "placement": "unpinned"}, {"ndr_pps": 90_000.0}),
           _point("search", {**base, "switch": "ovs", "placement": "default"},
                  {"ndr_pps": 1.0})]
    table = placement_ndr(_data(pts))
    assert table == {"bridge p2p 64B": {"default": 210_000.0, "unpinned": 90_000.0}}


def test_drops_and_irq_rates_from_load_points() -> None:
    rows = [{"offered_pps": 2e5, "nf_counters": {"nf1": {"dropped": 5}, "nf2": {"dropped": 0}},
             "irq_rates": {"0": {"interrupts": 10, "net_rx": 1}, "1": {"interrupts": 5,
                                                                        "net_rx": 2}},
             "latency_us": {"p99": 40.0}},
            {"offered_pps": 1e5, "nf_counters": {"nf1": {"dropped": 0}}}]
    data = _data([_point("sweep", {"switch": "veth"}, {"points": rows})])
    ((label, drops),) = drops_per_element(data)
    assert [d[0] for d in drops] == [1e5, 2e5] and drops[1][1] == {"nf1": 5, "nf2": 0}
    assert irq_latency(data) == {"veth": [(15, 3, 40.0)]}


def test_profiled_points_trial_and_search(tmp_path) -> None:
    prof = {"cores": {"1": {"samples": 3, "categories": {}, "folded": ["a;b_[k] 2", "a;c 1"],
                            "top_kernel_functions": []}},
            "cpu_check": {"per_core": {"1": {"scheduler_busy": 0.5, "scheduler_softirq": 0.1,
                                             "perf_busy": 0.8, "differ": True}}}}
    pts = [_point("trial", {"switch": "bridge"}, {"profile": prof, "offered_pps": 1.0}, "t1"),
           _point("search", {"switch": "ovs"}, {"profile_at_ndr": {"profile": prof,
                                                                  "offered_pps": 9.0}}, "s1"),
           _point("search", {"switch": "xdp"}, {"ndr_pps": 5.0}, "s2")]
    found = profiled_points(_data(pts))
    assert [(p.switch, p.offered_pps) for p in found] == [("bridge", 1.0), ("ovs", 9.0)]
    assert "differ &gt; 10 %" in cpu_check_table(found) or "differ > 10 %" in cpu_check_table(
        found)
    files = write_folded(found, tmp_path)
    assert [f.name for f in files] == ["t1-cpu1.folded", "s1-cpu1.folded"]
    assert files[0].read_text() == "a;b_[k] 2\na;c 1\n"
    assert flame_graph(["a;b_[k] 2", "a;c 1"], "t") is not None
    assert flame_graph([], "t") is None
