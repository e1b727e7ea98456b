"""Kernel switch backends (veth, bridge, router, macvlan, tc-bpf, xdp) built for real, without the
Testbed: a switch namespace and two host namespaces, two ports attached, forwarding both ways,
1000 engine frames each way with zero loss, the switch's port counters agreeing with the engine,
and nothing left after teardown."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.integration_helpers import SINK_IDLE_S
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine
from vswbench.host.netns import Namespace
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.host.netns import run
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import Placement
from vswbench.switches.base import PortCounters
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.catalog import all_switches
from vswbench.switches.catalog import kernel_switches

COUNT = 1000
SWITCH_CPU = 1 if (os.cpu_count() or 1) > 1 else 0
EXPECTED_MODE = {"macvlan": f"rps cpu{SWITCH_CPU}"}   # the others: napi-threaded ... fifo


def _comm(proc: Path) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return ""


def switch_class(name: str) -> type[Switch]:
    return all_switches()[name]


@dataclass
class Built:
    switch: Switch
    a: Attachment
    b: Attachment
    namespaces: list[str]


@pytest.fixture
def build(root, registry: CleanupRegistry, run_id: RunId, tmp_path):
    built: list[Switch] = []

    def make(name: str, mode: str = "napi") -> Built:
        cls = switch_class(name)
        avail = cls.availability()
        if not avail.ok:
            pytest.skip(f"{name}: {avail.reason} ({avail.fix})")
        names = [run_id.name(s) for s in ("sw", "h1", "h2")]
        for ns in names:
            Namespace(ns, registry).__enter__()   # removed by the registry, pass or fail
        ctx = SwitchContext(run_id, registry, names[0],
                            Placement(tester_cpu=0, switch_cpu=SWITCH_CPU),
                            {"kernel_mode": mode}, str(tmp_path))
        sw = cls(ctx)
        built.append(sw)
        sw.setup()
        a = sw.attach(HostPort("h1.p0", names[1], run_id.ifname("h1"), "198.18.1.2/24"))
        b = sw.attach(HostPort("h2.p0", names[2], run_id.ifname("h2"), "198.18.2.2/24"))
        sw.forward([ForwardPath("h1.p0", "h2.p0"), ForwardPath("h2.p0", "h1.p0")])
        return Built(sw, a, b, names)

    yield make
    for sw in built:
        sw.teardown()


def next_hop_mac(sw: Switch, src: Attachment, dst: Attachment) -> str:
    return src.switch_mac if sw.l3 else dst.host_mac


def counters(sw: Switch) -> dict[str, PortCounters]:
    return {c.port: c for c in sw.port_counters()}


def port_name(sw: Switch, att: Attachment) -> str:
    return att.switch_ifname or att.host.ifname


def send(built: Built, src: Attachment, dst: Attachment, engine, registry) -> None:
    sw = built.switch
    before = counters(sw)
    # --dst-mac for the sink too: without it the engine resolves a (never used) destination and
    # its ARP requests would cross the switch and spoil the counters.
    sink_args = ["sink", "--netns", dst.host.netns, "--port", dst.host.ifname, "--io", "afpacket",
                 "--cpu", "0", "--idle", SINK_IDLE_S, "--duration", "10", "--no-hist",
                 "--dst-mac", src.host_mac]
    gen_args = ["gen", "--netns", src.host.netns, "--port", src.host.ifname, "--io", "afpacket",
                "--cpu", "0", "--count", str(COUNT), "--rate", "10k", "--no-hist",
                "--dst-mac", next_hop_mac(sw, src, dst),
                "--dst-ip", dst.host.ip_cidr.split("/")[0]]
    with EngineProcess(sink_args, engine=engine, registry=registry, label="sink") as sink:
        sink.wait_for_record("start", timeout=15)
        gen = run_engine(gen_args, engine=engine, registry=registry, timeout=60)
        got = sink.wait(timeout=20).check().final
    after = counters(sw)
    what = f"{sw.name} {src.host.key} -> {dst.host.key} ({sw.forwarding_mode()})"
    assert gen.final.tx_frames == COUNT, what
    assert (got.rx_frames, got.lost, got.duplicated, got.malformed) == (COUNT, 0, 0, 0), (
        f"{what}: sink {got}\n{sw.config_dump()}")
    ingress, egress = port_name(sw, src), port_name(sw, dst)
    rx_in = after[ingress].rx_packets - before[ingress].rx_packets
    tx_out = after[egress].tx_packets - before[egress].tx_packets
    assert (rx_in, tx_out) == (COUNT, COUNT), f"{what}: port counters rx {rx_in} tx {tx_out}"
    for port in (ingress, egress):
        b, a = before[port], after[port]
        drops = (a.rx_dropped - b.rx_dropped, a.tx_dropped - b.tx_dropped,
                 a.rx_errors - b.rx_errors, a.tx_errors - b.tx_errors)
        assert drops == (0, 0, 0, 0), f"{what}: {port} drops/errors {drops}"


def assert_torn_down(built: Built) -> None:
    sw_ns = built.namespaces[0]
    links = [link["ifname"] for link in ip_json("link", "show", netns=sw_ns)]
    assert links == ["lo"], f"left in the switch namespace: {links}"
    for ns in built.namespaces[1:]:
        left = [link["ifname"] for link in ip_json("link", "show", netns=ns)]
        assert left == ["lo"], f"left in {ns}: {left}"
    qdiscs = json.loads(run(["tc", "-j", "-n", sw_ns, "qdisc", "show"]) or "[]")
    assert not [q for q in qdiscs if q.get("kind") == "clsact"]
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _is_napi_of(p, built)]


def _is_napi_of(pid: str, built: Built) -> bool:
    try:
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read()
    except OSError:
        return False
    return comm.startswith(f"napi/{built.namespaces[0][:7]}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", kernel_switches())
def test_forwards_both_ways(name, build, engine, registry, run_id):
    built = build(name)
    sw = built.switch
    assert built.a.host_mac and built.b.host_mac
    if sw.l3:
        assert built.a.gateway_ip == "198.18.1.1" and built.b.gateway_ip == "198.18.2.1"
    assert sw.forwarding_mode() == EXPECTED_MODE.get(name, f"napi-threaded cpu{SWITCH_CPU} fifo"), (
        sw.config_dump())
    if name != "macvlan":   # every napi thread of the run is SCHED_FIFO (napi_priority=fifo)
        napi = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
                and _comm(p).startswith(f"napi/{run_id}")]
        assert napi and all(os.sched_getscheduler(pid) == os.SCHED_FIFO for pid in napi)
    send(built, built.a, built.b, engine, registry)
    send(built, built.b, built.a, engine, registry)
    assert sw.config_dump().strip()
    assert all(sw.versions().values())
    sw.teardown()
    sw.teardown()   # idempotent
    assert_torn_down(built)
    registry.teardown()
    assert not [ns for ns in list_namespaces() if ns.startswith(str(run_id))]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["bridge", "tc-bpf"])
def test_softirq_mode(name, build, engine, registry):
    built = build(name, mode="softirq")
    assert built.switch.forwarding_mode() == "sender-softirq"
    send(built, built.a, built.b, engine, registry)
