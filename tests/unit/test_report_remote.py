"""The report's local vs remote vs remote-vxlan section (FIXTURES, NOT MEASUREMENTS)."""
from __future__ import annotations

from vswbench.report.remote import EMPTY
from vswbench.report.remote import remote_rows
from vswbench.report.remote import remote_section
from vswbench.results.store import StoredPoint


def point(kind: str, scenario: str, result: dict, size: int = 64, rep: int = 1) -> StoredPoint:
    params = {"kind": kind, "switch": "bridge", "scenario": scenario, "size": size,
              "repetition": rep}
    return StoredPoint("c", "vsb0001", f"{kind}-{scenario}-{size}-{rep}", "l", params, kind,
                       "done", result, None, None, "now")


def lat(p50: float) -> dict:
    return {"ndr_pps": 1.0, "points": [{"fraction_of_ndr": 0.9, "latency_us": {"p50": p50}}]}


def test_rows_put_the_three_side_by_side_with_the_changes() -> None:
    pts = [point("search", "p2p-pair", {"ndr_pps": 200_000.0}),
           point("search", "remote", {"ndr_pps": 100_000.0}),
           point("search", "remote", {"ndr_pps": 120_000.0}, rep=2),
           point("search", "remote-vxlan", {"ndr_pps": 55_000.0}),
           point("latency", "rr", lat(20.0)), point("latency", "remote-rr", lat(30.0))]
    rows = {r.measure: r for r in remote_rows(pts)}
    ndr = rows["NDR, sender to receiver (kpps)"]
    assert ndr.values == {"local": 200.0, "remote": 110.0, "remote-vxlan": 55.0}  # median
    assert ndr.change("local", "remote") == -0.45 and ndr.change("remote", "remote-vxlan") == -0.5
    rtt = rows["round-trip p50 at 90 % of NDR (us)"]
    assert rtt.values == {"local": 20.0, "remote": 30.0} and rtt.change("remote", "remote-vxlan") is None
    html = remote_section(pts)
    assert "-45 %" in html and "-50 %" in html and "+50 %" in html


def test_no_remote_point_no_section() -> None:
    assert remote_rows([point("search", "p2p-pair", {"ndr_pps": 1.0})]) == []
    assert EMPTY in remote_section([])
