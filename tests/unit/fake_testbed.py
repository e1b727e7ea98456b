"""A testbed plan with a made-up Wiring (no kernel): ports planned, MACs made up. Shared by the
unit tests of engine command lines (test_testbed_plan.py, test_chain_nf_plan.py)."""
from __future__ import annotations

from collections.abc import Mapping

from vswbench.run.ids import RunId
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.testbed.plan import PortInfo
from vswbench.testbed.plan import TestbedPlan
from vswbench.testbed.plan import Wiring
from vswbench.testbed.plan import plan_testbed


def fake_wiring(plan: TestbedPlan) -> Wiring:
    """Every host port with a made-up MAC, 02:00:00:00:00:<index>; gateways 02:00:00:00:01:<i>."""
    ports = {hp.key: PortInfo(hp.key, hp.netns, hp.ifname, hp.ip_cidr, f"02:00:00:00:00:{i:02x}")
             for i, hp in enumerate(plan.host_ports)}
    gateways = {key: f"02:00:00:00:01:{i:02x}" for i, key in enumerate(plan.gateway_ports)}
    return Wiring(ports, gateways)


def wired_plan(spec: str, switch_cls: type, placement: Placement, run_id: RunId,
               options: Mapping[str, str] | None = None) -> tuple[TestbedPlan, Wiring]:
    plan = plan_testbed(parse(spec), switch_cls, run_id, placement, options)
    return plan, fake_wiring(plan)
