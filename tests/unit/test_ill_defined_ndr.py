"""An ill-defined NDR said where the user reads it (results/loss.py LossAround): a search whose
trials lost frames, with no host stall, far below the load it settled on. The stored points are
test doubles shaped like real searches (invented figures, never measurements)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.results.loss import ILL_DEFINED_FRACTION
from vswbench.results.loss import combine_around
from vswbench.results.loss import loss_around_load
from vswbench.results.store import ResultStore

NDR = 1_000_000.0


def _trial(load: float, lost: int = 0, excised: bool = False) -> dict:
    count = int(load * 0.25)
    return {"intended_pps": load, "intended_s": 0.25, "intended_count": count,
            "tx_frames": count, "lost": lost, "unsent": 0, "loss_ratio": lost / count,
            "excised": excised}


def test_loss_below_the_ndr_counts_lossy_trials_but_not_host_stalls() -> None:
    result = {"ndr_pps": NDR, "trials": [
        _trial(300_000.0), _trial(400_000.0, lost=900, excised=True),   # a host stall: left out
        _trial(800_000.0, lost=25), _trial(NDR, lost=3), _trial(1_100_000.0, lost=5000)]}
    below = loss_around_load(result, NDR)
    assert below is not None and (below.trials, below.lossy_trials) == (2, 1)
    assert below.lowest_lossy_pps == 800_000.0 and not below.ill_defined   # 80 % of the NDR
    assert "1 of 2 trial(s) below the NDR's load lost frames" in below.describe()
    result["trials"].append(_trial(300_000.0, lost=2))
    below = loss_around_load(result, NDR)
    assert below is not None and below.ill_defined and below.lowest_lossy_pps == 300_000.0
    assert "NDR ill-defined" in below.describe() and "30 % of the NDR" in below.describe()
    assert loss_around_load(result, None) is None and loss_around_load({}, NDR) is None
    # exactly at the fraction: not below it
    edge = loss_around_load({"trials": [_trial(ILL_DEFINED_FRACTION * NDR, lost=1)]}, NDR)
    assert edge is not None and not edge.ill_defined


def test_repetitions_combine_against_the_median_ndr() -> None:
    a = loss_around_load({"trials": [_trial(700_000.0, lost=4), _trial(500_000.0)]}, 900_000.0)
    b = loss_around_load({"trials": [_trial(900_000.0)]}, 1_100_000.0)
    assert a is not None and b is not None
    both = combine_around([a, b], 1_000_000.0)
    assert both is not None and (both.trials, both.lossy_trials) == (3, 1)
    assert both.ill_defined                     # 700k < 75 % of the median NDR 1.0 M
    assert combine_around([], 1.0) is None and combine_around([a], None) is None


SPEC = """
[campaign]
name = "sporadic"

[[study]]
kind = "search"
switch = ["xdp", "bridge"]
size = 64
"""


@pytest.fixture
def sporadic(tmp_path: Path) -> Path:
    spec = parse_spec(SPEC)
    ndrs = {"xdp": 1_700_000.0, "bridge": 500_000.0}
    trials = {"xdp": [_trial(550_000.0, lost=40), _trial(1_200_000.0), _trial(1_700_000.0)],
              "bridge": [_trial(450_000.0, lost=3), _trial(300_000.0), _trial(500_000.0)]}
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.begin_run("vsbsporadic", spec, {})
        for p in expand(spec):
            v = ndrs[p.switch]
            store.record_point("vsbsporadic", p, {
                "switch": p.switch, "ndr_pps": v, "pdr_pps": v, "lower_bound_pps": v,
                "upper_bound_pps": v * 1.02, "generator_bound": False,
                "goals": [{"name": "NDR", "loss_ratio": 0.0}], "trials": trials[p.switch]},
                "done")
        store.end_run("vsbsporadic", "done")
    return tmp_path


def test_the_verdict_the_text_and_the_exports_say_it(sporadic: Path, tmp_path: Path) -> None:
    from vswbench.api import load_results
    from vswbench.results.export import export_csv

    line = next(v for v in load_results(sporadic).verdicts if "64 B" in v)
    assert "NDR ill-defined (sporadic loss, no host stall): xdp lost frames " \
           "from 0.55 Mpps (32 % of its NDR; 1 of 2 trials below it)" in line
    assert "bridge lost" not in line           # 90 % of its NDR: the search's own work
    with ResultStore(sporadic / "results.sqlite", create=False) as store:
        export_csv(store, tmp_path / "h.csv")
    rows = {r["switch"]: r for r in csv.DictReader((tmp_path / "h.csv").open(encoding="utf-8"))}
    assert rows["xdp"]["ndr_ill_defined"] == "True" and rows["bridge"]["ndr_ill_defined"] == "False"
    assert rows["xdp"]["below_ndr_lowest_lossy_pps"] == "550000.0"
    assert rows["bridge"]["below_ndr_lossy_trials"] == "1"


def test_a_lossless_trial_far_above_the_ndr_makes_it_ill_defined_too() -> None:
    """tc-mirred at 1518 B (issue 29, a quick run of 2026-11-27): small losses at nearly every load
    stopped the search at 0.177 Mpps, while trials passed without loss up to 0.704 Mpps."""
    result = {"trials": [_trial(177_000.0), _trial(186_000.0, lost=132), _trial(240_000.0),
                         _trial(295_000.0, lost=1526), _trial(704_000.0),
                         _trial(704_000.0, lost=71), _trial(900_000.0, excised=True)]}
    around = loss_around_load(result, 177_000.0)
    assert around is not None and around.highest_lossless_pps == 704_000.0
    assert around.lossless_far_above and not around.lossy_far_below and around.ill_defined
    assert around.evidence() == "passed without loss at 0.704 Mpps (4.0x its NDR)"
    assert "a trial passed without loss at 0.704 Mpps (4.0x the NDR)" in around.describe()
    # a search's ordinary mixed loads, within 2x of its NDR: not ill-defined
    near = loss_around_load({"trials": [_trial(300_000.0, lost=5), _trial(350_000.0)]}, 200_000.0)
    assert near is not None and near.highest_lossless_pps == 350_000.0 and not near.ill_defined
