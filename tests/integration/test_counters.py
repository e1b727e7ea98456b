"""(a) Frames sent by gen = frames counted by sink = the kernel's interface counters."""

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import SINK_IDLE_S
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine
from vswbench.host.netns import ip
from vswbench.host.netns import link_counters
from vswbench.host.netns import run_in

COUNT = 20000


@pytest.mark.timeout(120)
def test_gen_sink_and_kernel_counters_agree(ns_pair, backend, engine, registry):
    a, b = ns_pair.a, ns_pair.b
    before_a, before_b = link_counters(a.netns, a.ifname), link_counters(b.netns, b.ifname)
    sink_args = ["sink", *port_args(b, backend, RX_CPU), "--duration", "60", "--idle", SINK_IDLE_S,
                 "--no-hist"]
    gen_args = ["gen", *port_args(a, backend, TX_CPU), "--count", str(COUNT), "--rate", "50k",
                "--size", "64", "--no-hist"]
    with EngineProcess(sink_args, engine=engine, registry=registry, label="sink") as sink:
        sink.wait_for_record("start", timeout=15)
        gen = run_engine(gen_args, engine=engine, registry=registry, timeout=60)
        sink_result = sink.wait(timeout=20).check()
    sent, got = gen.final, sink_result.final
    tx_kernel = (link_counters(a.netns, a.ifname) - before_a).tx_packets
    rx_kernel = (link_counters(b.netns, b.ifname) - before_b).rx_packets
    summary = (f"{backend}: gen tx={sent.tx_frames} sink rx={got.rx_frames} lost={got.lost} "
               f"kernel tx={tx_kernel} rx={rx_kernel}")
    assert sent.tx_frames == COUNT, summary
    assert got.rx_frames == COUNT, summary
    assert (got.lost, got.duplicated, got.malformed) == (0, 0, 0), summary
    assert tx_kernel == COUNT, summary
    assert rx_kernel == COUNT, summary


def test_a_switch_s_own_igmp_joins_go_out_at_creation(ns_pair):
    """A bridge with multicast snooping (the CNI bridge plugin's, Podman's default network) joins
    224.0.0.106 and repeats its IGMPv3 report within igmpv3_unsolicited_report_interval (1 s by
    default): a report inside a trial's measured phase is a frame the kernel counts at the
    tester's port and the engine never sees (cni-bridge p2p, kernel 2501 against engine 2500,
    2026-12-02). A vsb namespace makes every new interface send its reports within 1 ms."""
    netns = ns_pair.a.netns
    ip("link", "add", "vsbigmpbr", "type", "bridge", "mcast_snooping", "1", netns=netns)
    value = run_in(netns, ["cat", "/proc/sys/net/ipv4/conf/vsbigmpbr/"
                                  "igmpv3_unsolicited_report_interval"]).strip()
    assert value == "1"
