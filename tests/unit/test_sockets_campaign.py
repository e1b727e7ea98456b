"""The socket kinds in campaigns (campaign/spec_sockets.py, run_sockets.py) and the read side
(results/sockets.py, the export's columns): expansion, refusals, keys, typed reads of a made-up
stored result (FIXTURES, NOT MEASUREMENTS)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from vswbench.campaign.execute import check_points
from vswbench.campaign.spec import load_spec
from vswbench.campaign.spec import parse_spec
from vswbench.campaign.spec import point_count
from vswbench.errors import UsageError
from vswbench.results.export import headline_row
from vswbench.results.export import point_record
from vswbench.results.points import read_point
from vswbench.results.sockets import socket_of
from vswbench.results.store import StoredPoint

ROOT = Path(__file__).resolve().parents[2]
HEAD = '[campaign]\nname = "s"\n[[study]]\n'


def spec(body: str):
    return parse_spec(HEAD + body)


def test_expansion_and_keys():
    s = spec('kind = ["stream", "crr"]\nswitch = ["bridge"]\nscenario = "rr"\n'
             'proto = ["tcp", "udp"]\nmtu = [1500, 9000]\nmsg_size = [64, 65536]\n')
    points = s.points()
    # stream: 2 protos x 2 mtus x 2 sizes; crr: tcp only, 2 mtus x 2 sizes
    assert len(points) == 8 + 4 == point_count(s.studies[0])
    crr = [p for p in points if p.kind == "crr"]
    assert {p.proto for p in crr} == {"tcp"} and {p.size for p in crr} == {64, 65536}
    p = points[0]
    assert p.params()["proto"] == "tcp" and p.params()["mtu"] == 1500
    assert "offloads" in p.params() and p.label.startswith("stream bridge rr 64B tcp mtu1500")
    frames = spec('kind = ["search"]\nswitch = ["bridge"]\n').points()[0]
    assert "proto" not in frames.params()       # the keys of frame points did not change


def test_star_brings_kernel_switches_only():
    s = spec('kind = ["rr"]\nswitch = ["*"]\nscenario = "rr"\n')
    switches = {p.switch for p in s.points()}
    assert switches and not switches & {"memif", "testpmd", "ovs-dpdk", "shaped"}
    assert point_count(s.studies[0]) == len(s.points())


def test_socket_chains_leave_l3_switches_out():
    s = spec('kind = ["rr"]\nswitch = ["*"]\nscenario = ["rr", "pvp", "chain:2"]\n')
    by_scenario = {}
    for p in s.points():
        by_scenario.setdefault(p.scenario, set()).add(p.switch)
    assert "router" in by_scenario["rr"]      # "*" brings the l3 switches for rr only
    assert by_scenario["pvp"] == by_scenario["chain:2"] == by_scenario["rr"] - {
        "router", "router-flowtable"}
    assert point_count(s.studies[0]) == len(s.points())
    check_points(s.points())                  # every chain point planned as the command line


@pytest.mark.parametrize("body, fragment", [
    ('kind = ["rr"]\nswitch = ["router"]\nscenario = "pvp"\n', "route by destination address"),
    ('kind = ["rr"]\nswitch = ["bridge"]\nscenario = "p2p"\n', "client and a server"),
    ('kind = ["stream"]\nswitch = ["memif"]\nscenario = "rr"\n', "no kernel socket"),
    ('kind = ["crr"]\nswitch = ["bridge"]\nscenario = "rr"\nproto = ["udp"]\n', "remove udp"),
    ('kind = ["search"]\nswitch = ["bridge"]\nmtu = [9000]\n', "only kind"),
    ('kind = ["rr"]\nswitch = ["bridge"]\nscenario = "rr"\nmtu = [4000]\n', "1500 or 9000"),
    ('kind = ["rr"]\nswitch = ["bridge"]\nscenario = "rr"\noffloads = ["half"]\n', "offloads"),
    ('kind = ["rr"]\nswitch = ["bridge"]\nscenario = "rr"\nmsg_size = [0]\n', "msg_size"),
])
def test_refused(body, fragment):
    with pytest.raises(UsageError, match=fragment):
        spec(body)


def test_shipped_spec_plans():
    s = load_spec(ROOT / "specs" / "sockets.toml")
    points = s.points()
    assert {p.kind for p in points} == {"stream", "rr", "crr"}
    assert any(p.mtu == 9000 for p in points) and any(p.service for p in points)
    assert any(p.offloads == "off" for p in points) and any(p.flows == 4 for p in points)
    assert {p.scenario for p in points} == {"rr", "pvp", "chain:2"}
    check_points(points)            # every point planned as the command line plans it


def stored(result) -> StoredPoint:
    params = {"kind": "rr", "switch": "router", "scenario": "rr", "size": 64, "flows": 1,
              "proto": "tcp", "mtu": 1500, "offloads": "default", "service": True}
    return StoredPoint("s", "r1", "k1", "rr router rr 64B tcp mtu1500 service", params, "rr",
                       "done", result, None, "2026-11-27T00:00:00+0000", "2026-11-27T00:00:05+0000")


RESULT = {"kind": "rr", "switch": "router", "scenario": "rr", "proto": "tcp", "size": 64,
          "flows": 1, "pairs": 1, "mtu": 1500, "offloads": "default", "service": True,
          "duration_s": 3.0, "goodput_gbps": None, "udp_loss_ratio": None, "retransmits": 0,
          "transactions_per_s": 9000.0, "connections_per_s": None,
          "latency_us": {"p50": 80.0, "p90": 110.0, "p99": 400.0, "p999": 3900.0, "min": 40.0,
                         "max": 5000.0, "count": 27000},
          "histogram": [[40000, 40312, 27000]], "busy_cpu_s": 5.5, "cpu_s_per_gb": 3000.0,
          "cycles_per_transaction": 500000.0, "forwarding_mode": "napi"}


def test_typed_read_and_export_row():
    sock = socket_of(stored(RESULT))
    assert sock is not None and sock.headline() == ("transactions/s", 9000.0)
    assert sock.latency.p99 == 400.0 and sock.service and sock.histogram[0][2] == 27000
    assert socket_of(stored(None)) is None
    row = headline_row(read_point(stored(RESULT)))
    assert row["transactions_per_s"] == 9000.0 and row["latency_p50_us"] == 80.0
    assert row["service"] is True and row["cycles_per_transaction"] == 500000.0
    assert row["nf"] is None                      # no network functions on the rr scenario
    routed = {**RESULT, "scenario": "pvp", "nf": "router"}
    assert headline_row(read_point(stored(routed)))["nf"] == "router"
    schema = json.loads((ROOT / "src/vswbench/schemas/point-record.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(point_record(stored(RESULT)))), schema)
    jsonschema.validate(json.loads(json.dumps(point_record(stored(routed)))), schema)


def test_report_rows_verdicts_and_section():
    from types import SimpleNamespace

    from vswbench.report.sections.sockets import SECTION
    from vswbench.report.sockets import socket_rows
    from vswbench.report.sockets import verdict_lines
    from vswbench.results.points import StoredResults

    def point(kind, switch, **kw):
        params = {"kind": kind, "switch": switch, "scenario": "rr",
                  "size": {"stream": 16384}.get(kind, 64)}
        result = {**RESULT, "kind": kind, "switch": switch, "service": False,
                  "size": params["size"], **kw}
        key = f"{kind}{switch}{kw.get('scenario', '')}"
        return StoredPoint("s", "r1", key, f"{kind} {switch}", params, kind,
                           "done", result, None, None, "2026-11-27T00:00:05+0000")
    points = (point("stream", "bridge", goodput_gbps=3.0),
              point("stream", "ovs", goodput_gbps=0.75),
              point("stream", "macvlan", goodput_gbps=4.0),
              point("rr", "bridge"), point("rr", "ovs", latency_us={"p50": 100.0}),
              point("crr", "bridge", connections_per_s=2500.0),
              point("stream", "veth", goodput_gbps=9.0, mtu=9000),      # not the base workload
              point("stream", "bridge", goodput_gbps=1.0, scenario="pvp",  # nor through routers
                    nf="kernel IP routing"))
    data = StoredResults(Path("x"), points, ())
    rows = socket_rows(data)
    assert [r.switch for r in rows] == ["bridge", "macvlan", "ovs"]
    assert rows[0].scenario == "rr" and rows[0].stream.goodput_gbps == 3.0
    lines = verdict_lines(rows)
    assert lines[0] == ("TCP stream, 16384 B: macvlan leads (4.00 Gbit/s), bridge 25 % lower "
                        "(3.00 Gbit/s), last ovs 81 % lower (0.75 Gbit/s); one run each, not "
                        "decided by a rank test.")
    assert lines[1].startswith("TCP request/response, 64 B: bridge leads (80 us p50), ovs 25 % "
                               "higher")
    assert lines[2].startswith("TCP connect/request/response/close, 64 B: bridge leads (2,500")
    html = SECTION.body(SimpleNamespace(data=data), [])
    assert "macvlan" in html and "Every socket point" in html and "stream veth" in html
    assert "(network functions: kernel IP routing)" in html     # the pvp point says how
    empty = SECTION.body(SimpleNamespace(data=StoredResults(Path("x"), (), ())), [])
    assert "no socket points" in empty


def test_api_reads_socket_points_and_writes_booleans_as_toml(tmp_path):
    from vswbench import api
    from vswbench.results.store import ResultStore
    from vswbench.run.ids import new_run_id

    assert api._toml(True) == "true" and api._toml([False]) == "[false]"
    s = spec('kind = ["rr"]\nswitch = ["router"]\nscenario = "rr"\nservice = [true]\n')
    (point,) = s.points()
    with ResultStore(tmp_path / "results.sqlite") as store:
        run_id = str(new_run_id())
        store.begin_run(run_id, s, {})
        store.record_point(run_id, point, RESULT, "done")
        store.end_run(run_id, "done")
    results = api.load_results(tmp_path)
    (sock,) = results.sockets
    assert sock.switch == "router" and sock.service and sock.transactions_per_s == 9000.0


def test_compare_shows_socket_ratios_without_judging_them(tmp_path):
    from vswbench.results.compare import compare
    from vswbench.results.store import ResultStore
    from vswbench.run.ids import new_run_id

    s = spec('kind = ["rr"]\nswitch = ["router"]\nscenario = "rr"\n')
    (point,) = s.points()
    for name, tps in (("a", 9000.0), ("b", 6000.0)):
        with ResultStore(tmp_path / name / "results.sqlite") as store:
            run_id = str(new_run_id())
            store.begin_run(run_id, s, {})
            store.record_point(run_id, point, {**RESULT, "transactions_per_s": tps}, "done")
            store.end_run(run_id, "done")
    (change,) = compare([tmp_path / "a", tmp_path / "b"]).changes
    assert (change.metric, change.a, change.b) == ("tps", 9000.0, 6000.0)
    assert not change.significant and "single measurement" in change.how
