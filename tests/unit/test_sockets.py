"""Socket measurements without root: the sockapp's command lines and records, which scenarios
and switches have kernel socket endpoints (exit 3 for the others), pvp and chain:N as socket
chains (their hops, endpoints, routes from made-up ports, refusals), the checks of the options,
and the headline figures computed from made-up client and server records (FIXTURES, NOT
MEASUREMENTS)."""

from __future__ import annotations

import pytest

from vswbench.cli import app as cli
from vswbench.engine.sockapp import SockParams
from vswbench.engine.sockapp import parse_client
from vswbench.engine.sockapp import parse_server
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.measure.socket_chain import NF_ROUTING
from vswbench.measure.socket_chain import ChainRoute
from vswbench.measure.socket_chain import Router
from vswbench.measure.socket_chain import chain_links
from vswbench.measure.socket_chain import forwarded_datagrams
from vswbench.measure.socket_chain import plan_routing
from vswbench.measure.socket_chain import socket_scenario
from vswbench.measure.sockets import SocketOptions
from vswbench.measure.sockets import SocketsUnsupported
from vswbench.measure.sockets import both_ways
from vswbench.measure.sockets import endpoints
from vswbench.measure.sockets import plan_sockets
from vswbench.measure.sockets import quantile_us
from vswbench.measure.sockets import summarize
from vswbench.scenario import Hop
from vswbench.scenario import Role
from vswbench.scenario import parse
from vswbench.scenario import socket_chain
from vswbench.testbed.plan import PortInfo
from vswbench.units import parse_bitrate


def client_record(**kw):
    base = {"type": "result", "role": "client", "mode": "rr", "proto": "tcp", "flows": 2,
            "size": 64, "duration_s": 2.0, "bytes_sent": 6400, "bytes_acked": 6400,
            "bytes_received": 6400, "datagrams_sent": 0, "send_errors": 0,
            "goodput_gbps": 0.0, "retransmits": 3, "transactions": 100,
            "transactions_per_s": 50.0, "timeouts": 0, "connections": 2,
            "connections_per_s": 0.0, "connect_errors": 0, "cpu_s": 0.5,
            "latency_us": {"min": 10.0, "p50": 20.0, "p90": 30.0, "p99": 40.0, "p999": 50.0,
                           "p9999": 50.0, "max": 60.0, "mean": 22.0, "stddev": 5.0,
                           "count": 100},
            "hist": [[10000, 10078, 50], [20000, 20156, 40], [60000, 60468, 10]]}
    return {**base, **kw}


def server_record(**kw):
    base = {"type": "result", "role": "server", "mode": "rr", "proto": "tcp", "flows": 2,
            "size": 64, "duration_s": 2.0, "bytes_received": 6400, "datagrams_received": 0,
            "replies": 100, "accepted": 2, "goodput_gbps": 0.0, "cpu_s": 0.4}
    return {**base, **kw}


def test_command_lines():
    p = SockParams("rr", "udp", 4, 64, 2.0)
    assert p.server_args("198.18.2.2", cpu=1) == [
        "server", "--mode", "rr", "--proto", "udp", "--addr", "198.18.2.2", "--port", "18000",
        "--flows", "4", "--size", "64", "--cpu", "1"]
    assert p.client_args("198.19.255.10")[-4:] == ["64", "--duration", "2", "--hist"]
    assert "--cpu" not in p.client_args("198.18.2.2")


@pytest.mark.parametrize("params, fragment", [
    (SockParams("bulk"), "mode 'bulk'"),
    (SockParams(proto="sctp"), "proto"),
    (SockParams("crr", "udp"), "TCP connection"),
    (SockParams(flows=0), "flows 0"),
    (SockParams(proto="udp", size=65508), "1..65507"),
    (SockParams(duration=0.01), "duration"),
    (SockParams(proto="udp", read_size=131072), "TCP streams only"),
    (SockParams("rr", read_size=131072), "TCP streams only"),
    (SockParams(rate_bps=1e9), "UDP streams only"),
    (SockParams("rr", "udp", rate_bps=1e9), "UDP streams only"),
    (SockParams(proto="udp", rate_bps=10.0), "bits/s"),
])
def test_load_problems(params, fragment):
    assert any(fragment in p for p in params.problems())


def test_records_parse():
    c = parse_client(client_record())
    assert (c.transactions, c.retransmits, c.latency.p99, c.histogram[0]) == (
        100, 3, 40.0, [10000, 10078, 50])
    empty = parse_client(client_record(latency_us={"min": None, "p50": None, "count": 0},
                                       hist=[]))
    assert empty.latency.empty
    s = parse_server(server_record())
    assert (s.replies, s.accepted) == (100, 2)


def test_endpoints_and_both_directions():
    assert endpoints(parse("rr")) == [("client.p0", "server.p0")]
    assert endpoints(parse("pairs:2")) == [("s1.p0", "r1.p0"), ("s2.p0", "r2.p0")]
    assert endpoints(parse("remote-vxlan")) == [("s1.p0", "r1.p0")]
    s = both_ways(parse("p2p-pair"))
    assert s.hops == (Hop("s1.p0", "r1.p0"), Hop("r1.p0", "s1.p0"))
    assert both_ways(parse("rr")).hops == parse("rr").hops   # already both ways


@pytest.mark.parametrize("scenario", ["p2p", "tester-dut"])
def test_tester_scenarios_refused(scenario):
    with pytest.raises(SocketsUnsupported, match="one namespace") as exc:
        endpoints(parse(scenario))
    assert exc.value.exit_code == 3
    with pytest.raises(SocketsUnsupported, match="one namespace"):
        plan_sockets(SocketOptions("bridge", scenario))


def test_socket_chain_scenario():
    s = socket_chain(2)
    assert s.name == "chain:2" and socket_chain(1).name == "pvp"
    assert [(h.name, h.role, h.ports) for h in s.hosts] == [
        ("client", Role.CLIENT, ("p0",)), ("nf1", Role.NF, ("in", "out")),
        ("nf2", Role.NF, ("in", "out")), ("server", Role.SERVER, ("p0",))]
    assert s.hops == (Hop("client.p0", "nf1.in"), Hop("nf1.out", "nf2.in"),
                      Hop("nf2.out", "server.p0"))
    # pvp and chain:N keep their names; the others are unchanged
    assert socket_scenario(parse("chain:2")) == s and socket_scenario(parse("pvp")).name == "pvp"
    assert socket_scenario(parse("rr")) == parse("rr")
    assert endpoints(parse("pvp")) == endpoints(parse("chain:3")) == [("client.p0", "server.p0")]
    # the way back added, the links from client to server found through it
    back = both_ways(s)
    assert Hop("nf1.in", "client.p0") in back.hops and Hop("server.p0", "nf2.out") in back.hops
    assert chain_links(back) == [("client.p0", "nf1.in"), ("nf1.out", "nf2.in"),
                                 ("nf2.out", "server.p0")]


def test_chain_routes_from_made_up_ports():
    s = both_ways(socket_chain(2))
    ports = {}
    for h, host in enumerate(s.hosts):
        for j, port in enumerate(host.ports):
            key = f"{host.name}.{port}"
            ports[key] = PortInfo(key, f"ns-{host.name}", f"if-{host.name}-{port}",
                                  f"198.18.{h + 1}.{j + 1}/16", f"02:00:00:00:0{h}:0{j}")
    routing = plan_routing(s, ports)
    assert routing.routers == (Router("nf1", "ns-nf1", "if-nf1-in", "if-nf1-out"),
                               Router("nf2", "ns-nf2", "if-nf2-in", "if-nf2-out"))
    server, client = "198.18.4.1", "198.18.1.1"
    assert routing.routes == (
        ChainRoute("ns-client", "if-client-p0", server, "02:00:00:00:01:00"),   # nf1.in
        ChainRoute("ns-nf1", "if-nf1-in", client, "02:00:00:00:00:00"),         # the client
        ChainRoute("ns-nf1", "if-nf1-out", server, "02:00:00:00:02:00"),        # nf2.in
        ChainRoute("ns-nf2", "if-nf2-in", client, "02:00:00:00:01:01"),         # nf1.out
        ChainRoute("ns-nf2", "if-nf2-out", server, "02:00:00:00:03:00"),        # the server
        ChainRoute("ns-server", "if-server-p0", client, "02:00:00:00:02:01"))    # nf2.out


def test_forwarded_datagrams():
    snmp = ("Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams\n"
            "Ip: 1 64 120 0 0 117\nIcmp: InMsgs\nIcmp: 0\n")
    assert forwarded_datagrams(snmp) == 117
    with pytest.raises(VswbenchError, match="ForwDatagrams"):
        forwarded_datagrams("Icmp: InMsgs\nIcmp: 0\n")


@pytest.mark.parametrize("scenario", ["pvp", "chain:3"])
def test_socket_chains_plan(scenario):
    plan = plan_sockets(SocketOptions("bridge", scenario, tester_cpu=0, switch_cpu=1))
    assert plan.scenario.name == scenario and plan.nf == NF_ROUTING
    assert plan.endpoints == (("client.p0", "server.p0"),)
    nfs = [h.name for h in plan.scenario.hosts if h.role is Role.NF]
    assert len(nfs) == (1 if scenario == "pvp" else 3)
    assert Hop("server.p0", f"{nfs[-1]}.out") in plan.scenario.hops   # the way back
    rr = plan_sockets(SocketOptions("bridge", "rr", tester_cpu=0, switch_cpu=1))
    assert plan.placement == rr.placement and rr.nf is None   # the routers take no core


@pytest.mark.parametrize("switch, options, fragment", [
    ("router", {}, "routes by destination address"),
    ("router-flowtable", {}, "routes by destination address"),
    ("veth", {"nf": "router"}, "leave option nf out"),
    ("bridge", {"nf": "router"}, "leave option nf out"),
    ("veth", {"nf": "ovs"}, "leave option nf out"),
])
def test_socket_chains_refused(switch, options, fragment):
    with pytest.raises(SocketsUnsupported, match=fragment) as exc:
        plan_sockets(SocketOptions(switch, "chain:2", options=options))
    assert exc.value.exit_code == 3


def test_socket_chain_option_errors():
    with pytest.raises(UsageError, match="nf='bogus'"):
        plan_sockets(SocketOptions("bridge", "pvp", options={"nf": "bogus"}))
    with pytest.raises(UsageError, match="nf_poll"):
        plan_sockets(SocketOptions("bridge", "pvp", options={"nf_poll": "sleep"}))
    with pytest.raises(UsageError, match="network functions"):   # rr has none: as before
        plan_sockets(SocketOptions("veth", "rr", options={"nf": "router"}))


@pytest.mark.parametrize("switch", ["memif", "testpmd", "ovs-dpdk"])
def test_dpdk_switches_refused(switch):
    with pytest.raises(SocketsUnsupported, match="no kernel socket") as exc:
        plan_sockets(SocketOptions(switch))
    assert exc.value.exit_code == 3


def test_bad_options():
    with pytest.raises(UsageError, match="--mtu 4000"):
        plan_sockets(SocketOptions("bridge", mtu=4000))
    with pytest.raises(UsageError, match="--offloads"):
        plan_sockets(SocketOptions("bridge", offloads="some"))
    with pytest.raises(UsageError, match="unknown switch"):
        plan_sockets(SocketOptions("bogus"))
    plan = plan_sockets(SocketOptions("router", "pairs:2", mtu=9000, service=True))
    assert plan.endpoints == (("s1.p0", "r1.p0"), ("s2.p0", "r2.p0")) and plan.switch_cls.l3


def test_cli_refusals(capsys):
    assert cli.main(["stream", "--switch", "memif"]) == 3
    assert "DPDK devices" in capsys.readouterr().err
    assert cli.main(["rr", "--switch", "bridge", "--scenario", "p2p"]) == 3
    assert "one namespace" in capsys.readouterr().err
    assert cli.main(["rr", "--switch", "router", "--scenario", "pvp"]) == 3
    assert "past the network functions" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["stream", "--switch", "veth", "--scenario", "chain:2",
                     "--option", "nf=router"]) == 3
    assert cli.main(["crr", "--switch", "bridge", "--mtu", "1234"]) == 2
    assert cli.main(["crr", "--switch", "bridge", "--proto", "udp"]) == 2   # crr: TCP only
    assert cli.main(["stream", "--switch", "bridge", "--proto", "udp", "--read-size", "4096"]) == 2
    assert "TCP streams only" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["rr", "--switch", "bridge", "--read-size", "4096"]) == 2   # stream's option
    assert cli.main(["stream", "--switch", "bridge", "--rate", "500M"]) == 2     # TCP paces itself
    assert "UDP streams only" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["stream", "--switch", "bridge", "--proto", "udp", "--rate", "lots"]) == 2
    assert "bits per second" in capsys.readouterr().err


def test_rate_reaches_the_client():
    p = SockParams("stream", "udp", 2, 1400, 2.0, rate_bps=parse_bitrate("1.5G"))
    assert p.client_args("198.18.2.2")[-4:] == ["2", "--rate", "1500000000", "--hist"]
    assert "--rate" not in SockParams(proto="udp").client_args("198.18.2.2")
    assert parse_bitrate("500M") == 5e8 and parse_bitrate("64k") == 64e3
    for bad in ("fast", "10", "2T", "1e15"):
        with pytest.raises(UsageError, match="bits per second"):
            parse_bitrate(bad)


def test_read_size_reaches_the_server():
    p = SockParams("stream", "tcp", 1, 131072, 2.0, read_size=131072)
    assert p.server_args("198.18.2.2")[-2:] == ["--read-size", "131072"]
    assert "--read-size" not in SockParams().server_args("198.18.2.2")


def test_quantiles_of_merged_histogram():
    hist = [[10000, 10078, 50], [20000, 20156, 40], [60000, 60468, 10]]
    assert quantile_us(hist, 0.5) == 10.039
    assert quantile_us(hist, 0.9) == 20.078
    assert quantile_us(hist, 0.99) == 60.234
    assert quantile_us([], 0.5) is None


def test_summary_rr_and_stream():
    plan = plan_sockets(SocketOptions("bridge", load=SockParams("rr", "tcp", 2, 64, 2.0)))
    clients = [parse_client(client_record()), parse_client(client_record())]
    servers = [parse_server(server_record())] * 2
    out = summarize(plan, clients, servers, elapsed=2.1, cycles=2.6e9, busy_s=1.0)
    assert out["transactions"] == 200 and out["transactions_per_s"] == 100.0
    assert out["latency_us"]["p50"] == 10.039 and out["latency_us"]["count"] == 200
    assert out["histogram"][0] == [10000, 10078, 100]
    assert out["cycles_per_transaction"] == 13_000_000.0 and out["retransmits"] == 6
    assert out["goodput_gbps"] is None and out["connections_per_s"] is None
    stream = plan_sockets(SocketOptions("bridge", load=SockParams("stream", "udp", 1, 1000)))
    c = parse_client(client_record(mode="stream", proto="udp", bytes_sent=2_000_000_000,
                                   bytes_acked=0, hist=[], transactions=0))
    s = parse_server(server_record(bytes_received=1_500_000_000))
    out = summarize(stream, [c], [s], elapsed=2.0, cycles=None, busy_s=3.0)
    assert out["goodput_gbps"] == 6.0 and out["udp_loss_ratio"] == 0.25
    assert out["cpu_s_per_gb"] == 2.0 and out["retransmits"] is None


def test_cost_per_core():
    from vswbench.host.cpustat import CoreUsage
    from vswbench.measure.sockets import per_core_cost

    usage = {0: CoreUsage(0, .5, .3, .1, 0, .1, 0, .9, 2.0),
             1: CoreUsage(1, .1, .2, .4, 0, .3, 0, .7, 1.0)}
    out = per_core_cost(usage, {"bytes_moved": 2_000_000_000, "transactions": 1000}, 2.6e9)
    assert out == {"0": {"cpu_s_per_gb": 1.0, "cycles_per_transaction": 5_200_000.0},
                   "1": {"cpu_s_per_gb": 0.5, "cycles_per_transaction": 2_600_000.0}}
    assert per_core_cost(usage, {"bytes_moved": 0, "transactions": 0}, None)["0"] == {
        "cpu_s_per_gb": None, "cycles_per_transaction": None}
