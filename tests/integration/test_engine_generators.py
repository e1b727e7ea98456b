"""Several generator cores feeding one port (`--generators N --gen-cpus LIST`, xdplive), and the
generator's split of what its port accepted from what the peer refused, in real namespaces.

Each generator is a thread with its own in-kernel generator and its own stream id (its own
sequence space), so the one sink counts loss, order and latency per stream exactly.

    l [l0] ---- [m0] m (bridge, tc drop filter on m0) [m1] ---- [l1] l      loop, two generators
    a [a0] ------------------------- [b0] b (no XDP, GRO off: no NAPI)      the peer refuses all
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_engine_xdplive import Net
from tests.integration.test_engine_xdplive import bridge_loop
from tests.integration.test_engine_xdplive import build_drop_filter
from tests.integration.test_engine_xdplive import clsact_drops
from tests.integration.test_engine_xdplive import counters
from tests.integration.test_engine_xdplive import engine_or_skip
from tests.integration.test_engine_xdplive import final
from tests.integration.test_engine_xdplive import run

pytestmark = pytest.mark.integration
CPUS = "0,1" if (os.cpu_count() or 1) > 1 else "0,0"


@pytest.fixture(scope="module")
def engine() -> Path:
    return engine_or_skip()


@pytest.fixture
def net() -> Iterator[Net]:
    n = Net()
    try:
        yield n
    finally:
        n.close()


def loop2(eng: Path, lns: str, l0: str, l1: str, n: int) -> dict:
    out = run(str(eng), "loop", "--netns", lns, "--port", l0, "--port", l1, "--io", "xdplive",
              "--generators", "2", "--gen-cpus", CPUS, "--count", str(n), "--rate", "20k",
              "--drain", "2", "--drain-quiet", "0.2", timeout=90).stdout
    return final(out)


def by_stream(f: dict) -> dict[int, dict]:
    return {s["stream"]: s for s in f["streams"]}


@pytest.mark.timeout(120)
def test_two_generators_one_port_lossless(engine, net):
    """Lossless through a bridge: every frame of both streams counted once, in order, with a
    latency each. On this shared machine a host stall can hold a veth's NAPI long enough for its
    ring to refuse frames (the kernel counts them): then the loss must be exactly those."""
    if CPUS == "0,0":
        pytest.skip("needs two CPUs")
    lns, l0, l1, m, m0 = bridge_loop(net)
    m1 = m0[:-1] + "1"
    ring0 = counters(m, m1)["tx"]["dropped"]
    n = 20000
    f = loop2(engine, lns, l0, l1, n)
    ring = f["tx_refused"] + counters(m, m1)["tx"]["dropped"] - ring0
    gens = f["generators"]
    assert [(g["stream"], g["cpu"], g["tx_frames"]) for g in gens] == [(1, 0, n // 2), (2, 1, n // 2)], f
    assert f["tx_frames"] == n and f["tx_accepted"] == n - f["tx_refused"], f
    assert f["lost"] == ring and f["rx_unique"] == f["rx_frames"] == n - ring, (ring, f)
    assert (f["duplicated"], f["reordered"], f["malformed"]) == (0, 0, 0), f
    st = by_stream(f)
    assert set(st) == {1, 2}, f["streams"]
    assert sum(s["lost"] for s in st.values()) <= ring   # a stream's trailing loss is the total's
    for s in st.values():
        assert s["reordered"] == 0 and s["latency_us"]["count"] == s["unique"], s
        if ring == 0:
            assert (s["rx_frames"], s["unique"], s["lost"]) == (n // 2, n // 2, 0), s
    assert f["latency_kind"] == "one-way" and f["latency_us"]["count"] == n - ring
    assert sum(c for _, _, c in f["hist"]) == n - ring
    assert 0 < f["latency_us"]["p50"] < 100000


@pytest.mark.timeout(120)
def test_two_generators_exact_loss_with_drop_filter(engine, net, tmp_path):
    if CPUS == "0,0":
        pytest.skip("needs two CPUs")
    prog = build_drop_filter(tmp_path, "DROP_SEQ_MOD=4", "DROP_SEQ_REM=1")
    lns, l0, l1, m, m0 = bridge_loop(net, ["prio", "1", "bpf", "da", "obj", str(prog), "sec", "tc"])
    n = 20000
    m1 = m0[:-1] + "1"
    before, ring0 = clsact_drops(m, m0), counters(m, m1)["tx"]["dropped"]
    f = loop2(engine, lns, l0, l1, n)
    dropped = clsact_drops(m, m0) - before
    # a stalled NAPI can make a veth ring refuse frames on either side of the bridge: l0 -> m0
    # (the engine's tx_refused) and m1 -> l1 (m1's tx_dropped); the loss is exactly the sum
    ring = f["tx_refused"] + counters(m, m1)["tx"]["dropped"] - ring0
    assert f["tx_frames"] == n and f["lost"] == dropped + ring, (dropped, ring, f)
    assert f["rx_unique"] == n - f["lost"] and f["latency_us"]["count"] == n - f["lost"], f
    assert (f["duplicated"], f["reordered"]) == (0, 0), f
    if ring == 0:   # each generator numbers its own frames 0..n/2-1: a quarter of each stream
        assert dropped == n // 4, (dropped, f)
        for s in by_stream(f).values():
            assert (s["unique"], s["lost"], s["reordered"]) == (n // 2 - n // 8, n // 8, 0), s


@pytest.mark.timeout(60)
def test_refused_by_the_peer_reported_apart(engine, net: Net):
    """A veth peer without NAPI (no XDP program, GRO off) takes none of the XDP_TX'd frames: the
    generator's program counted each as sent (tx_frames, achieved_pps) and reports every one as
    refused (tx_refused), none accepted; the port's tx_packets agrees."""
    a, b = net.ns("a"), net.ns("b")
    ia, ib = net.tag + "a0", net.tag + "b0"
    net.veth(a, ia, b, ib)
    net.up(a, ia, "198.18.0.1/30")
    net.up(b, ib, "198.18.0.2/30")
    run("ip", "netns", "exec", b, "ethtool", "-K", ib, "gro", "off")
    out = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--dst-mac",
              "02:00:00:00:00:02", "--count", "5000", "--rate", "50k", "--no-hist").stdout
    f = final(out)
    assert f["tx_frames"] == 5000, f
    assert f["tx_refused"] == 5000 and f["tx_accepted"] == 0 and f["accepted_pps"] == 0, f
    assert f["achieved_pps"] > 0
    assert any("did not reach the veth peer" in w for w in f["warnings"]), f["warnings"]


@pytest.mark.timeout(60)
def test_ring_full_refusals_reported_apart(engine, net: Net):
    """Two generator cores at full speed into one veth queue: the peer's ring (256 frames, one
    NAPI) refuses some of what the programs sent. tx_frames = tx_accepted + tx_refused, exactly:
    the sink (loop's second port) counted every accepted frame and no other, the loss is the
    refused, and the port's tx_packets is what was accepted."""
    if CPUS == "0,0":
        pytest.skip("needs two CPUs")
    lns = net.ns("l")
    a, b = net.tag + "l0", net.tag + "l1"
    net.veth(lns, a, lns, b)
    net.up(lns, a)
    net.up(lns, b)
    c0 = counters(lns, a)["tx"]
    out = run(str(engine), "loop", "--netns", lns, "--port", a, "--port", b, "--io", "xdplive",
              "--generators", "2", "--gen-cpus", CPUS, "--rate", "0", "--duration", "1",
              "--drain", "1", "--drain-quiet", "0.05", "--no-hist", timeout=60).stdout
    f, c1 = final(out), counters(lns, a)["tx"]
    if f["tx_refused"] == 0:
        pytest.skip(f"the peer's ring kept up with two generators here: {f['accepted_pps']:.0f} pps")
    assert f["tx_frames"] == f["tx_accepted"] + f["tx_refused"], f
    assert f["rx_unique"] == f["tx_accepted"] and f["lost"] == f["tx_refused"], f
    assert c1["packets"] - c0["packets"] == f["tx_accepted"], (c0, c1, f)
    # refused = the port's tx_dropped (its peer's ring full) + frames the kernel counted nowhere
    # (seen here: 16 of 164,240 once, under load); either way they never reached the peer
    assert 0 < c1["dropped"] - c0["dropped"] <= f["tx_refused"], (c0, c1, f)
    assert f["accepted_pps"] < f["achieved_pps"]
    assert sum(g["tx_frames"] for g in f["generators"]) == f["tx_frames"]


@pytest.mark.timeout(60)
def test_generators_bad_input(engine, net: Net):
    a, b = net.ns("a"), net.ns("b")
    ia, ib = net.tag + "a0", net.tag + "b0"
    net.veth(a, ia, b, ib)
    net.up(a, ia)
    p = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "afpacket", "--generators", "2",
            check=False)
    assert p.returncode == 2 and "--io xdplive" in p.stderr, p.stderr
    p = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--generators", "2",
            "--gen-cpus", "0", check=False)
    assert p.returncode == 2 and "--gen-cpus" in p.stderr, p.stderr
    p = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--generators", "17",
            check=False)
    assert p.returncode == 2 and "--generators" in p.stderr, p.stderr


@pytest.mark.timeout(60)
def test_copied_binary_needs_no_build_tree(engine, tmp_path):
    """bench/engine_scale runs the engine alone on another machine: the BPF objects (xdplive,
    stallmon) are embedded in the binary (.incbin), so a copy finds them with no build tree."""
    copy = tmp_path / "vswbench-engine"
    shutil.copy2(engine, copy)
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
    p = subprocess.run([str(copy), "probe"], capture_output=True, text=True, timeout=60, env=env,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    xl = next(b for b in json.loads(p.stdout)["backends"] if b["name"] == "xdplive")
    assert xl["usable"] and xl["live_tx_test"], xl
