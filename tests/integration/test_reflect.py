"""(c) Round trips through reflect are positive and sane."""

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine

COUNT = 5000


@pytest.mark.timeout(120)
def test_reflect_round_trip_is_sane(ns_pair, backend, engine, registry):
    a, b = ns_pair.a, ns_pair.b
    reflect_args = ["reflect", *port_args(b, backend, RX_CPU), "--duration", "60", "--no-hist"]
    loop_args = ["loop", *port_args(a, backend, TX_CPU), "--count", str(COUNT), "--rate", "10k",
                 "--size", "64"]
    with EngineProcess(reflect_args, engine=engine, registry=registry, label="reflect") as reflect:
        reflect.wait_for_record("start", timeout=15)
        loop = run_engine(loop_args, engine=engine, registry=registry, timeout=60)
        reflect.stop().check()
    final = loop.final
    lat = final.latency_us
    assert final.tx_frames == COUNT
    assert final.rx_frames >= 0.99 * COUNT, f"only {final.rx_frames} of {COUNT} came back"
    assert final.latency_kind == "round-trip"
    assert lat is not None and lat.count > 0
    assert 0 < lat.p50 < 10_000, f"p50 {lat.p50} us"
    assert 0 < lat.min <= lat.p50 <= lat.p99 <= lat.max, lat
    assert final.hist, "the loop's final record should carry its histogram"
    assert sum(bucket.count for bucket in final.hist) == lat.count
