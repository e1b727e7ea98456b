"""Scenario tester-dut without root: what it is, and the placements and switches it refuses."""
from __future__ import annotations

import pytest

from vswbench.errors import UsageError
from vswbench.run.ids import RunId
from vswbench.scenario import Role
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.catalog import all_switches
from vswbench.testbed.cores import dut_cpus
from vswbench.testbed.plan import plan_testbed


def test_tester_dut_is_a_tester_apart_from_the_dut():
    s = parse("tester-dut")
    assert s.name == "tester-dut" and s.apart and not s.sites
    assert [(h.name, h.role) for h in s.hosts] == [("tester", Role.TESTER)]
    assert not parse("p2p").apart


def test_tester_dut_plan_needs_cpus_apart():
    bridge = all_switches()["bridge"]
    plan = plan_testbed(parse("tester-dut"), bridge, RunId("vsb0000"), Placement(0, 1, (1,)))
    assert plan.engine_cpus() == {"tester": 0}
    assert dut_cpus(plan.placement) == {1}
    for bad in (Placement(0, 0, ()), Placement(None, 1, ()), Placement(0, None, ()),
                Placement(0, 1, (0,))):
        with pytest.raises(UsageError, match="tester-dut needs the tester and the DUT"):
            plan_testbed(parse("tester-dut"), bridge, RunId("vsb0000"), bad)


def test_tester_dut_refuses_dpdk_ports():
    dpdk = [cls for cls in all_switches().values() if cls.port_kind == "dpdk"]
    assert dpdk
    for cls in dpdk:
        with pytest.raises(UsageError, match="kernel link"):
            plan_testbed(parse("tester-dut"), cls, RunId("vsb0000"), Placement(0, 1, (1,)))
