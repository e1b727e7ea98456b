"""chain_data.constancy_note: the cost model's constant-cost assumption, checked on the switch
daemon's measured CPU per element and packet."""

from vswbench.models.chain_data import ChainData, CostBreakdown, constancy_note

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
