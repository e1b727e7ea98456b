import json

import pytest

from vswbench.engine.records import RecordError
from vswbench.engine.records import parse_final
from vswbench.engine.records import parse_line

FINAL = {
    "type": "final", "tx_frames": 20000, "rx_frames": 19990, "lost": 10, "duplicated": 0,
    "reordered": 2, "stale": 0, "foreign": 3, "malformed": 0, "requested_pps": 50000,
    "achieved_pps": 49998.7, "rx_pps": 49970.1,
    "latency_us": {"min": 4.1, "p50": 18.2, "p90": 25.0, "p99": 40.5, "p999": 120.0,
                   "p9999": 900.0, "max": 1500.0, "mean": 19.3, "stddev": 5.5, "count": 19990},
    "latency_kind": "round-trip", "jitter_us": 1.25, "ipdv_us": {"p50": 0.1, "p99": 3.0},
    "cpu_s": 0.9, "cycles_per_packet": 5123.4, "hist": [[4000, 4031, 7], [18000, 18140, 9000]],
    "streams": [{"stream": 1, "rx": 19990}], "warnings": ["rate not reached"],
}


def test_parse_line_gives_type_and_data():
    record = parse_line(json.dumps({"type": "start", "mode": "gen"}) + "\n")
    assert record.type == "start"
    assert record.data["mode"] == "gen"


@pytest.mark.parametrize("line", ["not json", "[1, 2]", '{"no_type": 1}', '{"type": 5}'])
def test_parse_line_rejects_non_records(line):
    with pytest.raises(RecordError):
        parse_line(line)


def test_parse_final_typed_fields():
    final = parse_final(parse_line(json.dumps(FINAL)))
    assert (final.tx_frames, final.rx_frames, final.lost, final.reordered) == (20000, 19990, 10, 2)
    assert final.foreign == 3
    assert final.achieved_pps == pytest.approx(49998.7)
    assert final.latency_us is not None
    assert final.latency_us.p50 == pytest.approx(18.2)
    assert final.latency_us.count == 19990
    assert final.latency_kind == "round-trip"
    assert final.cycles_per_packet == pytest.approx(5123.4)
    assert final.hist[1].count == 9000 and final.hist[0].low_ns == 4000
    assert final.warnings == ("rate not reached",)
    assert final.raw["type"] == "final"


def test_parse_final_allows_missing_optional_and_null_latency():
    minimal = {"type": "final", "tx_frames": 5, "rx_frames": 0, "lost": 0, "duplicated": 0,
               "reordered": 0, "latency_us": None, "achieved_pps": None}
    final = parse_final(minimal)
    assert final.latency_us is None and final.stale == 0 and final.hist == ()


def test_parse_final_empty_latency_summary():
    record = dict(FINAL, latency_us={k: None for k in
                                     ("min", "p50", "p90", "p99", "p999", "p9999", "max",
                                      "mean", "stddev")} | {"count": 0})
    assert parse_final(record).latency_us.empty


@pytest.mark.parametrize("key", ["tx_frames", "rx_frames", "lost", "duplicated", "reordered"])
def test_parse_final_requires_counters(key):
    broken = {k: v for k, v in FINAL.items() if k != key}
    with pytest.raises(RecordError, match=key):
        parse_final(broken)


@pytest.mark.parametrize("key,value", [("tx_frames", "12"), ("lost", 1.5), ("rx_frames", True),
                                       ("achieved_pps", "fast")])
def test_parse_final_rejects_wrong_types(key, value):
    with pytest.raises(RecordError, match=key):
        parse_final(dict(FINAL, **{key: value}))


def test_parse_final_wrong_type_record():
    with pytest.raises(RecordError, match="final"):
        parse_final({"type": "start"})


def test_warning_objects_in_final():
    final = parse_final(dict(FINAL, warnings=[{"msg": "could not reach 1 Mpps"}]))
    assert final.warnings == ("could not reach 1 Mpps",)


def test_parse_final_accepted_apart_from_refused():
    obj = dict(FINAL, tx_frames=1000, tx_accepted=700, tx_refused=300, achieved_pps=1e6,
               accepted_pps=7e5, generators=[{"stream": 1, "cpu": 0, "tx_frames": 500},
                                             {"stream": 2, "cpu": 1, "tx_frames": 500}])
    f = parse_final(obj)
    assert (f.tx_accepted, f.tx_refused, f.accepted_pps) == (700, 300, 7e5)
    assert f.tx_accepted + f.tx_refused == f.tx_frames
    assert [g["stream"] for g in f.generators] == [1, 2]


def test_parse_final_without_the_split_is_none():
    f = parse_final(FINAL)
    assert (f.tx_accepted, f.tx_refused, f.accepted_pps, f.generators) == (None, None, None, ())
    with pytest.raises(RecordError, match="tx_refused"):
        parse_final(dict(FINAL, tx_refused="many"))
