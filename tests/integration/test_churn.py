"""Flow churn through a switch (engine/src/churn.h): a trial with --churn reports it, and a receiver
behind Open vSwitch sees the expected number of distinct 5-tuples, each a flow the sender started.

The second test plays its own small testbed (test_switch_ovs.ovs_bed: OVS between two host
namespaces): the engine generates with churn in one host, and a raw AF_PACKET socket in the other
counts the distinct (source address, source port, destination address, destination port) of the
engine's frames (the "VSB" signature), until no frame came for a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_switch_ovs import IP1
from tests.integration.test_switch_ovs import IP2
from tests.integration.test_switch_ovs import available
from tests.integration.test_switch_ovs import ovs_bed
from vswbench.engine.process import find_engine
from vswbench.engine.process import run_engine

ROOT = Path(__file__).resolve().parents[2]
ARRIVAL, LIFE, RATE, SECONDS = 500.0, 0.4, 20_000, 2.0

COUNTER = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
print("ready", flush=True)
seen, frames, last, start = set(), 0, None, time.monotonic()
while True:
    try:
        f = s.recv(2048)
    except socket.timeout:
        if (last and time.monotonic() - last > 1.0) or time.monotonic() - start > 30:
            break
        continue
    if len(f) < 45 or f[23] != 17 or f[42:45] != b"VSB":
        continue
    frames += 1
    last = time.monotonic()
    seen.add(f[26:38])          # source and destination address, source and destination port
print(json.dumps({"frames": frames, "tuples": len(seen),
                  "sports": len({t[8:10] for t in seen})}), flush=True)
"""


def vswbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "vswbench", *args], capture_output=True, text=True,
                          timeout=240, env=env, check=False)


@pytest.mark.timeout(300)
def test_trial_through_ovs_reports_churn(root) -> None:
    available("ovs")
    proc = vswbench("trial", "--switch", "ovs", "--rate", str(RATE), "--duration", str(SECONDS),
                    "--churn", f"{ARRIVAL:g}/{LIFE:g}", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    churn = data["churn"]
    assert (churn["arrival"], churn["life"], churn["active"]) == (ARRIVAL, LIFE, ARRIVAL * LIFE)
    # flows live at some time of the measured period: arrival x (duration + life), the period
    # being the schedule's (a loaded VM's generator may fall a little short of it)
    (final,) = (e["final"] for e in data["engines"].values())
    sent_s = final["tx_frames"] / RATE
    assert sent_s > 0.8 * SECONDS
    assert churn["flows"] == pytest.approx(ARRIVAL * (sent_s + LIFE), rel=0.03)
    (tester,) = data["engines"].values()
    args = tester["args"]
    assert args[args.index("--io") + 1] == "afpacket"          # auto: no in-kernel generator
    assert args[args.index("--flow-arrival") + 1] == "500" and "--flow-life" in args
    assert data["achieved_pps"] > 0.5 * RATE


@pytest.mark.timeout(300)
def test_receiver_sees_the_distinct_flows(root, registry, run_id) -> None:
    cls = available("ovs")
    engine = find_engine()
    with ovs_bed(cls, run_id, registry, {"ovs_mode": "normal"}) as bed:
        counter = subprocess.Popen(["ip", "netns", "exec", bed.b.host.netns, sys.executable, "-c",
                                    COUNTER, bed.b.host.ifname], stdout=subprocess.PIPE,
                                   text=True)
        registry.register(f"counter {counter.pid}", lambda: counter.kill() if counter.poll() is None
                          else None)
        assert counter.stdout is not None and counter.stdout.readline().strip() == "ready"
        gen = ["gen", "--netns", bed.a.host.netns, "--port", bed.a.host.ifname, "--io", "afpacket",
               "--rate", str(RATE), "--duration", str(SECONDS), "--flow-arrival", f"{ARRIVAL:g}",
               "--flow-life", f"{LIFE:g}", "--dst-mac", bed.b.host_mac, "--dst-ip", IP2,
               "--src-ip", IP1, "--no-hist"]
        final = run_engine(gen, engine=engine, registry=registry, state=bed.state,
                           timeout=60).final
        out, _ = counter.communicate(timeout=40)
    got = json.loads(out.strip().splitlines()[-1])
    started = int(final.raw["churn_flows"])
    where = f"gen: {final.tx_frames} frames, {started} flows; receiver: {got}"
    assert started == pytest.approx(ARRIVAL * (final.tx_frames / RATE + LIFE), rel=0.03), where
    assert final.raw["churn_space"] == 65536 - 1024, where
    # every frame that arrived belongs to a flow the sender started, each flow its own tuple (here
    # its own source port), and nearly all of them arrived (a busy VM may drop frames, even many,
    # but a flow carries about RATE / (ARRIVAL x LIFE) x LIFE = 40: a flow is rarely lost whole)
    assert got["tuples"] == got["sports"] <= started, where
    assert got["tuples"] >= 0.9 * started, where
    assert got["frames"] >= 0.7 * final.tx_frames, where


@pytest.mark.timeout(120)
@pytest.mark.parametrize("io, status, what", [
    ("xdplive", 3, "in-kernel generator sends a fixed"), ("udp", 3, "one socket per flow"),
    ("afpacket", 2, "live flows would share a 5-tuple")])
def test_engine_refuses_churn_it_cannot_do(ns_pair, engine, io, status, what) -> None:
    arrival = "100000" if io == "afpacket" else "100"
    proc = subprocess.run([str(engine), "gen", "--netns", ns_pair.a.netns, "--port", ns_pair.a.ifname,
                           "--io", io, "--flow-arrival", arrival, "--flow-life", "1",
                           "--duration", "0.2"], capture_output=True, text=True, timeout=60,
                          check=False)
    if io == "xdplive" and "built without" in proc.stderr:
        pytest.skip("engine built without xdplive")
    assert proc.returncode == status, proc.stderr
    assert what in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.timeout(120)
def test_control_mode_churn_per_trial(ns_pair, engine) -> None:
    """Control mode: churn per trial, a bad churn answered by an error record, and a later trial's
    flows take fresh tuples (the engine carries its flow ids on)."""
    cmds = [{"cmd": "trial", "mode": "gen", "duration": 0.5, "rate": 10000, "flow_arrival": 100},
            {"cmd": "trial", "mode": "gen", "duration": 0.5, "rate": 10000, "flow_arrival": 200,
             "flow_life": 0.5},
            {"cmd": "trial", "mode": "gen", "duration": 0.3, "rate": 10000}]
    text = "".join(json.dumps(c) + "\n" for c in cmds) + '{"cmd":"quit"}\n'
    proc = subprocess.run([str(engine), "control", "--netns", ns_pair.a.netns, "--port",
                           ns_pair.a.ifname, "--io", "afpacket"], input=text, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in proc.stdout.splitlines()]
    errors = [r for r in recs if r["type"] == "error"]
    finals = [r for r in recs if r["type"] == "final"]
    assert len(errors) == 1 and "go together" in errors[0]["msg"]
    churned, plain = finals
    assert (churned["flow_arrival"], churned["flow_life"], churned["churn_active"]) == (200, 0.5, 100)
    assert churned["churn_flows"] == pytest.approx(200 * (churned["tx_frames"] / 10000 + 0.5),
                                                   rel=0.05)
    assert "flow_arrival" not in plain and "churn_flows" not in plain
