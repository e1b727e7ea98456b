"""Paired rounds on real testbeds: a budgeted campaign of two switches builds both testbeds once,
measures each one's points, then samples both in rounds of a random order (at least MIN_ROUNDS),
stores every switch's samples as its rounds point, ranks the group by them, and leaves nothing."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.results.paired import MIN_ROUNDS
from vswbench.results.paired import stored_rounds
from vswbench.results.points import load

VSWBENCH = Path(sys.executable).parent / "vswbench"
SPEC = """
[campaign]
name = "vsbtest-rounds"
budget = "10s"

[[study]]
kind = "search"
switch = ["bridge", "tc-mirred"]
scenario = "p2p"
size = 64
preset = "brief"
"""


@pytest.mark.timeout(300)
def test_two_switches_paired_in_rounds(root, engine, tmp_path):
    from vswbench.campaign.runner import CampaignRunner
    from vswbench.campaign.spec import parse_spec
    from vswbench.report.model import build_model

    out = tmp_path / "out"
    summary = CampaignRunner(parse_spec(SPEC), out).run()
    assert summary.failed == 0 and summary.done >= 2
    data = load(out)
    groups = stored_rounds(data.points)
    assert list(groups) == [("p2p", 64, "")]
    both = groups[("p2p", 64, "")]
    assert set(both) == {"bridge", "tc-mirred"}
    rounds = {s: {x.round: x for x in r.samples} for s, r in both.items()}
    assert set(rounds["bridge"]) == set(rounds["tc-mirred"])        # paired round by round
    assert len(rounds["bridge"]) >= MIN_ROUNDS
    for samples in rounds.values():
        assert all(x.sent > 0 and x.received > 0 and x.duration_s > 0 for x in samples.values())
    for r in rounds["bridge"]:                  # each round samples each switch once
        assert sorted(rounds[s][r].position for s in rounds) == [0, 1]
    verdict = next(v for v in build_model(data).verdicts if v.ranked)
    assert verdict.rounds >= MIN_ROUNDS and f"{verdict.rounds} rounds" in verdict.line
    assert len(verdict.details) == 1
    assert ("carries more than" in verdict.details[0]) or (" tie: " in verdict.details[0])
    run_ids = {str(p.result.get("run_id")) for p in data.points if p.result and
               p.kind == "search"}
    assert len(run_ids) == 2                    # one run scope per kept-up testbed
    assert not [ns for ns in list_namespaces() if any(ns.startswith(r) for r in run_ids)]
