"""Pure parts of the kernel switch backends (no root, no kernel objects)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vswbench.errors import UsageError
from vswbench.host.netlink import LinkState
from vswbench.host.netlink import LinkStats
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.base import link_pairs
from vswbench.switches.bpf.tc import BPF_DIR
from vswbench.switches.bpf.tc import compile_argv
from vswbench.switches.kernel.availability import parse_kernel_config
from vswbench.switches.kernel.bridge import BridgeSwitch
from vswbench.switches.kernel.counters import counters_from_link
from vswbench.switches.kernel.counters import switch_view
from vswbench.switches.kernel.napi import Placed
from vswbench.switches.kernel.napi import kernel_mode
from vswbench.switches.kernel.napi import napi_priority
from vswbench.switches.kernel.napi import napi_thread_pids
from vswbench.switches.kernel.router import gateway_for
from vswbench.switches.kernel.veth import VethSwitch

RID = RunId("vsb1234")


def ctx(**options: str) -> SwitchContext:
    return SwitchContext(RID, CleanupRegistry(), RID.name("sw"), options=options)


CONFIG = """\
CONFIG_VETH=y
CONFIG_MACVLAN=m
# CONFIG_DUMMY is not set
CONFIG_BPF_JIT=y
"""


@pytest.mark.parametrize("option,value", [("VETH", "y"), ("CONFIG_MACVLAN", "m"),
                                          ("DUMMY", "n"), ("OPENVSWITCH", "n")])
def test_parse_kernel_config(option, value):
    assert parse_kernel_config(CONFIG, option) == value


def test_counters_from_a_link():
    link = LinkState("vsb1234sw0", 3, "UP", "02:00:00:00:00:01",
                     LinkStats(rx_packets=100, tx_packets=90, rx_bytes=6000, tx_bytes=5400,
                               rx_errors=1, tx_errors=3, rx_dropped=2, tx_dropped=4))
    c = counters_from_link(link)
    assert c == PortCounters("vsb1234sw0", rx_packets=100, tx_packets=90, rx_dropped=2,
                             tx_dropped=4, rx_errors=1, tx_errors=3)
    view = switch_view(c)
    assert (view.rx_packets, view.tx_packets, view.rx_dropped, view.tx_errors) == (90, 100, 4, 1)


def test_counters_without_stats():
    assert counters_from_link(LinkState("x", 4, "DOWN", "", None)) == PortCounters("x")


def test_compile_argv():
    argv = compile_argv(BPF_DIR / "tc_redirect.bpf.c", Path("/tmp/x.o"), {"OUT_IFINDEX": 7})
    assert argv[0] == "clang"
    assert argv[argv.index("-target"):argv.index("-target") + 2] == ["-target", "bpf"]
    assert "-I/usr/include/x86_64-linux-gnu" in argv
    assert "-DOUT_IFINDEX=7" in argv
    assert argv[-2:] == ["-o", "/tmp/x.o"]


def test_bpf_sources_exist():
    for name in ("tc_redirect.bpf.c", "xdp_redirect.bpf.c"):
        text = (BPF_DIR / name).read_text()
        assert "bpf_redirect(OUT_IFINDEX" in text


def test_link_pairs_share_reverse_paths():
    paths = [ForwardPath("a", "b"), ForwardPath("b", "a"), ForwardPath("c", "d")]
    assert link_pairs(paths) == [("a", "b"), ("c", "d")]


def test_link_pairs_rejects_a_port_with_two_peers():
    with pytest.raises(UsageError, match="talks to both"):
        link_pairs([ForwardPath("a", "b"), ForwardPath("a", "c")])
    with pytest.raises(UsageError, match="itself"):
        link_pairs([ForwardPath("a", "a")])


@pytest.mark.parametrize("host,gw", [("198.18.3.2/24", ("198.18.3.1", "198.18.3.1/24")),
                                     ("198.18.3.1/24", ("198.18.3.2", "198.18.3.2/24")),
                                     ("198.19.255.10/24", ("198.19.255.1", "198.19.255.1/24"))])
def test_gateway_for(host, gw):
    assert gateway_for(host) == gw


@pytest.mark.parametrize("host", ["10.0.0.2/24", "198.18.0.1/31"])
def test_gateway_for_rejects(host):
    with pytest.raises(UsageError):
        gateway_for(host)


def test_napi_thread_pids(tmp_path):
    for pid, comm in [(10, "napi/vsb1234sw1-8193"), (11, "napi/vsb1234sw10-8194"),
                      (12, "napi/vsb1234sw1-x"), (13, "ksoftirqd/1"), (14, "napi/vsb1234sw1-8195")]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(comm + "\n")
    (tmp_path / "self").mkdir()
    assert napi_thread_pids("vsb1234sw1", proc=tmp_path) == [10, 14]
    assert napi_thread_pids("vsb1234sw2", proc=tmp_path) == []


def test_placed_mode():
    p = Placed()
    assert p.mode() == "sender-softirq"
    p.modes += ["napi-threaded cpu1", "napi-threaded cpu1"]
    assert p.mode() == "napi-threaded cpu1"
    p.modes.append("rps cpu1")
    assert p.mode() == "mixed: napi-threaded cpu1, rps cpu1"


def test_kernel_mode_option():
    assert kernel_mode(ctx()) == "napi"
    assert kernel_mode(ctx(kernel_mode="softirq")) == "softirq"
    with pytest.raises(UsageError, match="kernel_mode"):
        kernel_mode(ctx(kernel_mode="busy"))


def test_napi_priority_option():
    assert napi_priority(ctx()) == "fifo"
    assert napi_priority(ctx(napi_priority="normal")) == "normal"
    with pytest.raises(UsageError, match="napi_priority"):
        napi_priority(ctx(napi_priority="rt"))


@pytest.mark.parametrize("cls", [BridgeSwitch, VethSwitch])
@pytest.mark.parametrize("key,value", [("napi_priority", "rt"), ("kernel_mode", "busy")])
def test_kernel_switches_refuse_bad_placement_options_before_building(cls, key, value):
    with pytest.raises(UsageError, match=f"{key}={value}: expected one of"):
        cls.check_options({key: value})
    cls.check_options({"napi_priority": "normal", "kernel_mode": "napi"})


def test_out_of_rejects_two_destinations():
    sw = BridgeSwitch(ctx())
    for i, key in enumerate(("a", "b", "c")):
        port = HostPort(key, RID.name(key), RID.ifname(key), f"198.18.{i}.2/24")
        sw.attachments[key] = Attachment(port, RID.ifname(f"sw{i}"))
    out = sw.out_of([ForwardPath("a", "b"), ForwardPath("b", "a"), ForwardPath("a", "b")])
    assert {k: v.host.key for k, v in out.items()} == {"a": "b", "b": "a"}
    with pytest.raises(UsageError, match="cannot go both"):
        sw.out_of([ForwardPath("a", "b"), ForwardPath("a", "c")])
    with pytest.raises(UsageError, match="not attached"):
        sw.out_of([ForwardPath("a", "z")])
