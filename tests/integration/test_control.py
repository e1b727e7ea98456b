"""The engine's control mode (trials as JSON lines on stdin) and clean ends on SIGINT/SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess


def read_record(proc: subprocess.Popen, rtype: str) -> dict:
    """Next record of this type on the engine's stdout (other records are skipped)."""
    for line in proc.stdout:
        rec = json.loads(line)
        if rec["type"] in (rtype, "error"):
            return rec
    raise AssertionError(f"engine ended before a {rtype!r} record: {proc.stderr.read()}")


@pytest.mark.timeout(120)
def test_control_mode_runs_trials_back_to_back(ns_pair, backend, engine, registry):
    a, b = ns_pair.a, ns_pair.b
    reflect_args = ["reflect", *port_args(b, backend, RX_CPU), "--duration", "90", "--no-hist"]
    with EngineProcess(reflect_args, engine=engine, registry=registry, label="reflect") as reflect:
        reflect.wait_for_record("start", timeout=15)
        ctl = subprocess.Popen([str(engine), "control", *port_args(a, backend, TX_CPU), "--no-hist"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, bufsize=1)
        registry.register(f"control engine {ctl.pid}",
                          lambda: (ctl.poll() is None and ctl.kill(), ctl.wait()))
        assert read_record(ctl, "ready")["type"] == "ready"
        finals = []
        for i, (rate, count, size) in enumerate([(10000, 3000, "64"), (20000, 4000, "512"),
                                                 (5000, 1000, "imix")]):
            ctl.stdin.write(json.dumps({"cmd": "trial", "rate": rate, "count": count, "size": size,
                                        "warmup": 0.2}) + "\n")
            rec = read_record(ctl, "final")
            assert rec["type"] == "final", rec
            assert rec["trial"] == i + 1
            assert rec["tx_frames"] == count
            assert rec["rx_unique"] == count, rec
            assert rec["lost"] == 0 and rec["duplicated"] == 0
            assert rec["latency_kind"] == "round-trip"
            assert rec["achieved_pps"] > 0  # pacing accuracy is bench/engine_vs_peers' job
            finals.append(rec)
        # a malformed command is answered with an error record; the process goes on
        ctl.stdin.write('{"cmd": "trial", "rate": "fast"}\n')
        err = read_record(ctl, "final")
        assert err["type"] == "error" and "rate" in err["msg"]
        # an interval of a nanosecond would write a record per poll (120,000 in 0.2 s): refused
        ctl.stdin.write('{"cmd": "trial", "rate": 1000, "duration": 0.2, "interval": 1e-9}\n')
        err = read_record(ctl, "final")
        assert err["type"] == "error" and "interval" in err["msg"], err
        ctl.stdin.write('{"cmd":"quit"}\n')
        ctl.stdin.close()
        assert ctl.wait(timeout=10) == 0
        reflect.stop().check()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_ends_run_with_final_record(ns_pair, engine, registry, sig):
    a = ns_pair.a
    proc = EngineProcess(["gen", *port_args(a, "afpacket", TX_CPU), "--rate", "10k", "--duration", "60",
                          "--interval", "0.2", "--no-hist"], engine=engine, registry=registry, label="gen")
    with proc:
        proc.wait_for_record("interval", timeout=15)
        proc._signal(sig)
        result = proc.wait(timeout=10)
    final = result.final
    assert final.tx_frames > 0
    assert final.raw.get("interrupted") is True


@pytest.mark.timeout(60)
def test_quiet_drain_ends_a_lossy_trial_early(ns_pair, backend, engine, registry):
    """Nobody reflects: every frame is lost. With drain_quiet the answer comes once nothing
    arrived for that long; without it, after the whole drain."""
    ctl = subprocess.Popen([str(engine), "control", *port_args(ns_pair.a, backend, TX_CPU), "--no-hist"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, bufsize=1)
    registry.register(f"control engine {ctl.pid}", lambda: (ctl.poll() is None and ctl.kill(), ctl.wait()))
    assert read_record(ctl, "ready")["type"] == "ready"
    took = {}
    for quiet in (0.01, 0):
        t0 = time.monotonic()
        ctl.stdin.write(json.dumps({"cmd": "trial", "rate": 10000, "count": 1000, "drain": 3,
                                    "drain_quiet": quiet}) + "\n")
        rec = read_record(ctl, "final")
        took[quiet] = time.monotonic() - t0
        assert rec["type"] == "final" and rec["tx_frames"] == 1000 and rec["lost"] == 1000, rec
    assert took[0.01] < 1.5 and took[0] >= 3.0, took   # sending takes 0.1 s
    ctl.stdin.write('{"cmd":"quit"}\n')
    ctl.stdin.close()
    assert ctl.wait(timeout=10) == 0
