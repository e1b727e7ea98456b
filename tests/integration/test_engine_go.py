"""--go-on-stdin: the engine opens its ports, prints its start record and sends nothing until a
line arrives on stdin (a trial through a switch that enables its ports late asks the switch in
between); stdin ending first is exit 2 with a message, a signal a final record without traffic."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess
from vswbench.host.netns import link_counters

GEN = ["gen", "--rate", "1k", "--count", "50", "--drain", "0.05"]


def _gated(ns_pair, engine) -> EngineProcess:
    return EngineProcess([*GEN, *port_args(ns_pair.a, "afpacket", TX_CPU), "--go-on-stdin"],
                         engine=engine, interactive=True, label="gated gen")


def _tx_packets(end) -> int:
    return link_counters(end.netns, end.ifname).tx_packets


@pytest.mark.timeout(60)
def test_traffic_waits_for_the_go_line(root, engine, ns_pair):
    with _gated(ns_pair, engine) as gen:
        gen.wait_for_record("start", 10)
        before = _tx_packets(ns_pair.a)
        time.sleep(0.2)     # a generator that did not wait would have sent 200 frames by now
        assert _tx_packets(ns_pair.a) == before, "frames left before the go line"
        gen.go()
        result = gen.wait(timeout=20).check()
    assert result.final.tx_frames == 50
    assert gen.traffic_start_ns() == gen.go_ns


@pytest.mark.timeout(60)
def test_stdin_ending_first_is_exit_2_and_a_signal_ends_without_traffic(root, engine, ns_pair):
    argv = [str(engine), *GEN, *port_args(ns_pair.a, "afpacket", TX_CPU), "--go-on-stdin"]
    ended = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=30)
    assert ended.returncode == 2, ended.stderr
    assert "--go-on-stdin: stdin ended before its go line" in ended.stderr

    with _gated(ns_pair, engine) as gen:
        gen.wait_for_record("start", 10)
        gen.send_signal(signal.SIGTERM)
        result = gen.wait(timeout=20)
    assert result.returncode == 0, result.stderr
    assert result.final.tx_frames == 0
