"""Where a TCP stream's retransmissions come from: the host ports' tx drops over one socket run
(measure/sockets.port_tx_drops) and the row `vswbench stream` prints for each; the server's read
size (SockParams.read_size -> --read-size, recorded as read_size). Made-up counters: FIXTURES,
NOT MEASUREMENTS."""

from __future__ import annotations

from vswbench.cli.sockets import print_result
from vswbench.host.netns import LinkCounters
from vswbench.measure.socket_result import SocketResult
from vswbench.measure.sockets import port_tx_drops


def counters(tx_dropped: int) -> LinkCounters:
    return LinkCounters(10, 20, 1000, 2000, 0, tx_dropped)


def test_port_tx_drops_counts_growth_only():
    before = {"client.p0": counters(5), "server.p0": counters(7), "gone.p0": counters(1)}
    after = {"client.p0": counters(29_738), "server.p0": counters(7), "new.p0": counters(3)}
    assert port_tx_drops(before, after) == {"client.p0": 29_733}
    assert port_tx_drops(after, after) == {}


def result(**kw):
    base = {"switch": "bridge", "scenario": "rr", "kind": "stream", "proto": "tcp", "flows": 1,
            "pairs": 1, "size": 16384, "mtu": 1500, "offloads": "default", "service": False,
            "service_vip": None, "latency_us": {}, "goodput_gbps": 4.5, "udp_loss_ratio": None,
            "retransmits": 31_735, "busy_cpu_s": 5.0, "cpu_s_per_gb": 2.0, "cost_per_core": {}}
    return SocketResult.from_json("stream", {**base, **kw})


def test_stream_prints_the_ports_drops_beside_the_retransmissions(capsys):
    print_result(result(port_tx_drops={"client.p0": 29_733, "server.p0": 7_694}))
    text = capsys.readouterr().out
    assert "31,735" in text
    assert "client.p0" in text and "29,733" in text and "7,694" in text
    print_result(result(port_tx_drops={}))
    assert "frames dropped" not in capsys.readouterr().out


def test_the_servers_read_size_is_passed_checked_and_recorded():
    from vswbench.engine.sockapp import SockParams
    from vswbench.measure.sockets import SocketOptions
    from vswbench.measure.sockets import plan_sockets
    from vswbench.measure.sockets import summarize

    assert "--read-size" not in SockParams().server_args("198.18.0.2")
    args = SockParams("stream", read_size=131072).server_args("198.18.0.2")
    assert args[-2:] == ["--read-size", "131072"]
    assert any("read size" in p for p in SockParams(read_size=0).problems())
    assert any("read size" in p for p in SockParams(read_size=(1 << 20) + 1).problems())
    plan = plan_sockets(SocketOptions("bridge", load=SockParams("stream", read_size=131072)))
    assert summarize(plan, [], [], elapsed=1.0, cycles=None, busy_s=0.0)["read_size"] == 131072
    plan = plan_sockets(SocketOptions("bridge", load=SockParams("stream")))
    assert summarize(plan, [], [], elapsed=1.0, cycles=None, busy_s=0.0)["read_size"] == 1 << 20
    plan = plan_sockets(SocketOptions("bridge", load=SockParams("rr", size=64)))
    assert summarize(plan, [], [], elapsed=1.0, cycles=None, busy_s=0.0)["read_size"] is None
