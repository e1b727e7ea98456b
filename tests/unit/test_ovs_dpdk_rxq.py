"""OVS-DPDK's port readiness from pmd-rxq-show (OVS 3.1's text): a vhost-user queue is polled
once "(enabled)"; a trial's drivers wait for every port of the testbed."""

from vswbench.switches.base import Switch
from vswbench.switches.catalog import all_switches
from vswbench.switches.ovs.dpdk import parse_rxq_states

SHOWN = """\
Displaying last 60 seconds pmd usage %
pmd thread numa_id 0 core_id 1:
  isolated : false
  port: vsb66ccvhu0       queue-id:  0 (enabled)   pmd usage:  0 %
  port: vsb66ccvhu1       queue-id:  0 (disabled)  pmd usage: NOT AVAIL
  port: vsb66ccvhu2       queue-id:  0 (enabled)   pmd usage: NOT AVAIL
  port: vsb66ccvhu2       queue-id:  1 (disabled)  pmd usage: NOT AVAIL
  overhead:  0 %
"""


def test_each_queue_of_each_port_is_enabled_or_not() -> None:
    assert parse_rxq_states(SHOWN) == {"vsb66ccvhu0": [True], "vsb66ccvhu1": [False],
                                       "vsb66ccvhu2": [True, False]}


def test_no_pmd_no_ports() -> None:
    assert parse_rxq_states("") == {}
    assert parse_rxq_states("pmd thread numa_id 0 core_id 1:\n  isolated : false\n") == {}


def test_only_ovs_dpdk_enables_its_ports_late() -> None:
    late = {name for name, cls in all_switches().items() if cls.enables_ports_late}
    assert late == {"ovs-dpdk"}
    assert Switch.ports_polled is not all_switches()["ovs-dpdk"].ports_polled
