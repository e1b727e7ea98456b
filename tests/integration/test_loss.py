"""(b) Loss injected by a tc drop filter is reported exactly.

The kernel here has no gact ("action drop") and no flower/matchall, but it has cls_bpf, u32 and
mirred, so the drop filter is a small BPF program (drop_filter.bpf.c). XDP (the afxdp sink) sees
frames before tc ingress, so the filter cannot sit on the receiver's own veth. Frames pass a relay
namespace m instead:

    a [a0] ---- [ma] m [mb] ---- [b0] b
                 |
                 clsact ingress: prio 1 bpf (drop a deterministic subset), prio 2 u32 -> mirred mb

The kernel counts what the filter dropped (the clsact qdisc's drop counter); the sink must report
exactly that as lost.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import SINK_IDLE_S
from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine
from vswbench.host.netns import Namespace
from vswbench.host.netns import VethPair
from vswbench.host.netns import add_address
from vswbench.host.netns import mac_address
from vswbench.host.netns import run
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import set_offload
from vswbench.host.pair import Endpoint

COUNT = 20000
EVERY = 4          # the sequence filter drops seq % 4 == 1: a quarter, never the first or last
FLOWS = 4          # the flow filter drops source port 1025: flow 1 of 1024..1027
DROP_SPORT = 1025
HERE = Path(__file__).parent


@dataclass(frozen=True)
class Relay:
    a: Endpoint
    b: Endpoint
    netns: str
    ingress: str  # m's interface facing a, where the drop filter sits


def build_program(out: Path, *defines: str) -> Path:
    argv = ["clang", "-O2", "-g", "-target", "bpf", "-I/usr/include/x86_64-linux-gnu",
            *(f"-D{d}" for d in defines), "-c", str(HERE / "drop_filter.bpf.c"), "-o", str(out)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        pytest.skip("clang not installed: cannot build the tc drop program")
    if proc.returncode != 0:
        pytest.skip(f"cannot build the BPF drop program: {proc.stderr.strip()[-500:]}")
    return out


@pytest.fixture(scope="session")
def drop_by_seq(tmp_path_factory) -> Path:
    return build_program(tmp_path_factory.mktemp("bpf") / "drop_seq.o",
                         f"DROP_SEQ_MOD={EVERY}", "DROP_SEQ_REM=1")


@pytest.fixture(scope="session")
def drop_by_sport(tmp_path_factory) -> Path:
    return build_program(tmp_path_factory.mktemp("bpf") / "drop_sport.o",
                         f"DROP_SPORT={DROP_SPORT}")


@pytest.fixture
def make_relay(root, registry, run_id) -> Callable[[Path], Relay]:
    def make(program: Path) -> Relay:
        ns_a, ns_m, ns_b = (run_id.name(s) for s in ("a", "m", "b"))
        if_a, if_ma, if_mb, if_b = (run_id.ifname(s) for s in ("a0", "ma", "mb", "b0"))
        for ns in (ns_a, ns_m, ns_b):
            Namespace(ns, registry).__enter__()  # removed by the registry after the test
        left = VethPair(if_a, ns_a, if_ma, ns_m, registry).__enter__()
        right = VethPair(if_mb, ns_m, if_b, ns_b, registry).__enter__()
        add_address(ns_a, if_a, "198.18.0.1/30")
        add_address(ns_b, if_b, "198.18.0.2/30")
        # Frames leave the stack in m (mirred) and may land in an XDP socket: real checksums.
        set_offload(ns_a, if_a, tx=False)
        tc = ["tc", "-n", ns_m]
        run([*tc, "qdisc", "add", "dev", if_ma, "clsact"])
        run([*tc, "filter", "add", "dev", if_ma, "ingress", "prio", "1", "bpf", "da", "obj",
             str(program), "sec", "tc"])
        run([*tc, "filter", "add", "dev", if_ma, "ingress", "prio", "2", "protocol", "all",
             "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev",
             if_mb])
        left.up()
        right.up()
        mac_a, mac_b = mac_address(ns_a, if_a), mac_address(ns_b, if_b)
        set_neighbour(ns_a, if_a, "198.18.0.2", mac_b)
        set_neighbour(ns_b, if_b, "198.18.0.1", mac_a)
        return Relay(Endpoint(ns_a, if_a, "198.18.0.1", mac_a),
                     Endpoint(ns_b, if_b, "198.18.0.2", mac_b), ns_m, if_ma)

    return make


def clsact_drops(netns: str, ifname: str) -> int:
    qdiscs = json.loads(run(["tc", "-s", "-j", "-n", netns, "qdisc", "show", "dev", ifname]))
    return next(int(q["drops"]) for q in qdiscs if q.get("kind") == "clsact")


@dataclass(frozen=True)
class Outcome:
    sent: int
    received: int
    lost: int
    duplicated: int
    malformed: int
    dropped_by_tc: int

    def __str__(self) -> str:
        return (f"gen tx={self.sent} sink rx={self.received} lost={self.lost} "
                f"tc dropped={self.dropped_by_tc}")


def gen_through_filter(relay: Relay, backend: str, engine, registry, flows: int) -> Outcome:
    drops_before = clsact_drops(relay.netns, relay.ingress)
    sink_args = ["sink", *port_args(relay.b, backend, RX_CPU), "--duration", "60", "--idle", SINK_IDLE_S,
                 "--no-hist"]
    gen_args = ["gen", *port_args(relay.a, backend, TX_CPU), "--count", str(COUNT),
                "--rate", "50k", "--flows", str(flows), "--flow-field", "sport", "--size", "64",
                "--no-hist"]
    with EngineProcess(sink_args, engine=engine, registry=registry, label="sink") as sink:
        sink.wait_for_record("start", timeout=15)
        gen = run_engine(gen_args, engine=engine, registry=registry, timeout=60)
        got = sink.wait(timeout=20).check().final
    return Outcome(gen.final.tx_frames, got.rx_frames, got.lost, got.duplicated, got.malformed,
                   clsact_drops(relay.netns, relay.ingress) - drops_before)


@pytest.mark.timeout(120)
def test_tc_drop_is_reported_exactly(make_relay, drop_by_seq, backend, engine, registry):
    out = gen_through_filter(make_relay(drop_by_seq), backend, engine, registry, flows=1)
    assert out.sent == COUNT, f"{backend}: {out}"
    assert out.dropped_by_tc == COUNT // EVERY, f"{backend}: {out}"
    assert out.lost == out.dropped_by_tc, f"{backend}: {out}"
    assert out.received == COUNT - out.dropped_by_tc, f"{backend}: {out}"
    assert (out.duplicated, out.malformed) == (0, 0), f"{backend}: {out}"


@pytest.mark.timeout(120)
def test_flows_take_equal_shares(make_relay, drop_by_sport, backend, engine, registry):
    """--flows 4 should cycle the source port frame by frame: exactly a quarter has port 1025."""
    out = gen_through_filter(make_relay(drop_by_sport), backend, engine, registry, flows=FLOWS)
    assert out.sent == COUNT, f"{backend}: {out}"
    assert out.received == COUNT - out.dropped_by_tc, f"{backend}: {out}"
    assert out.dropped_by_tc == COUNT // FLOWS, (
        f"{backend}: {out.dropped_by_tc} of {COUNT} frames had source port {DROP_SPORT}, "
        f"not {COUNT // FLOWS}: the flows do not take turns frame by frame")
    assert out.lost == out.dropped_by_tc, f"{backend}: {out}"
