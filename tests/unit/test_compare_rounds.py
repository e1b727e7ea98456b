"""compare's MRR gate (results/compare.py): each round's sample over the baseline's in the same
round, so a run whose host is 1.5x slower throughout is no change, and a switch 20 % slower
against its baseline is one, caught by `--fail-if mrr:-5%`. Synthetic stores: NOT
MEASUREMENTS."""

from __future__ import annotations

import random

from tests.report_fixtures import RUN_ID
from tests.report_fixtures import search_json
from vswbench.campaign.rounds_phase import rounds_point
from vswbench.campaign.spec import parse_spec
from vswbench.results.compare import compare
from vswbench.results.compare import parse_threshold
from vswbench.results.paired import Sample
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "vsbtest-gate"

[[study]]
kind = "search"
switch = ["bridge", "veth"]
scenario = "p2p"
size = 64
preset = "brief"
"""
RATES = {"bridge": 500e3, "veth": 1e6}


def _store(path, mood: float, bridge_factor: float, seed: int):
    spec = parse_spec(SPEC)
    rng = random.Random(seed)
    moods = [mood * (1 + rng.random()) for _ in range(12)]      # the host, round by round
    with ResultStore(path) as s:
        s.begin_run(RUN_ID, spec, None)
        for p in spec.points():
            rate = RATES[p.switch] * (bridge_factor if p.switch == "bridge" else 1.0)
            s.record_point(RUN_ID, p, search_json(p, rate * mood), "done")
            samples = [Sample(p.switch, r, 0, 0.25, int(2e6 * 0.25),
                              int(rate * m * 0.25 * (1 + rng.uniform(-0.03, 0.03))))
                       for r, m in enumerate(moods)]
            s.record_point(RUN_ID, rounds_point(p, 0.25),
                           {"samples": [x.to_json() for x in samples], "rounds": 12}, "done")
        s.end_run(RUN_ID, "done")
    return path.parent


def test_a_slower_host_is_no_change_and_a_slower_switch_is_one(tmp_path) -> None:
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "c").mkdir()
    a = _store(tmp_path / "a" / "results.sqlite", 1.0, 1.0, 1)
    host = _store(tmp_path / "b" / "results.sqlite", 1 / 1.5, 1.0, 2)    # the whole VM slower
    switch = _store(tmp_path / "c" / "results.sqlite", 1.0, 0.8, 3)      # bridge 20 % slower
    gate = [parse_threshold("mrr:-5%")]
    same = compare([a, host], thresholds=gate)
    mrr = {c.label.split()[1]: c for c in same.changes if c.metric == "mrr"}
    assert not mrr["bridge"].significant and not same.failures
    assert not mrr["veth"].significant and "not judged" in mrr["veth"].how   # the baseline
    assert mrr["bridge"].ratio < 0.8                 # the figure moved with the host...
    assert "over veth's in the same round" in mrr["bridge"].how   # ...judged against veth
    slower = compare([a, switch], thresholds=gate)
    (bridge,) = [c for c in slower.changes if c.metric == "mrr" and "bridge" in c.label]
    assert bridge.significant and bridge.ci is not None and bridge.ci[1] < 0.9
    assert slower.failures and "mrr" in slower.failures[0]
