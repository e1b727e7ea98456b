"""(a) Frames sent by gen = frames counted by sink = the kernel's interface counters."""

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine
from vswbench.host.netns import link_counters

COUNT = 20000


@pytest.mark.timeout(120)
def test_gen_sink_and_kernel_counters_agree(ns_pair, backend, engine, registry):
    a, b = ns_pair.a, ns_pair.b
    before_a, before_b = link_counters(a.netns, a.ifname), link_counters(b.netns, b.ifname)
    sink_args = ["sink", *port_args(b, backend, RX_CPU), "--duration", "60", "--idle", "1",
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
