"""The Open vSwitch backends (`ovs`, `ovs-afxdp`) forward between two host namespaces, count what
they forward, and leave nothing behind: not after teardown, and not after `vswbench clean` once the
run that started them was SIGKILLed.

A small local fixture plays the testbed: a switch namespace and two host namespaces, one run state
file (so the daemons' PIDs are recorded), one temporary directory /tmp/vsb-<run id>-XXXX.

Also runnable as a script (`python test_switch_ovs.py child BACKEND RUNID`): the child process of the
SIGKILL test, which builds the same bed, prints its daemons' PIDs and waits to be killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from vswbench.engine.process import EngineProcess
from vswbench.engine.process import find_engine
from vswbench.engine.process import run_engine
from vswbench.host.netns import Namespace
from vswbench.host.netns import link_counters
from vswbench.host.netns import list_namespaces
from vswbench.host.netns import run
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import sysctl
from vswbench.run.ids import RunId
from vswbench.run.ids import new_run_id
from vswbench.run.registry import CleanupRegistry
from vswbench.run.state import RunState
from vswbench.run.state import is_same_process
from vswbench.run.state import process_start_time
from vswbench.run.state import state_dir
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.ovs.afxdp import OvsAfxdp
from vswbench.switches.ovs.switch import Ovs

BACKENDS = {"ovs": Ovs, "ovs-afxdp": OvsAfxdp}
COUNT = 1000
IP1, IP2 = "198.18.0.1", "198.18.0.2"


@dataclass
class Bed:
    run_id: RunId
    switch: Ovs
    state: RunState
    temp_dir: Path
    namespaces: tuple[str, str, str]   # switch, host 1, host 2
    a: Attachment                      # host 1's port
    b: Attachment                      # host 2's port


@contextmanager
def ovs_bed(cls: type[Ovs], run_id: RunId, registry: CleanupRegistry,
            options: dict[str, str] | None = None) -> Iterator[Bed]:
    """Switch namespace + two host namespaces, both ports attached, forwarding both ways."""
    state = RunState.create(str(run_id))
    registry.register(f"run state {state.path}", state.remove)
    temp_dir = Path(tempfile.mkdtemp(prefix=f"vsb-{run_id}-"))
    registry.register(f"temporary directory {temp_dir}", lambda: shutil.rmtree(temp_dir, True))
    state.add_temp_dir(str(temp_dir))
    names = (run_id.name("sw"), run_id.name("h1"), run_id.name("h2"))
    for name in names:
        Namespace(name, registry).__enter__()  # removed by the registry
    ctx = SwitchContext(run_id=run_id, registry=registry, netns=names[0],
                        options=dict(options or {}), temp_dir=str(temp_dir))
    switch = cls(ctx)
    registry.register(f"switch {cls.name}", switch.teardown)
    switch.setup()
    a = switch.attach(HostPort("h1.p0", names[1], run_id.ifname("h1p0"), f"{IP1}/24"))
    b = switch.attach(HostPort("h2.p0", names[2], run_id.ifname("h2p0"), f"{IP2}/24"))
    switch.forward([ForwardPath("h1.p0", "h2.p0"), ForwardPath("h2.p0", "h1.p0")])
    # Quiet hosts: no ICMP port unreachable for the engine's UDP frames (nothing listens on the
    # port) and no ARP, so the switch's counters hold the engine's frames and nothing else.
    for ns in names[1:]:
        sysctl(ns, **{"net.ipv4.icmp_msgs_per_sec": 0, "net.ipv4.icmp_msgs_burst": 0})
    set_neighbour(names[1], a.host.ifname, IP2, b.host_mac)
    set_neighbour(names[2], b.host.ifname, IP1, a.host_mac)
    yield Bed(run_id, switch, state, temp_dir, names, a, b)


def available(name: str) -> type[Ovs]:
    if os.geteuid() != 0:
        pytest.skip("needs root (creates network namespaces, starts OVS daemons)")
    cls = BACKENDS[name]
    avail = cls.availability()
    if not avail.ok:
        pytest.skip(f"{name} not available: {avail.reason} (fix: {avail.fix})")
    return cls


def daemon_pids(switch: Ovs) -> list[int]:
    assert switch.ovs is not None
    return switch.ovs.pids()


def counters(switch: Ovs) -> dict[str, tuple[int, int]]:
    return {c.port: (c.rx_packets, c.tx_packets) for c in switch.port_counters()}


@dataclass
class Attempt:
    sent: int            # gen's tx_frames
    received: int        # sink's rx_frames
    lost: int
    switch_rx: int       # OVS: packets in on the source port
    switch_tx: int       # OVS: packets out on the destination port
    host_rx: int         # the kernel: packets in on the destination host's interface
    drops: int           # OVS: drops and errors on both ports

    def __str__(self) -> str:
        return (f"gen tx={self.sent} sink rx={self.received} lost={self.lost} "
                f"ovs rx={self.switch_rx} ovs tx={self.switch_tx} host rx={self.host_rx} "
                f"ovs drops+errors={self.drops}")


def send_once(bed: Bed, engine: Path, registry: CleanupRegistry, src: Attachment,
              dst: Attachment, dst_ip: str, src_ip: str) -> Attempt:
    """COUNT frames from src's host to dst's host at 10 kpps; every counter on the way."""
    assert src.switch_ifname is not None and dst.switch_ifname is not None

    def snapshot() -> tuple[dict[str, PortCounters], int]:
        ports = {c.port: c for c in bed.switch.port_counters()}
        return ports, link_counters(dst.host.netns, dst.host.ifname).rx_packets

    sink_args = ["sink", "--netns", dst.host.netns, "--port", dst.host.ifname, "--io", "afpacket",
                 "--idle", "0.3", "--duration", "15", "--no-hist",  # SINK_IDLE_S (run as a script too)
                 # Addresses given: the sink never sends a datagram to make the kernel resolve one.
                 "--dst-mac", src.host_mac, "--dst-ip", src_ip]
    gen_args = ["gen", "--netns", src.host.netns, "--port", src.host.ifname, "--io", "afpacket",
                "--count", str(COUNT), "--rate", "10k", "--dst-mac", dst.host_mac,
                "--dst-ip", dst_ip, "--src-ip", src_ip, "--no-hist"]
    before, host_before = snapshot()
    with EngineProcess(sink_args, engine=engine, registry=registry, state=bed.state,
                       label="sink") as sink:
        sink.wait_for_record("start", timeout=15)
        sent = run_engine(gen_args, engine=engine, registry=registry, state=bed.state,
                          timeout=30).final
        got = sink.wait(timeout=25).check().final
    after, host_after = snapshot()

    def delta(port: str, field: str) -> int:
        return int(getattr(after[port], field)) - int(getattr(before[port], field))

    drops = sum(delta(port, f) for port in (src.switch_ifname, dst.switch_ifname)
                for f in ("rx_dropped", "tx_dropped", "rx_errors", "tx_errors"))
    return Attempt(sent.tx_frames, got.rx_frames, got.lost, delta(src.switch_ifname, "rx_packets"),
                   delta(dst.switch_ifname, "tx_packets"), host_after - host_before, drops)


ATTEMPTS = 3


def send_and_count(bed: Bed, engine: Path, registry: CleanupRegistry, src: Attachment,
                   dst: Attachment, dst_ip: str, src_ip: str) -> Attempt:
    """Counters always agree; zero loss in one of ATTEMPTS tries. (This 2-vCPU VM is shared: a
    burst of other work can starve ovs-vswitchd or the sink for tens of ms, and frames then drop
    at a socket buffer. Each lossy attempt is reported, never hidden.)"""
    attempts: list[Attempt] = []
    for _ in range(ATTEMPTS):
        att = send_once(bed, engine, registry, src, dst, dst_ip, src_ip)
        attempts.append(att)
        where = f"{bed.switch.name}/{bed.switch.mode} {src.host.key}->{dst.host.key}: {att}"
        # Always: the generator sent COUNT, OVS saw every one of them arrive (kernel counter of
        # the switch-side veth), and what OVS sent out is what the destination's kernel got.
        assert att.sent == COUNT, where
        assert att.switch_rx == COUNT, where
        assert att.switch_tx == att.host_rx, where
        if att.received == COUNT and att.switch_tx == COUNT and att.lost == 0:
            assert att.drops == 0, where
            break
        warnings.warn(f"lossy attempt (machine busy?): {where}", stacklevel=2)
    else:
        pytest.fail(f"{bed.switch.name}/{bed.switch.mode} {src.host.key}->{dst.host.key}: "
                    f"loss in all {ATTEMPTS} attempts: " + "; ".join(map(str, attempts))
                    + "\n" + bed.switch.config_dump())
    return attempts[-1]


def assert_all_gone(run_id: RunId, pids: list[int], temp_dir: Path) -> None:
    assert pids, "the daemons' PIDs were never seen"
    alive = [pid for pid in pids if process_start_time(pid) is not None]
    assert not alive, f"OVS daemons still alive: {alive}"
    leftover_ns = [ns for ns in list_namespaces() if ns.startswith(str(run_id))]
    assert not leftover_ns, f"namespaces left: {leftover_ns}"
    assert not temp_dir.exists(), f"{temp_dir} left behind"
    assert not list(Path("/tmp").glob(f"vsb-{run_id}-*")), "temporary directories left"
    assert not (state_dir() / f"{run_id}.json").exists(), "run state file left"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", ["p2p", "normal"])
@pytest.mark.parametrize("name", list(BACKENDS))
def test_ovs_forwards_both_ways_and_cleans_up(name: str, mode: str) -> None:
    cls = available(name)
    try:
        engine = find_engine()
    except Exception as exc:  # noqa: BLE001 - any reason the engine is missing is a skip
        pytest.skip(f"engine not built: {exc}")
    run_id = new_run_id()
    registry = CleanupRegistry()
    pids: list[int] = []
    temp_dir = Path("/nonexistent")
    try:
        with ovs_bed(cls, run_id, registry, {"ovs_mode": mode}) as bed:
            temp_dir = bed.temp_dir
            pids = daemon_pids(bed.switch)
            assert len(pids) == 2
            recorded = {p.pid for p in bed.state.processes}
            assert set(pids) <= recorded, "daemon PIDs must be in the run state for `clean`"
            dump = bed.switch.config_dump()
            if mode == "p2p":
                assert "actions=output:2" in dump and "actions=output:1" in dump, dump
                assert "NORMAL" not in dump, dump
            else:
                assert "NORMAL" in dump, dump
            if name == "ovs-afxdp":
                assert "type: afxdp" in dump, dump
                assert bed.switch.forwarding_mode().startswith("pmd"), dump
            else:
                assert bed.switch.forwarding_mode().startswith("ovs-vswitchd")
            assert bed.switch.versions().get("ovs-vswitchd")
            send_and_count(bed, engine, registry, bed.a, bed.b, IP2, IP1)
            send_and_count(bed, engine, registry, bed.b, bed.a, IP1, IP2)
            bed.switch.teardown()
            assert not [pid for pid in pids if process_start_time(pid) is not None]
            assert not list(temp_dir.glob("ovs-*")), "the OVS directory must go with teardown"
            bed.switch.teardown()  # idempotent
    finally:
        failures = registry.teardown()
    assert not failures, failures
    assert_all_gone(run_id, pids, temp_dir)


# -- SIGKILL in the middle of a run, then `vswbench clean --prefix <run id>` --------------------
def child_main(name: str, run_id: str) -> None:
    """Build the bed, report the daemons' PIDs, wait to be killed (never cleans up by itself)."""
    registry = CleanupRegistry()
    try:
        with ovs_bed(BACKENDS[name], RunId(run_id), registry) as bed:
            report = {"pids": daemon_pids(bed.switch), "temp_dir": str(bed.temp_dir),
                      "namespaces": list(bed.namespaces)}
            print("READY " + json.dumps(report), flush=True)
            time.sleep(600)
    finally:  # reached on an error or the parent's timeout, never after SIGKILL
        registry.teardown()


def _fallback_cleanup(run_id: RunId, pids: list[int], starts: dict[int, int | None]) -> None:
    """If `clean` failed, do not leave this test's objects behind (by PID and run id only)."""
    for pid in pids:
        if is_same_process(pid, starts.get(pid)):
            os.kill(pid, signal.SIGKILL)
    for ns in list_namespaces():
        if ns.startswith(str(run_id)):
            run(["ip", "netns", "delete", ns], check=False)
    for path in Path("/tmp").glob(f"vsb-{run_id}-*"):
        shutil.rmtree(path, ignore_errors=True)
    (state_dir() / f"{run_id}.json").unlink(missing_ok=True)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", list(BACKENDS))
def test_clean_removes_a_killed_runs_ovs(name: str) -> None:
    available(name)
    run_id = new_run_id()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])))
    child = subprocess.Popen([sys.executable, __file__, "child", name, str(run_id)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             process_group=0)
    pids: list[int] = []
    starts: dict[int, int | None] = {}
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("READY "):
            child.kill()
            pytest.fail(f"child did not get ready: {line!r} {child.communicate()[1][-3000:]}")
        report = json.loads(line[len("READY "):])
        pids = report["pids"]
        starts = {pid: process_start_time(pid) for pid in pids}
        os.kill(child.pid, signal.SIGKILL)  # mid-run: no teardown, no finally
        child.wait(timeout=10)
        assert all(is_same_process(pid, starts[pid]) for pid in pids), "daemons should outlive it"
        assert all(ns in list_namespaces() for ns in report["namespaces"])

        result = subprocess.run([sys.executable, "-m", "vswbench", "clean", "--prefix",
                                 str(run_id)], capture_output=True, text=True, timeout=120)

        assert result.returncode == 0, result.stdout + result.stderr
        for pid in pids:
            assert f"process {pid} of run {run_id}" in result.stdout, result.stdout
        assert_all_gone(run_id, pids, Path(report["temp_dir"]))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        _fallback_cleanup(run_id, pids, starts)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "child":
        child_main(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"usage: {sys.argv[0]} child BACKEND RUNID")
