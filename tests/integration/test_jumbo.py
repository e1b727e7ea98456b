"""Frames above 1518 B (issue 32): what each engine I/O really carries over a veth pair at MTU 9000
(1000 frames sent, counted at the sink), the engine's refusals (exit 2, naming the size, the limit
and the fix), and a bridge p2p trial of 9018-byte frames: lossless, its links at MTU 9000,
nothing left behind; a switch that cannot take them (xdp) exits 3 with the reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import SINK_IDLE_S
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from tests.integration.integration_helpers import processes_mentioning
from vswbench.engine.probe import ProbeResult
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.host.pair import NamespacePair
from vswbench.host.tuning import set_mtu

COUNT = 1000
VSWBENCH = Path(sys.executable).parent / "vswbench"


def _final(text: str) -> dict:
    return next(json.loads(line) for line in text.splitlines() if '"final"' in line)


def send(engine: Path, pair: NamespacePair, tx_io: str, rx_io: str, size: int,
         *rx_extra: str) -> tuple[subprocess.CompletedProcess, dict | None]:
    """COUNT frames of `size` from a to b at 10 kpps: the gen's exit, the sink's final record."""
    sink = subprocess.Popen([str(engine), "sink", *port_args(pair.b, rx_io, RX_CPU), "--duration",
                             "3", "--idle", SINK_IDLE_S, *rx_extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        started = sink.stdout.readline()    # its start record: the port is open
        assert '"start"' in started, f"the sink did not start: {started!r}"
        gen = subprocess.run([str(engine), "gen", *port_args(pair.a, tx_io, TX_CPU), "--size",
                              str(size), "--rate", "10k", "--count", str(COUNT), "--duration",
                              "1"], capture_output=True, text=True, timeout=30)
        if gen.returncode != 0:
            sink.terminate()    # nothing will come: our own child, by PID
        out, _ = sink.communicate(timeout=30)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    return gen, (_final(out) if gen.returncode == 0 else None)


def _usable(probe_result: ProbeResult, name: str):
    info = probe_result.backend(name)
    if info is None or not info.usable:
        pytest.skip(f"{name}: {'not in the probe' if info is None else info.reason}")
    return info


@pytest.mark.timeout(120)
@pytest.mark.parametrize("io,rx", [("afpacket", ()), ("afpacket", ("--rx-ring", "v2")),
                                   ("udp", ())])
def test_9018_byte_frames_arrive_whole(engine, probe_result, ns_pair, io, rx):
    info = _usable(probe_result, io)
    assert info.max_frame == 9018
    set_mtu([ns_pair.a.netns, ns_pair.b.netns], 9000)
    gen, sink = send(engine, ns_pair, io, io, 9018, *rx)
    assert gen.returncode == 0, gen.stderr
    assert sink is not None and sink["rx_unique"] == COUNT, sink


@pytest.mark.timeout(120)
def test_afxdp_carries_its_stated_limit_and_no_more(engine, probe_result, ns_pair):
    info = _usable(probe_result, "afxdp")
    assert info.max_frame == 1796
    set_mtu([ns_pair.a.netns, ns_pair.b.netns], 9000)
    gen, sink = send(engine, ns_pair, "afxdp", "afxdp", 1796)
    assert gen.returncode == 0, gen.stderr
    assert sink is not None and sink["rx_unique"] == COUNT, sink
    gen, _ = send(engine, ns_pair, "afxdp", "afxdp", 1797)
    assert gen.returncode == 2
    assert "--io afxdp carries frames up to 1796 B; use --io afpacket for frames above 1796 B" \
        in gen.stderr


@pytest.mark.timeout(60)
def test_refusals_exit_2(engine, probe_result, ns_pair):
    gen, _ = send(engine, ns_pair, "afpacket", "afpacket", 9018)   # links still at MTU 1500
    assert gen.returncode == 2
    assert f"port {ns_pair.a.ifname} has MTU 1500, which carries frames up to 1518 B" in gen.stderr
    assert f"ip link set {ns_pair.a.ifname} mtu 9000" in gen.stderr
    if probe_result.backend("xdplive") is not None and probe_result.backend("xdplive").usable:
        gen, _ = send(engine, ns_pair, "xdplive", "afpacket", 1519)
        assert gen.returncode == 2
        assert "--io xdplive carries frames up to 1518 B; use --io afpacket" in gen.stderr


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VSWBENCH), *argv], capture_output=True, text=True, timeout=240)


def _left(run_id: str) -> tuple[list[str], list[str]]:
    return ([ns for ns in list_namespaces() if run_id in ns], processes_mentioning(run_id))


@pytest.mark.timeout(300)
def test_bridge_p2p_trial_of_9018_byte_frames(root, engine):
    from vswbench.switches.catalog import all_switches

    avail = all_switches()["bridge"].availability()
    if not avail.ok:
        pytest.skip(f"bridge: {avail.reason}")
    before = set(list_namespaces())
    proc = _cli("trial", "--switch", "bridge", "--scenario", "p2p", "--size", "9018", "--io",
                "afpacket", "--rate", "10k", "--duration", "0.5", "--warmup", "0", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    trial = data["trials"][0] if "trials" in data else data
    assert trial["frame_size"] == 9018
    assert trial["tx_frames"] > 0 and trial["lost"] == 0, (trial["tx_frames"], trial["lost"])
    assert trial["mtu"] == 9000 and trial["mtu_links"]
    assert set(trial["mtu_links"].values()) == {9000}
    assert all(e["args"][e["args"].index("--io") + 1] == "afpacket"
               for e in trial["engines"].values())
    found = re.search(r"run (vsb\w+):", proc.stderr + proc.stdout)
    assert found, proc.stderr
    run_id = found.group(1)
    assert all(key.startswith(run_id) for key in trial["mtu_links"])
    assert set(list_namespaces()) - before == set()
    assert _left(run_id) == ([], [])
    assert not [link for link in ip_json("link") if str(link.get("ifname", "")).startswith(run_id)]


@pytest.mark.timeout(120)
def test_refused_combinations(root, engine):
    proc = _cli("trial", "--switch", "xdp", "--size", "9018", "--rate", "10k", "--duration",
                "0.5")
    assert proc.returncode == 3, proc.stderr
    assert "frame size 9018 B (MTU 9000)" in proc.stderr and "frags" in proc.stderr
    proc = _cli("trial", "--switch", "bridge", "--size", "9018", "--io", "xdplive", "--rate",
                "10k", "--duration", "0.5")
    assert proc.returncode == 2, proc.stderr
    assert "--io xdplive carries frames up to 1518 B; use --io afpacket" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.timeout(120)
def test_xdp_switch_ports_refuse_mtu_9000(root, engine):
    """What the xdp switch's refusal states, measured: its veth ports with the XDP program
    attached do not take MTU 9000 (the testbed then exits 3, TuningUnsupported)."""
    from vswbench.host.tuning import TuningUnsupported
    from vswbench.measure.plan import TrialOptions
    from vswbench.measure.plan import make_placement
    from vswbench.run.scope import run_scope
    from vswbench.scenario import parse
    from vswbench.switches.catalog import all_switches
    from vswbench.testbed.build import Testbed

    cls = all_switches()["xdp"]
    avail = cls.availability()
    if not avail.ok:
        pytest.skip(f"xdp: {avail.reason}")
    placement = make_placement(TrialOptions(switch="xdp", scenario="p2p"))
    with (pytest.raises(TuningUnsupported) as e,
          run_scope() as run,
          Testbed(parse("p2p"), cls, run, placement, mtu=9000)):
        pass
    assert e.value.exit_code == 3 and "MTU 9000" in str(e.value)
    assert not [ns for ns in list_namespaces() if str(run.id) in ns]


@pytest.mark.timeout(120)
def test_control_mode_trials_of_9018_and_64_bytes(engine, ns_pair, registry):
    """The search and latency sessions' path: a control engine and a reflector at MTU 9000 take
    9018-byte trials round trip (and 64-byte ones on the same ports); at MTU 1500 a 9018-byte
    trial is answered with an error naming the MTU, and the engine goes on."""
    from vswbench.engine.process import EngineProcess

    a, b = ns_pair.a, ns_pair.b
    set_mtu([a.netns, b.netns], 9000)
    reflect_args = ["reflect", *port_args(b, "afpacket", RX_CPU), "--duration", "60", "--no-hist"]
    with EngineProcess(reflect_args, engine=engine, registry=registry, label="reflect") as reflect:
        reflect.wait_for_record("start", timeout=15)
        ctl = subprocess.Popen([str(engine), "control", *port_args(a, "afpacket", TX_CPU),
                                "--size", "9018", "--no-hist"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        registry.register(f"control engine {ctl.pid}",
                          lambda: (ctl.poll() is None and ctl.kill(), ctl.wait()))

        def record() -> dict:
            assert ctl.stdout is not None
            for line in ctl.stdout:
                rec = json.loads(line)
                if rec["type"] in ("ready", "final", "error"):
                    return rec
            raise AssertionError("the control engine ended")

        assert record()["type"] == "ready"
        assert ctl.stdin is not None
        for size in ("9018", "64", "9018"):
            ctl.stdin.write(json.dumps({"cmd": "trial", "rate": 10000, "count": 2000,
                                        "size": size, "warmup": 0}) + "\n")
            rec = record()
            assert rec["type"] == "final", rec
            assert rec["rx_unique"] == 2000 and rec["lost"] == 0, rec
        ctl.stdin.write('{"cmd":"quit"}\n')
        ctl.stdin.close()
        assert ctl.wait(timeout=10) == 0
        reflect.stop().check()
    set_mtu([a.netns, b.netns], 1500)
    ctl = subprocess.Popen([str(engine), "control", *port_args(a, "afpacket", TX_CPU), "--no-hist"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, bufsize=1)
    registry.register(f"control engine {ctl.pid}",
                      lambda: (ctl.poll() is None and ctl.kill(), ctl.wait()))
    assert record()["type"] == "ready"
    assert ctl.stdin is not None
    ctl.stdin.write(json.dumps({"cmd": "trial", "rate": 1000, "count": 10, "size": "9018"}) + "\n")
    err = record()
    assert err["type"] == "error" and "MTU 1500" in err["msg"], err
    ctl.stdin.write('{"cmd":"quit"}\n')
    ctl.stdin.close()
    assert ctl.wait(timeout=10) == 0
