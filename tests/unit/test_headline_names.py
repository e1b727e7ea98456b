"""Headlines named for what their trials show (issue 43): RFC 2544's NDR only where trials at
that load lost no frame; MLRsearch's figure is the conditional throughput; a confirmation trial
whose loss no host stall explains marks its headline "not confirmed". Stored searches written
here are synthetic: NOT MEASUREMENTS."""

from __future__ import annotations

import pytest

from tests.report_fixtures import RUN_ID
from tests.report_fixtures import latency_json
from tests.report_fixtures import search_json
from vswbench.api import load_results
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.results.confirm import confirmation
from vswbench.results.confirm import unconfirmed_note
from vswbench.results.points import headline_of
from vswbench.results.points import latency_at
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "vsbtest-names"

[[study]]
kind = ["search", "latency"]
switch = ["bridge", "router"]
scenario = "p2p"
size = 64
preset = "quick"
fractions = [90]
duration = 1
"""


def _lossy_everywhere(result: dict) -> dict:
    for t in result["trials"]:
        t["lost"] = max(1, t["lost"])
        t["rx_frames"] = t["tx_frames"] - t["lost"]
    return result


def test_a_search_whose_every_trial_lost_frames_has_no_ndr() -> None:
    spec = parse_spec(SPEC)
    point = next(p for p in spec.points() if p.kind == "search")
    clean = headline_of("search", search_json(point, 500_000.0))
    assert clean.classic_ndr_pps == 500_000.0 and clean.ndr_pps == 500_000.0
    lossy = headline_of("search", _lossy_everywhere(search_json(point, 500_000.0)))
    assert lossy.classic_ndr_pps is None and lossy.ndr_pps == 500_000.0   # CT stays
    recorded = headline_of("search", {**search_json(point, 500_000.0), "classic_ndr_pps": None})
    assert recorded.classic_ndr_pps is None        # a recorded "none" is never recomputed


@pytest.fixture
def store(tmp_path):
    spec = parse_spec(SPEC)
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as s:
        s.begin_run(RUN_ID, spec, None)
        for p in spec.points():
            ndr = 500_000.0 if p.switch == "bridge" else 300_000.0
            if p.kind == "search":
                result = search_json(p, ndr)
                if p.switch == "router":
                    result = _lossy_everywhere(result)
            else:
                result = latency_json(p, ndr, 30.0)
                entry = result["points"][0]
                if p.switch == "bridge":           # lost 1 % at 90 %, no stall explains it
                    entry.update(lost=5000, loss_ratio=0.01)
                else:                              # lost too, but a host stall explains it
                    entry.update(lost=400, loss_ratio=0.001, host_stall="2.1 ms stall on cpu1")
            s.record_point(RUN_ID, p, result, "done")
        s.end_run(RUN_ID, "done")
    return path


def test_api_and_page_name_the_figures(store) -> None:
    results = load_results(store)
    bridge, router = results.get("bridge"), results.get("router")
    assert bridge.ndr_pps == 500_000.0 and bridge.conditional_throughput_pps == 500_000.0
    assert router.ndr_pps is None and router.conditional_throughput_pps == 300_000.0
    assert bridge.headline_name == "conditional throughput"      # no rounds in this store
    with pytest.raises(UsageError, match="no NDR"):
        results.ndr("router")
    assert results.conditional_throughput("router") == 300_000.0


def test_unexplained_confirmation_loss_marks_the_headline(store) -> None:
    results = load_results(store)
    assert results.get("bridge").confirmation == "not confirmed"
    assert results.get("router").confirmation == "host stall"
    (line,) = results.verdicts
    marked = line.split("throughput not confirmed:", 1)[1]
    assert "bridge (its 90 % trial lost 1 %, no stall explains it)" in marked
    assert "router" not in marked


def test_confirmation_rules() -> None:
    assert confirmation(None) == "none" and unconfirmed_note(None) is None
    entry = {"latency_us": {"p50": 10.0, "p99": 20.0}, "fraction_of_ndr": 0.9, "lost": 0,
             "loss_ratio": 0.0}
    lat = latency_at({"points": [entry]})
    assert lat is not None and confirmation(lat) == "confirmed"
