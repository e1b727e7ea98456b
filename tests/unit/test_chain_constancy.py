"""chain_data.constancy_note: the cost model's constant-cost assumption, checked on the switch
daemon's measured CPU per element and packet."""

from vswbench.models.chain_data import ChainData
from vswbench.models.chain_data import CostBreakdown
from vswbench.models.chain_data import constancy_note

GROUP = ("veth", "ovs", 64, True)


def _data(per_bridge: dict[int, float], group=GROUP) -> ChainData:
    parts = tuple(CostBreakdown(group, n, "s_core", 10000.0, 1e5 * n, 5e4, (), None, {},
                                daemon=c * n) for n, c in per_bridge.items())
    return ChainData((), parts, (), ())


def test_a_daemon_whose_cost_per_bridge_drifts_is_flagged():
    note = constancy_note(_data({1: 20000.0, 5: 17000.0, 10: 14700.0}), GROUP)
    assert note is not None
    assert "20,000 cycles at n = 1" in note and "14,700 at n = 10" in note and "-26%" in note


def test_a_constant_daemon_cost_or_no_daemon_gives_no_note():
    assert constancy_note(_data({1: 20000.0, 5: 21000.0, 10: 19000.0}), GROUP) is None
    assert constancy_note(_data({1: 20000.0, 10: 10000.0}), ("veth", "fwd", 64, False)) is None
    assert constancy_note(_data({4: 20000.0}), GROUP) is None      # one length: nothing to compare


def test_only_trials_near_saturation_count():
    # all at 10 kpps: at n = 1 that is far below its maximum rate, whose daemon cost per packet
    # is then dominated by wake-ups; n = 3 and 10 are near theirs and agree
    data = _data({1: 34000.0, 3: 13000.0, 10: 12500.0})
    assert constancy_note(data, GROUP) is not None
    near = {1: 40000.0, 3: 12000.0, 10: 11000.0}
    assert constancy_note(data, GROUP, near) is None
    assert constancy_note(data, GROUP, {1: 12000.0, 3: 12000.0, 10: 11000.0}) is not None
