"""Spec keys of issue 21: profile, pdr_loss and placement unpinned; the PDR loss of a preset."""

from __future__ import annotations

import pytest

from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import make_placement
from vswbench.measure.search import preset

BASE = """
[campaign]
name = "t"
[[study]]
kind = ["search", "latency"]
switch = "bridge"
"""


def test_profile_pdr_loss_and_unpinned_in_points() -> None:
    spec = parse_spec(BASE + 'placement = ["default", "unpinned"]\nprofile = true\n'
                      "pdr_loss = 10\n")
    points = spec.points()
    assert {p.placement for p in points} == {"default", "unpinned"}
    assert all(p.profile for p in points)
    assert all(p.pdr_loss == pytest.approx(0.10) for p in points)
    assert all(p.params()["profile"] is True for p in points)


def test_defaults_keep_the_keys_of_points_measured_before() -> None:
    (search, latency) = parse_spec(BASE).points()[:2]
    assert "profile" not in search.params() and "pdr_loss" not in search.params()


@pytest.mark.parametrize("line,word", [("profile = 1", "true or false"),
                                       ("pdr_loss = 0", "loss percentage"),
                                       ("pdr_loss = [1, 2]", "one number"),
                                       ('placement = "floating"', "placement")])
def test_bad_values_are_refused(line: str, word: str) -> None:
    with pytest.raises(UsageError, match=word):
        parse_spec(BASE + line + "\n")


def test_preset_pdr_loss() -> None:
    p = preset("quick", pdr_loss=0.1)
    goals = {g.name: g.loss_ratio for g in p.goals}
    assert goals == {"NDR": 0.0, "PDR": 0.1}
    assert {g.name: g.loss_ratio for g in preset("quick").goals}["PDR"] == 0.005
    with pytest.raises(UsageError):
        preset("quick", pdr_loss=1.5)


def test_unpinned_placement_pins_nothing() -> None:
    p = make_placement(TrialOptions("bridge", "p2p", unpinned=True), cpus=2)
    assert (p.tester_cpu, p.switch_cpu, p.nf_cpus) == (None, None, ())


def test_profile_at_is_one_extra_trial_not_kept_in_the_session() -> None:
    """search --profile: one more trial at the NDR with profile=True; the search's own trials
    (already judged) are untouched and the extra one is not added to them."""
    from types import SimpleNamespace

    from vswbench.measure.method import profile_at

    calls = []

    class Session:
        trials = ["t1", "t2"]

        def measure(self, rate, duration, *, count=None, profile=False):
            calls.append((rate, duration, profile))
            self.trials.append("extra")
            return SimpleNamespace(result=SimpleNamespace(
                achieved_pps=rate, loss_ratio=0.0, latency_us={}, cycles_per_packet=1.0,
                cpu={}, profile={"cores": {}}))

    s = Session()
    out = profile_at(s, 12345.0)
    assert calls == [(12345.0, 5.0, True)]
    assert s.trials == ["t1", "t2"]
    assert out["offered_pps"] == 12345.0 and out["profile"] == {"cores": {}}
