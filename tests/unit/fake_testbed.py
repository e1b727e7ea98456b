"""A Testbed wired by hand (no kernel): ports planned, MACs made up, next hops l2. Shared by the
unit tests of engine command lines (test_testbed_plan.py, test_chain_nf_plan.py)."""
from __future__ import annotations

from vswbench.run.ids import RunId
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.testbed.build import PortInfo, Testbed, plan_paths, plan_ports


def wired_testbed(spec: str, switch_cls: type, placement: Placement, run_id: RunId) -> Testbed:
    tb = Testbed.__new__(Testbed)
    tb.scenario, tb.switch_cls, tb.placement = parse(spec), switch_cls, placement

    class R:
        id = run_id
    tb.run = R()
    tb.host_ports = plan_ports(tb.scenario, run_id, l3=False)
    tb.paths = plan_paths(tb.scenario)
    tb.ports = {hp.key: PortInfo(hp.key, hp.netns, hp.ifname, hp.ip_cidr,
                                 f"02:00:00:00:00:{i:02x}")
                for i, hp in enumerate(tb.host_ports)}
    tb.next_hop_mac = {(p.src, p.dst): tb.ports[p.dst].mac for p in tb.paths}
    tb.attachments = {}
    tb.switch = None
    return tb
