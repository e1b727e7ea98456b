"""The engine's dpdk backend: DPDK virtual devices between engine processes on this host.

(a) gen over memif (server) -> sink over memif (client), two processes: counts equal, no loss;
(b) the same over vhost-user: sink on net_vhost (server), gen on virtio_user;
(c) loop over two memif ports of one process (server and client on one socket): one-way latency;
    and fwd between two memif ports, driven by a loop on the other ends;
(d) after each test: no hugepage file, no /var/run/dpdk/<prefix>, no socket of ours left; also after
    SIGTERM, which still ends the run with its final record.

Every DPDK run is short (a few seconds at 100 kpps or less): DPDK polls, each process takes a core.
Skipped, with the reason, if the engine's probe says dpdk is not built or not usable.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import RX_CPU
from tests.integration.integration_helpers import TX_CPU
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine

RATE = "100k"
COUNT = 200_000  # 2 s at 100 kpps
DPDK_RUN = "/var/run/dpdk"


@pytest.fixture
def dpdk(root, engine, probe_result) -> Path:
    info = probe_result.backend("dpdk")
    if info is None:
        pytest.skip("dpdk: not in the engine's probe")
    if not info.usable:
        pytest.skip(f"dpdk: not usable here: {info.reason}")
    return engine


class Prefixes:
    """EAL file prefixes and the socket directory of one test; checks and removes leftovers."""

    def __init__(self, run_id) -> None:
        self.base = f"{run_id}dp"
        self.used: list[str] = []
        self.dir = Path(tempfile.mkdtemp(prefix=f"{run_id}-dpdk-", dir="/run"))

    def new(self) -> str:
        p = f"{self.base}{len(self.used)}"
        self.used.append(p)
        return p

    def sock(self, name: str) -> str:
        return str(self.dir / name)

    def leftovers(self) -> list[str]:
        left = [f"{DPDK_RUN}/{p}" for p in self.used if os.path.exists(f"{DPDK_RUN}/{p}")]
        for mnt in hugetlbfs_mounts():
            left += glob.glob(f"{glob.escape(mnt)}/{self.base}*")
        left += [str(p) for p in self.dir.iterdir()] if self.dir.exists() else []
        with open("/proc/net/unix") as f:  # memif's default sockets are abstract: @PATH
            left += [ln.split()[-1] for ln in f if f"@{self.dir}" in ln]
        return left

    def remove(self) -> None:
        for p in self.used:
            shutil.rmtree(f"{DPDK_RUN}/{p}", ignore_errors=True)
            for mnt in hugetlbfs_mounts():
                for f in glob.glob(f"{glob.escape(mnt)}/{p}map_*"):
                    os.unlink(f)
        shutil.rmtree(self.dir, ignore_errors=True)


def hugetlbfs_mounts() -> list[str]:
    with open("/proc/mounts") as f:
        return [ln.split()[1] for ln in f if ln.split()[2:3] == ["hugetlbfs"]]


@pytest.fixture
def pfx(dpdk, run_id):
    p = Prefixes(run_id)
    try:
        yield p
        # (d) the engine removed everything itself once its processes ended
        time.sleep(0.2)  # the kernel drops a closed abstract socket from /proc/net/unix lazily
        assert p.leftovers() == [], "left behind by the engine"
    finally:
        p.remove()


def eal(prefix: str) -> list[str]:
    return ["--eal-args", f"--file-prefix {prefix}"]


def wait_path(path: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {timeout} s")
        time.sleep(0.02)


def assert_all_delivered(what: str, gen, sink) -> None:
    """Every frame the generator sent arrived once, clean."""
    summary = (f"{what}: gen tx={gen.tx_frames} sink rx={sink.rx_frames} lost={sink.lost} "
               f"dup={sink.duplicated}")
    assert gen.tx_frames == COUNT, summary
    assert sink.rx_frames == COUNT, summary
    assert (sink.lost, sink.duplicated, sink.malformed, sink.foreign) == (0, 0, 0, 0), summary


@pytest.mark.timeout(60)
def test_memif_gen_to_sink(dpdk, registry, pfx):
    """(a) The gen is the memif server (socket file, not abstract, to check it is removed), the
    sink its client; the server must exist before the client starts."""
    sock = pfx.sock("memif.sock")
    gen_args = _gen_args(f"net_memif0,role=server,socket={sock},socket-abstract=no", pfx)
    sink_args = _sink_args(f"net_memif0,role=client,socket={sock},socket-abstract=no", pfx)
    with EngineProcess(gen_args, engine=dpdk, registry=registry, label="gen") as gen:
        wait_path(sock)
        sink = run_engine(sink_args, engine=dpdk, registry=registry, timeout=30)
        sent = gen.wait(timeout=30).check()
    s, g = sink.final, sent.final
    assert_all_delivered("memif", g, s)
    assert s.latency_kind == "one-way" and s.latency_us and not s.latency_us.empty, s.latency_us
    assert not os.path.exists(sock)


def _gen_args(port: str, pfx) -> list[str]:
    """A gen of COUNT 64-byte frames at RATE on one DPDK port, on the TX CPU."""
    return ["gen", "--io", "dpdk", "--port", port, "--cpu", str(TX_CPU), "--rate", RATE,
            "--count", str(COUNT), "--size", "64", "--no-hist", *eal(pfx.new())]


def _sink_args(port: str, pfx) -> list[str]:
    """A sink on one DPDK port, on the RX CPU, ending 0.5 s after the last frame."""
    return ["sink", "--io", "dpdk", "--port", port, "--cpu", str(RX_CPU), "--duration", "5",
            "--idle", "0.5", "--no-hist", *eal(pfx.new())]


@pytest.mark.timeout(60)
def test_vhost_user_gen_to_sink(dpdk, registry, pfx):
    """(b) The sink owns the vhost-user socket (net_vhost, server), the gen connects to it with
    virtio_user (memfd memory of --no-huge is shareable with the vhost side)."""
    sock = pfx.sock("vhost.sock")
    sink_args = _sink_args(f"net_vhost0,iface={sock}", pfx)
    gen_args = _gen_args(f"virtio_user0,path={sock}", pfx)
    with EngineProcess(sink_args, engine=dpdk, registry=registry, label="sink") as sink:
        wait_path(sock)
        sent = run_engine(gen_args, engine=dpdk, registry=registry, timeout=30)
        got = sink.wait(timeout=30).check()
    s, g = got.final, sent.final
    assert_all_delivered("vhost-user", g, s)
    assert not os.path.exists(sock)


@pytest.mark.timeout(60)
def test_loop_two_memif_ports_one_process(dpdk, registry, pfx):
    """(c) One process, one lcore: send on a memif server port, receive on its client port (same
    socket, abstract by default): one-way latency on one clock. The prefix comes from the
    environment (VSB_DPDK_PREFIX) here."""
    sock = pfx.sock("loop.sock")
    args = ["loop", "--io", "dpdk", "--port", f"net_memif0,role=server,socket={sock}",
            "--port", f"net_memif1,role=client,socket={sock}", "--cpu", str(TX_CPU), "--rate", RATE,
            "--count", "100000", "--size", "64", "--no-hist"]
    env = dict(os.environ, VSB_DPDK_PREFIX=pfx.new())
    proc = subprocess.run([str(dpdk), *args], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    from vswbench.engine.records import parse_final
    from vswbench.engine.records import parse_lines

    records = parse_lines(proc.stdout.splitlines())
    f = parse_final(next(r for r in records if r.type == "final"))
    summary = f"loop: tx={f.tx_frames} rx={f.rx_frames} lost={f.lost} latency={f.latency_us}"
    assert f.tx_frames == 100000 and f.rx_frames == 100000 and f.lost == 0, summary
    assert f.latency_kind == "one-way", summary
    assert f.latency_us and not f.latency_us.empty and f.latency_us.p50 > 0, summary
    print(f"\n  dpdk memif loop one-way latency: p50 {f.latency_us.p50:.2f} us, "
          f"p99 {f.latency_us.p99:.2f} us, max {f.latency_us.max:.2f} us")


@pytest.mark.timeout(60)
def test_fwd_between_memif_ports(dpdk, registry, pfx):
    """(c) fwd passes frames between two memif server ports; a loop on the client ends sends
    into one and receives from the other."""
    s1, s2 = pfx.sock("fwd-a.sock"), pfx.sock("fwd-b.sock")
    fwd_args = ["fwd", "--io", "dpdk", "--port", f"net_memif0,role=server,socket={s1},socket-abstract=no",
                "--port", f"net_memif1,role=server,socket={s2},socket-abstract=no", "--cpu", str(RX_CPU),
                "--duration", "5", "--idle", "0.5", "--no-hist", *eal(pfx.new())]
    loop_args = ["loop", "--io", "dpdk", "--port", f"net_memif0,role=client,socket={s1},socket-abstract=no",
                 "--port", f"net_memif1,role=client,socket={s2},socket-abstract=no", "--cpu", str(TX_CPU),
                 "--rate", "50k", "--count", "50000", "--no-hist", *eal(pfx.new())]
    with EngineProcess(fwd_args, engine=dpdk, registry=registry, label="fwd") as fwd:
        wait_path(s1)
        wait_path(s2)
        looped = run_engine(loop_args, engine=dpdk, registry=registry, timeout=30)
        fwded = fwd.wait(timeout=30).check()
    f, w = looped.final, fwded.final
    summary = (f"fwd: loop tx={f.tx_frames} accepted={f.tx_accepted} rx={f.rx_frames} "
               f"lost={f.lost}, forwarded={w.raw.get('forwarded')} "
               f"dropped={w.raw.get('fwd_dropped')} ports={w.raw.get('port_stats')}")
    assert f.tx_frames == 50000 and f.rx_frames == 50000 and f.lost == 0, summary
    assert w.raw.get("forwarded") == 50000, summary


@pytest.mark.timeout(60)
def test_memif_client_leaves_only_after_its_server_stopped_polling(dpdk, registry, pfx):
    """(c) DPDK 22.11's memif unmaps its rings under a peer still polling them (a fwd died of
    SIGSEGV that way, about 1 run in 15): an engine whose run ended keeps its memif to another
    process open until that peer has ended its run. The gen ends at once; the sink polls 0.5 s
    longer (--idle) and prints its final record before the gen may leave."""
    sock = pfx.sock("linger.sock")
    sink_args = _sink_args(f"net_memif0,role=server,socket={sock},socket-abstract=no", pfx)
    gen_args = _gen_args(f"net_memif0,role=client,socket={sock},socket-abstract=no", pfx)
    with EngineProcess(sink_args, engine=dpdk, registry=registry, label="sink") as sink:
        wait_path(sock)
        run_engine(gen_args, engine=dpdk, registry=registry, timeout=30)
        # the final record has come (or is being read) when the gen exits; without the wait, it
        # comes 0.5 s after
        sink.wait_for_record("final", timeout=0.2)
        sink.wait(timeout=30).check()


@pytest.mark.timeout(60)
def test_sigterm_ends_with_final_record_and_cleans_up(dpdk, registry, pfx):
    """(d) SIGTERM mid-run: the engine prints its final record (interrupted), closes its ports,
    runs rte_eal_cleanup and removes its runtime directory."""
    sock = pfx.sock("vhost.sock")
    sink_args = ["sink", "--io", "dpdk", "--port", f"net_vhost0,iface={sock}", "--cpu", str(RX_CPU),
                 "--duration", "30", "--no-hist", *eal(pfx.new())]
    gen_args = ["gen", "--io", "dpdk", "--port", f"virtio_user0,path={sock}", "--cpu", str(TX_CPU),
                "--rate", "50k", "--duration", "30", "--no-hist", *eal(pfx.new())]
    with EngineProcess(sink_args, engine=dpdk, registry=registry, label="sink") as sink:
        wait_path(sock)
        with EngineProcess(gen_args, engine=dpdk, registry=registry, label="gen") as gen:
            gen.wait_for_record("start", timeout=15)
            assert os.path.isdir(f"{DPDK_RUN}/{pfx.used[1]}"), "the gen's runtime dir should exist now"
            time.sleep(1)
            g = gen.stop().check().final  # SIGTERM
        s = sink.stop().check().final
    assert g.raw["interrupted"] and s.raw["interrupted"]
    assert g.tx_frames > 0 and s.rx_frames > 0
    assert s.rx_frames <= g.tx_frames and s.duplicated == 0 and s.malformed == 0


@pytest.mark.parametrize("port, why", [
    ("net_memif0,role=boss,socket=/run/vsbx.sock", "role"),
    ("virtio_user0", "path="),
    ("frob0,x=1", "driver"),
    ("net_memif0,socket", "value"),
    ("net memif0", "space"),
])
@pytest.mark.timeout(30)
def test_malformed_vdev_exits_2_with_the_problem(dpdk, tmp_path, port, why):
    proc = subprocess.run([str(dpdk), "gen", "--io", "dpdk", "--port", port, "--duration", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert proc.returncode == 2, proc.stderr
    assert why in proc.stderr and port.split(",")[0].split()[0] in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("core*"))
