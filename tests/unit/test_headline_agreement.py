"""One search, one set of headline numbers: export (JSON and CSV), compare, the chain model and the
report's ranking read the same NDR, cycles per packet near the NDR, latency at 90 % of the NDR
and Gbit/s from one store (results/points.py). The results are invented test doubles shaped like
stored searches and latency points, never measurements."""

import csv
import json
from pathlib import Path

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.models.chain_data import load as load_chain
from vswbench.report.data import ranking
from vswbench.results.compare import load_points
from vswbench.results.export import export_csv
from vswbench.results.export import export_json
from vswbench.results.points import load
from vswbench.results.store import ResultStore
from vswbench.units import wire_gbps

SPEC = """
[campaign]
name = "agree"

[[study]]
kind = ["search", "latency"]
switch = "veth"
scenario = "chain"
chain = [1]
placement = "s_core"
size = "imix"
fractions = [50, 90]

[[study]]
kind = ["search", "latency"]
switch = "bridge"
size = 1518
fractions = [50, 80]
"""
NDR = 100_000.0
# Trials chosen so that the old definitions disagree: the highest lossless trial is above the NDR
# (104k: what the export took), the highest at or below it lost frames (100k: what the report
# took); near the NDR without loss is 95k, at 8000 cycles per packet.
TRIALS = [(60_000.0, 0, 9000.0), (95_000.0, 0, 8000.0), (100_000.0, 3, 7900.0),
          (104_000.0, 0, 7000.0), (110_000.0, 500, 6500.0)]
CYCLES_NEAR_NDR = 8000.0
AT_90 = {"p50": 12.0, "p90": 18.0, "p99": 45.0}


def search_result() -> dict:
    return {"ndr_pps": NDR, "pdr_pps": 104_000.0, "lower_bound_pps": NDR,
            "upper_bound_pps": 100_500.0, "generator_bound": False,
            "generator_ceiling_pps": 500_000.0, "forwarding_mode": "sender-softirq",
            "placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [1]},
            "trials": [{"intended_pps": load, "lost": lost, "unsent": 0,
                        "cycles_per_packet": cpp} for load, lost, cpp in TRIALS]}


def latency_result(fractions: tuple[float, ...]) -> dict:
    lat = {0.5: {"p50": 10.0, "p90": 14.0, "p99": 30.0}, 0.8: {"p50": 11.0, "p90": 16.0,
                                                              "p99": 38.0}, 0.9: AT_90}
    return {"ndr_pps": NDR, "points": [
        {"fraction_of_ndr": f, "offered_pps": NDR * f, "latency_us": lat[f],
         "cycles_per_packet": 8100.0} for f in fractions]}


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    spec = parse_spec(SPEC)
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.begin_run("vsbagree", spec, {"tsc_hz": 2.5e9})
        for p in expand(spec):
            if p.kind == "search":
                result = search_result()
            else:
                result = latency_result((0.5, 0.9) if p.switch == "veth" else (0.5, 0.8))
            store.record_point("vsbagree", p, result, "done")
        store.end_run("vsbagree", "done")
    return tmp_path


def _num(text: str) -> float | None:
    return float(text) if text else None


def test_every_reader_shows_the_same_headline(store_dir: Path) -> None:
    with ResultStore(store_dir / "results.sqlite", create=False) as store:
        export_json(store, store_dir / "r.json")
        export_csv(store, store_dir / "r.csv")
    json_rows = [p["headline"] for p in json.loads((store_dir / "r.json").read_text())["points"]]
    with (store_dir / "r.csv").open(newline="") as f:
        csv_rows = list(csv.DictReader(f))
    compared = load_points(store_dir)
    (chain,) = load_chain(store_dir).observations
    ranked = {r.setup.switch: r for r in ranking(load(store_dir))}

    def row(rows: list[dict], kind: str, switch: str) -> dict:
        (found,) = [r for r in rows if r["kind"] == kind and r["switch"] == switch]
        return found

    # the chain search (IMIX frames): every reader, the same numbers
    veth = ranked["veth"]
    (cmp,) = [v.row for v in compared.values() if v.label.startswith("search veth")]
    j_search, c_search = row(json_rows, "search", "veth"), row(csv_rows, "search", "veth")
    j_lat, c_lat = row(json_rows, "latency", "veth"), row(csv_rows, "latency", "veth")
    ndrs = {j_search["conditional_throughput_pps"], _num(c_search["conditional_throughput_pps"]),
            cmp["ndr_pps"], chain.throughput_pps, veth.ndr_pps}
    assert ndrs == {NDR}
    cycles = {j_search["cycles_per_packet"], _num(c_search["cycles_per_packet"]),
              cmp["cycles_per_packet"], chain.cycles_per_packet, veth.cycles_per_packet}
    assert cycles == {CYCLES_NEAR_NDR}
    p50 = {j_lat["latency_p50_us"], _num(c_lat["latency_p50_us"]), cmp["latency_p50_us"],
           veth.latency_p50_us}
    p99 = {j_lat["latency_p99_us"], _num(c_lat["latency_p99_us"]), cmp["latency_p99_us"],
           veth.latency_p99_us}
    assert (p50, p99) == ({AT_90["p50"]}, {AT_90["p99"]})
    assert j_lat["latency_p90_us"] == _num(c_lat["latency_p90_us"]) == AT_90["p90"]
    assert j_lat["latency_fraction_of_ndr"] == 0.9
    gbps = {j_search["conditional_throughput_gbps"],
            _num(c_search["conditional_throughput_gbps"]), veth.ndr_gbps}
    assert gbps == {wire_gbps(NDR, "imix")} and None not in gbps

    # latency measured at 50 and 80 % only: no reader passes another fraction off as 90 %
    bridge = ranked["bridge"]
    (cmp,) = [v.row for v in compared.values() if v.label.startswith("search bridge")]
    j_lat, c_lat = row(json_rows, "latency", "bridge"), row(csv_rows, "latency", "bridge")
    assert {j_lat["latency_p50_us"], _num(c_lat["latency_p50_us"]), cmp["latency_p50_us"],
            bridge.latency_p50_us, j_lat["latency_p99_us"], cmp["latency_p99_us"],
            bridge.latency_p99_us} == {None}
    j_search = row(json_rows, "search", "bridge")
    assert j_search["conditional_throughput_gbps"] == bridge.ndr_gbps == wire_gbps(NDR, 1518)
    assert j_search["cycles_per_packet"] == cmp["cycles_per_packet"] == \
        bridge.cycles_per_packet == CYCLES_NEAR_NDR
