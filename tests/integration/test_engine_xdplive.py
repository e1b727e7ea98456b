"""The engine's xdplive backend (frames built by BPF_PROG_RUN with live frames, accounted by an XDP
sink program) against the kernel's own counters, in real namespaces.

Self-contained: drives the engine binary with subprocess and iproute2; imports nothing from the
vswbench package. Every namespace is named vsbxl<pid><n>..., removed after each test even when it
fails. Skips (with the probe's reason) where live frames do not work.

    a [a0] ------------------------- [b0] b          counts, pacing, signals
    a [a0] ---- [ma] m [mb] ---- [b0] b              loss (tc BPF drop filter), duplicates (mirred)
    l [l0] ---- [m0] m (bridge) [m1] ---- [l1] l     loop: one process, one-way latency
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import SINK_IDLE_S

HERE = Path(__file__).resolve().parent
ENGINE = Path(os.environ.get("VSWBENCH_ENGINE", HERE.parents[1] / "engine/build/vswbench-engine"))
TX_CPU, RX_CPU = "0", "1" if (os.cpu_count() or 1) > 1 else "0"
_seq = itertools.count()

pytestmark = pytest.mark.integration


def run(*argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


def records(out: str) -> list[dict]:
    return [json.loads(x) for x in out.splitlines() if x.startswith("{")]


def final(out: str) -> dict:
    f = [r for r in records(out) if r["type"] == "final"]
    assert f, f"no final record in: {out[-600:]}"
    return f[-1]


@pytest.fixture(scope="module")
def engine() -> Path:
    return engine_or_skip()


def engine_or_skip() -> Path:
    """The engine binary, or a skip with the reason live frames cannot be tested here."""
    if os.geteuid() != 0:
        pytest.skip("needs root (creates network namespaces, loads BPF programs)")
    if not os.access(ENGINE, os.X_OK):
        pytest.skip(f"engine not built: {ENGINE} (make -C engine)")
    probe = json.loads(run(str(ENGINE), "probe").stdout)
    info = next((b for b in probe["backends"] if b["name"] == "xdplive"), None)
    if info is None or not info["compiled"]:
        pytest.skip(f"xdplive not compiled in: {info and info.get('reason')}")
    if not info["usable"]:
        pytest.skip(f"xdplive not usable here: {info['reason']}")
    if not info.get("live_tx_test"):
        pytest.skip(f"live frames do not reach a veth peer here: {info.get('live_tx_reason')}")
    return ENGINE


class Net:
    """Namespaces and veth pairs of one test; all removed in close() (deleting a namespace deletes
    its interfaces, and with them any XDP program or tc filter on them)."""

    def __init__(self) -> None:
        self.tag = f"vsbxl{os.getpid() % 100000:05d}{next(_seq) % 10}"
        self.namespaces: list[str] = []

    def ns(self, suffix: str) -> str:
        name = self.tag + suffix
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        # no IPv6 chatter (router solicitations, MLD): the veth counters then count engine frames only
        for key in ("all", "default"):
            run("ip", "netns", "exec", name, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        return name

    def veth(self, ns1: str, if1: str, ns2: str, if2: str) -> None:
        run("ip", "link", "add", if1, "netns", ns1, "type", "veth", "peer", "name", if2, "netns", ns2)

    def up(self, ns: str, ifname: str, addr: str | None = None) -> None:
        if addr:
            run("ip", "-n", ns, "addr", "add", addr, "dev", ifname)
        run("ip", "-n", ns, "link", "set", ifname, "up")

    def close(self) -> None:
        for name in reversed(self.namespaces):
            run("ip", "netns", "del", name, check=False)


@pytest.fixture
def net():
    n = Net()
    try:
        yield n
    finally:
        n.close()


def counters(ns: str, ifname: str) -> dict:
    return json.loads(run("ip", "-n", ns, "-s", "-j", "link", "show", "dev", ifname).stdout)[0]["stats64"]


def pair(net: Net) -> tuple[str, str, str, str]:
    a, b = net.ns("a"), net.ns("b")
    ia, ib = net.tag + "a0", net.tag + "b0"
    net.veth(a, ia, b, ib)
    net.up(a, ia, "198.18.0.1/30")
    net.up(b, ib, "198.18.0.2/30")
    static_neighbours(a, ia, b, ib)
    return a, ia, b, ib


def mac(ns: str, ifname: str) -> str:
    return json.loads(run("ip", "-n", ns, "-j", "link", "show", "dev", ifname).stdout)[0]["address"]


def static_neighbours(a: str, ia: str, b: str, ib: str) -> None:
    """No ARP on the wire: each end knows the other's MAC."""
    run("ip", "-n", a, "neigh", "replace", "198.18.0.2", "lladdr", mac(b, ib), "dev", ia, "nud", "permanent")
    run("ip", "-n", b, "neigh", "replace", "198.18.0.1", "lladdr", mac(a, ia), "dev", ib, "nud", "permanent")


def started(sink: subprocess.Popen) -> None:
    """Once the sink's start record is out, its XDP program is attached: the first frame counts."""
    assert sink.stdout is not None
    line = sink.stdout.readline()
    assert '"start"' in line, f"the sink did not start: {line!r}"


def gen_and_sink(eng: Path, a: str, ia: str, b: str, ib: str, *gen_opts: str) -> tuple[dict, dict]:
    sink = subprocess.Popen([str(eng), "sink", "--netns", b, "--port", ib, "--io", "xdplive", "--cpu",
                             RX_CPU, "--duration", "60", "--idle", SINK_IDLE_S, "--no-hist"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started(sink)
        g = run(str(eng), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--cpu", TX_CPU,
                "--no-hist", *gen_opts, timeout=90)
        out, err = sink.communicate(timeout=30)
    finally:
        if sink.poll() is None:
            sink.send_signal(signal.SIGINT)
            sink.communicate(timeout=10)
    assert sink.returncode == 0, err
    return final(g.stdout), final(out)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("size", ["64", "1518", "imix"])
def test_counts_equal_kernel_counters(engine, net, size):
    a, ia, b, ib = pair(net)
    tx0, rx0 = counters(a, ia)["tx"]["packets"], counters(b, ib)["rx"]["packets"]
    n = 200000
    g, s = gen_and_sink(engine, a, ia, b, ib, "--count", str(n), "--rate", "400k", "--size", size,
                        "--flows", "4")
    dtx, drx = counters(a, ia)["tx"]["packets"] - tx0, counters(b, ib)["rx"]["packets"] - rx0
    msg = f"gen {g['tx_frames']} sink {s['rx_frames']}/{s['rx_unique']} veth tx {dtx} rx {drx}"
    assert g["tx_frames"] == n, msg
    assert s["rx_frames"] == s["rx_unique"] == n, msg
    assert (s["lost"], s["duplicated"], s["reordered"], s["malformed"]) == (0, 0, 0, 0), msg
    assert dtx == drx == n, msg  # nothing else crossed the pair: no ARP (static), no IPv6 chatter
    assert s["latency_kind"] == "one-way" and s["latency_us"]["count"] == n
    assert 0 < s["latency_us"]["p50"] < 100000


@pytest.mark.timeout(120)
def test_pacing_close_to_requested(engine, net):
    a, ia, b, ib = pair(net)
    g, s = gen_and_sink(engine, a, ia, b, ib, "--duration", "2", "--rate", "100k")
    assert abs(g["achieved_pps"] - 100e3) / 100e3 < 0.01, g
    assert s["rx_unique"] == g["tx_frames"]


def build_drop_filter(tmp: Path, *defines: str) -> Path:
    out = tmp / "drop.o"
    p = subprocess.run(["clang", "-O2", "-g", "-target", "bpf", "-I/usr/include/x86_64-linux-gnu",
                        *(f"-D{d}" for d in defines), "-c", str(HERE / "drop_filter.bpf.c"), "-o",
                        str(out)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot build the tc drop program: {p.stderr.strip()[-300:]}")
    return out


def relay(net: Net, *tc_ingress: list[str]) -> tuple[str, str, str, str, str, str]:
    """a - m - b; m forwards ma -> mb with the given tc ingress filters (after `clsact`)."""
    a, m, b = net.ns("a"), net.ns("m"), net.ns("b")
    ia, ma, mb, ib = net.tag + "a0", net.tag + "ma", net.tag + "mb", net.tag + "b0"
    net.veth(a, ia, m, ma)
    net.veth(m, mb, b, ib)
    net.up(a, ia, "198.18.0.1/30")
    net.up(b, ib, "198.18.0.2/30")
    run("tc", "-n", m, "qdisc", "add", "dev", ma, "clsact")
    for f in tc_ingress:
        run("tc", "-n", m, "filter", "add", "dev", ma, "ingress", *f)
    net.up(m, ma)
    net.up(m, mb)
    gro_on(m, ma)
    static_neighbours(a, ia, b, ib)
    return a, ia, m, ma, b, ib


def gro_on(ns: str, ifname: str) -> None:
    """NAPI on a veth that receives XDP_TX'd frames without an XDP program of its own: GRO, turned
    on once the link is up (on 6.18, GRO set while it was down left NAPI off: frames vanished)."""
    run("ip", "netns", "exec", ns, "ethtool", "-K", ifname, "gro", "off")
    run("ip", "netns", "exec", ns, "ethtool", "-K", ifname, "gro", "on")


def clsact_drops(ns: str, ifname: str) -> int:
    qd = json.loads(run("tc", "-s", "-j", "-n", ns, "qdisc", "show", "dev", ifname).stdout)
    return next(int(q["drops"]) for q in qd if q.get("kind") == "clsact")


@pytest.mark.timeout(120)
def test_injected_loss_reported_exactly(engine, net, tmp_path):
    prog = build_drop_filter(tmp_path, "DROP_SEQ_MOD=4", "DROP_SEQ_REM=1")
    a, ia, m, ma, b, ib = relay(net, ["prio", "1", "bpf", "da", "obj", str(prog), "sec", "tc"],
                                ["prio", "2", "protocol", "all", "u32", "match", "u32", "0", "0",
                                 "action", "mirred", "egress", "redirect", "dev", net.tag + "mb"])
    n = 40000
    g, s = gen_and_sink(engine, a, ia, b, ib, "--count", str(n), "--rate", "100k")
    dropped = clsact_drops(m, ma)
    msg = f"gen {g['tx_frames']} sink {s['rx_unique']} lost {s['lost']} tc dropped {dropped}"
    assert g["tx_frames"] == n, msg
    assert dropped == n // 4, msg
    assert s["lost"] == dropped, msg
    assert s["rx_unique"] == n - dropped, msg
    assert (s["duplicated"], s["reordered"], s["malformed"]) == (0, 0, 0), msg


@pytest.mark.timeout(120)
def test_duplicates_reported(engine, net):
    """m mirrors every frame to b and then redirects it there too: each arrives twice, in a row.
    (No netem here to reorder; the window rules for reordering are checked against the userspace
    reference in engine/tests/test_xdplive.c.)"""
    mb = net.tag + "mb"
    a, ia, m, ma, b, ib = relay(net, ["prio", "1", "protocol", "all", "u32", "match", "u32", "0", "0",
                                      "action", "mirred", "egress", "mirror", "dev", mb, "pipe",
                                      "action", "mirred", "egress", "redirect", "dev", mb])
    n = 20000
    g, s = gen_and_sink(engine, a, ia, b, ib, "--count", str(n), "--rate", "50k")
    msg = f"gen {g['tx_frames']} sink rx {s['rx_frames']} unique {s['rx_unique']} dup {s['duplicated']}"
    assert g["tx_frames"] == n, msg
    assert s["rx_frames"] == 2 * n and s["rx_unique"] == n and s["duplicated"] == n, msg
    assert (s["lost"], s["reordered"]) == (0, 0), msg


def bridge_loop(net: Net, *tc_ingress: list[str]) -> tuple[str, str, str, str, str]:
    """l0 -> bridge in m -> l1, both tester ports in namespace l; `tc_ingress` filters on m0
    (the bridge's port the frames enter by). Returns l, l0, l1, m, m0."""
    l, m = net.ns("l"), net.ns("m")
    l0, l1, m0, m1, br = (net.tag + s for s in ("l0", "l1", "m0", "m1", "br"))
    net.veth(l, l0, m, m0)
    net.veth(l, l1, m, m1)
    run("ip", "-n", m, "link", "add", br, "type", "bridge")
    for i in (m0, m1):
        run("ip", "-n", m, "link", "set", i, "master", br)
        net.up(m, i)
    net.up(m, br)
    if tc_ingress:
        run("tc", "-n", m, "qdisc", "add", "dev", m0, "clsact")
    for f in tc_ingress:
        run("tc", "-n", m, "filter", "add", "dev", m0, "ingress", *f)
    gro_on(m, m0)
    net.up(l, l0, "198.18.1.1/30")
    net.up(l, l1, "198.18.1.2/30")
    return l, l0, l1, m, m0


@pytest.mark.timeout(120)
def test_loop_through_bridge_one_way(engine, net):
    l, l0, l1, _, _ = bridge_loop(net)
    time.sleep(0.5)
    out = run(str(engine), "loop", "--netns", l, "--port", l0, "--port", l1, "--io", "xdplive",
              "--cpu", TX_CPU, "--count", "50000", "--rate", "100k", timeout=60).stdout
    f = final(out)
    assert f["tx_frames"] == 50000 and f["rx_unique"] == 50000 and f["lost"] == 0, f
    assert f["latency_kind"] == "one-way" and f["latency_us"]["count"] == 50000, f
    assert f["hist"] and sum(c for _, _, c in f["hist"]) == 50000
    assert f["cpu_s"] > 0 and f["cycles_per_packet"] > 0


@pytest.mark.timeout(120)
def test_quiet_drain_ends_early_and_loses_nothing_in_flight(engine, net, tmp_path):
    """`--drain-quiet`: a lossy trial's drain ends once nothing arrived for that long, not after
    the whole --drain, and the loss is still exactly what the drop filter took."""
    prog = build_drop_filter(tmp_path, "DROP_SEQ_MOD=4", "DROP_SEQ_REM=1")
    l, l0, l1, m, m0 = bridge_loop(net, ["prio", "1", "bpf", "da", "obj", str(prog), "sec", "tc"])
    n, took = 40000, {}
    for quiet in ("0.01", "0"):
        before = clsact_drops(m, m0)
        t0 = time.monotonic()
        out = run(str(engine), "loop", "--netns", l, "--port", l0, "--port", l1, "--io",
                  "xdplive", "--cpu", TX_CPU, "--count", str(n), "--rate", "100k", "--drain", "3",
                  "--drain-quiet", quiet, "--no-hist", timeout=60).stdout
        took[quiet] = time.monotonic() - t0
        f, dropped = final(out), clsact_drops(m, m0) - before
        assert dropped == n // 4 and f["lost"] == dropped and f["rx_unique"] == n - dropped, f
    # sending takes 0.4 s; the whole drain 3 s more
    assert took["0.01"] < 2.5 <= took["0"], took


@pytest.mark.timeout(60)
def test_signal_ends_run_and_detaches(engine, net):
    a, ia, b, ib = pair(net)
    p = subprocess.Popen([str(engine), "sink", "--netns", b, "--port", ib, "--io", "xdplive",
                          "--duration", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert "vsb_sink" in run("ip", "-n", b, "link", "show", "dev", ib).stdout
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0, err
    assert final(out)["interrupted"] is True
    assert "xdp" not in run("ip", "-n", b, "link", "show", "dev", ib).stdout


@pytest.mark.timeout(60)
def test_bad_input_and_unsupported(engine, net):
    a, ia, b, ib = pair(net)
    p = run(str(engine), "reflect", "--netns", b, "--port", ib, "--io", "xdplive", check=False)
    assert p.returncode == 3 and "xdplive" in p.stderr, p.stderr
    p = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--batch", "0",
            check=False)
    assert p.returncode == 2 and "--batch" in p.stderr, p.stderr
    sizes = ",".join(["64"] * 300)
    p = run(str(engine), "gen", "--netns", a, "--port", ia, "--io", "xdplive", "--size", sizes,
            "--count", "10", check=False)
    assert p.returncode == 3 and "shorter list" in p.stderr + p.stdout, p.stderr


SENDER = r'''
import socket, struct, sys, time
ifname, dst, src, order = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3]), sys.argv[4]

def csum(b):
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for seq in map(int, order.split(",")):
    ts = time.clock_gettime_ns(time.CLOCK_MONOTONIC) | (1 << 63)      # SIG_TS_MONO
    payload = b"VSB" + struct.pack("!BHIQ", 0, 7, seq, ts) + bytes(14)  # epoch 0, stream 7
    udp = struct.pack("!HHHH", 1024, 4000, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton("198.18.0.1"), socket.inet_aton("198.18.0.2"))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    s.send(dst + src + b"\x08\x00" + ip + udp)
    time.sleep(0.0002)
'''


@pytest.mark.timeout(120)
@pytest.mark.parametrize("io", ["xdplive", "afpacket"])
def test_reordering_and_duplicates_from_a_test_program(engine, net, tmp_path, io):
    """A test program writes engine frames in a chosen order (no netem on this kernel): each pair
    swapped late counts one reordered frame, a repeated sequence one duplicate, a gap its frames
    lost, by the in-kernel sink exactly as by the userspace one (rxstats.c)."""
    a, ia, b, ib = pair(net)
    order = list(range(100))
    for i in (10, 30, 50, 70):                     # 4 swaps: 11 before 10 ...
        order[i], order[i + 1] = order[i + 1], order[i]
    order += [95, 96, 97]                          # 3 duplicates
    order = [q for q in order if q not in (80, 81)] + list(range(100, 120))  # 2 lost
    script = tmp_path / "send.py"
    script.write_text(SENDER)
    sink = subprocess.Popen([str(engine), "sink", "--netns", b, "--port", ib, "--io", io,
                             "--cpu", RX_CPU, "--duration", "30", "--idle", SINK_IDLE_S, "--no-hist"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started(sink)
        run("ip", "netns", "exec", a, "python3", str(script), ia, mac(b, ib).replace(":", ""),
            mac(a, ia).replace(":", ""), ",".join(map(str, order)))
        out, err = sink.communicate(timeout=30)
    finally:
        if sink.poll() is None:
            sink.send_signal(signal.SIGINT)
            sink.communicate(timeout=10)
    s = final(out)
    msg = json.dumps({k: s.get(k) for k in ("rx_frames", "rx_unique", "lost", "duplicated",
                                             "reordered", "malformed", "foreign")})
    assert s["rx_frames"] == len(order), msg
    assert (s["reordered"], s["duplicated"], s["lost"]) == (4, 3, 2), msg
    assert s["malformed"] == 0, msg
