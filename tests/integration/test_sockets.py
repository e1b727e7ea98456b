"""What applications see (measure/sockets.py) on real namespaces, through the command line as a
user calls it: a TCP stream through the bridge at MTU 1500 and 9000; request/response and one
connection per transaction through the router, the client reaching the server by a virtual IP
that nftables DNAT translates in the router's namespace; a TCP stream and request/response
through pvp and chain:2 on the bridge, every network function a kernel IP router that forwarded
the traffic (its namespace's Ip ForwDatagrams grew); a UDP stream paced at its rate; nothing
left behind (namespaces,
processes, temp directories); a DPDK switch refused with exit 3 and the reason."""

from __future__ import annotations

import glob
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import processes_mentioning
from vswbench.engine.sockapp import find_sockapp
from vswbench.host.netns import list_namespaces
from vswbench.host.netns import wait_until

pytestmark = pytest.mark.usefixtures("root", "engine")


def vswbench(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vswbench", *argv], capture_output=True,
                          text=True, timeout=180)


def measured(*argv: str) -> dict:
    proc = vswbench(*argv, "--duration", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    run_id = data["run_id"]
    assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
    assert not processes_mentioning(run_id)
    assert not sockapps_running()
    assert not glob.glob(f"/tmp/vsb-{run_id}-*")
    return data


def sockapps_running() -> list[str]:
    """Processes running this checkout's vswbench-sockapp (its argv names no run id: `ip netns
    exec` execs into it)."""
    binary = str(find_sockapp())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and argv0 == binary:
            found.append(entry.name)
    return found


@pytest.mark.parametrize("mtu", ["1500", "9000"])
def test_tcp_stream_through_the_bridge(mtu):
    data = measured("stream", "--switch", "bridge", "--mtu", mtu, "--flows", "2")
    assert data["kind"] == "stream" and data["switch"] == "bridge" and data["mtu"] == int(mtu)
    assert data["goodput_gbps"] > 0.01 and data["retransmits"] is not None
    assert data["cpu_s_per_gb"] > 0
    assert data["read_size"] == 1 << 20          # the server's recv size (its default)
    drops = data["port_tx_drops"]   # where retransmissions come from: frames a port dropped
    assert set(drops) <= {"client.p0", "server.p0"} and all(n > 0 for n in drops.values())
    if mtu == "9000":   # every link of the testbed took it, host ports and switch side
        links = data["tuning"]["mtu_links"]
        assert len(links) >= 4 and set(links.values()) == {9000}
    assert [c["flows"] for c in data["clients"]] == [2]


@pytest.mark.parametrize("kind", ["rr", "crr"])
def test_rr_and_crr_through_the_router_by_a_service(kind):
    data = measured(kind, "--switch", "router", "--service")
    assert data["service_vip"] == "198.19.255.10" and data["service"]
    assert data["transactions"] > 10 and data["transactions_per_s"] > 10
    lat = data["latency_us"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"]
    assert sum(b[2] for b in data["histogram"]) == data["transactions"]
    assert data["cycles_per_transaction"] is None or data["cycles_per_transaction"] > 0
    if kind == "crr":
        assert data["connections_per_s"] == data["transactions_per_s"]
        assert data["servers"][0]["accepted"] >= data["transactions"]


@pytest.mark.parametrize("kind", ["stream", "rr"])
@pytest.mark.parametrize("scenario", ["pvp", "chain:2"])
def test_tcp_through_kernel_routers(kind, scenario):
    data = measured(kind, "--switch", "bridge", "--scenario", scenario)
    assert data["scenario"] == scenario and data["nf"] == "kernel IP routing"
    routed = data["nf_forwarded"]
    assert sorted(routed) == (["nf1"] if scenario == "pvp" else ["nf1", "nf2"])
    if kind == "stream":
        assert data["goodput_gbps"] > 0.01
        assert all(n > 100 for n in routed.values())    # segments and their ACKs
    else:   # one request outstanding: each request and each reply crossed every router
        assert data["transactions"] > 10
        assert all(n >= 2 * data["transactions"] for n in routed.values())


def test_udp_stream_with_offloads_off():
    data = measured("stream", "--switch", "bridge", "--proto", "udp", "--size", "1200",
                    "--offloads", "off")
    assert data["goodput_gbps"] > 0 and 0 <= data["udp_loss_ratio"] < 1
    assert set(data["tuning"]["offload_links"].values()) == {"off"}


def test_paced_udp_stream_sends_its_rate():
    """--rate paces the client: it sends what the schedule makes due (100 Mbit/s of 1200 B
    datagrams for 1 s), not what the sockets take; unpaced, the bridge's server lost 96 %."""
    data = measured("stream", "--switch", "bridge", "--proto", "udp", "--size", "1200",
                    "--rate", "100M")
    assert data["rate_bps"] == 100e6
    assert 0.095 <= data["sent_gbps"] <= 0.101
    assert 0 < data["goodput_gbps"] <= data["sent_gbps"] and data["udp_loss_ratio"] < 0.5


@pytest.mark.parametrize("switch", ["testpmd", "memif"])
def test_dpdk_switch_refused(switch):
    proc = vswbench("stream", "--switch", switch)
    assert proc.returncode == 3
    assert "DPDK devices" in proc.stderr and "no kernel socket reaches" in " ".join(
        proc.stderr.split())


def test_a_socket_campaign_is_stored_and_reported(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[campaign]\nname = "sockets-it"\n[[study]]\nkind = ["rr", "crr"]\n'
                    'switch = ["router"]\nscenario = "rr"\nservice = [true]\nduration = [1]\n')
    out = tmp_path / "out"
    proc = vswbench("run", str(spec), "--out", str(out), "--yes")
    assert proc.returncode == 0, proc.stderr
    from vswbench.api import load_results

    results = load_results(out)
    assert sorted(s.kind for s in results.sockets) == ["crr", "rr"]
    assert all(s.service and s.transactions_per_s and s.transactions_per_s > 10
               for s in results.sockets)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="sockets"' in html and "TCP request/response, 64 B" not in html  # service: not base
    run_ids = {p.run_id for p in results.data.points}
    for run_id in run_ids:
        assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
        assert not processes_mentioning(run_id)


def test_sigterm_mid_run_removes_everything(tmp_path):
    log = tmp_path / "err.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "vswbench", "stream", "--switch",
                                 "bridge", "--duration", "60"], stdout=subprocess.DEVNULL,
                                stderr=err, text=True)
    try:
        wait_until(lambda: "for 60 s" in log.read_text() and bool(sockapps_running()),
                   timeout=60, what="the socket client running")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 130
        assert time.monotonic() - started < 10    # the client ends on SIGTERM, not by SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "interrupted by SIGTERM" in text
    run_id = re.search(r"run (vsb[0-9a-f]{4})", text).group(1)
    assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
    assert not sockapps_running() and not glob.glob(f"/tmp/vsb-{run_id}-*")
