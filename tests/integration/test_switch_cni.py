"""CNI plugins as switch backends (issue 33), for real: a search through cni-bridge and
docker-bridge, DEL on teardown taking away what ADD installed (the veths, ipMasq's nat chain,
host-local's address files), and a run killed mid-trial whose leftovers `vswbench clean` removes
by calling DEL from the run's records, leaving no interface, namespace, IPAM file or firewall
rule. A trial through each CNI backend this machine can build,
its record holding the netconf and the plugins' version, is the trial matrix's
(test_trial_matrix.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.integration_helpers import forwarded
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.host.netns import run
from vswbench.run.scope import run_scope
from vswbench.scenario import parse
from vswbench.switches.catalog import all_switches
from vswbench.testbed.build import Testbed


@pytest.mark.timeout(120)
def test_tc_mirred_forwards_and_router_flowtable_says_why_not(root, engine):
    result = vswbench("trial", "--switch", "tc-mirred", "--rate", "5k", "--duration", "0.5",
                      "--warmup", "0", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert forwarded(record), record
    assert "action order 1: mirred (Egress Redirect to device" in record["config_dump"]
    if not all_switches()["router-flowtable"].availability().ok:
        refused = vswbench("trial", "--switch", "router-flowtable", "--rate", "1k")
        assert refused.returncode == 3, refused.stderr
        assert "CONFIG_NF_FLOW_TABLE" in refused.stderr


@pytest.mark.timeout(120)
def test_docker_bridge_tracks_every_flow_through_docker_s_rules(root, engine):
    require("docker-bridge")
    result = vswbench("trial", "--switch", "docker-bridge", "--rate", "5k", "--duration", "0.5",
                      "--warmup", "0", "--flows", "10", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert forwarded(record), record
    dump = record["config_dump"]
    assert "net.bridge.bridge-nf-call-iptables = 1" in dump
    assert "chain DOCKER-ISOLATION-STAGE-1" in dump
    count = dump.split("nf_conntrack_count\n", 1)[1].split("\n", 1)[0]
    assert int(count) >= 10, "conntrack must see each of the 10 flows"



def vswbench(*argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vswbench", *argv], capture_output=True,
                          text=True, timeout=timeout)


def require(name: str) -> None:
    avail = all_switches()[name].availability()
    if not avail.ok:
        pytest.skip(f"{name}: {avail.reason} ({avail.fix})")


def leftovers_of(run_id: str) -> list[str]:
    found = [f"namespace {ns}" for ns in list_namespaces() if ns.startswith(run_id)]
    found += [f"link {link['ifname']}" for link in ip_json("link", "show")
              if str(link["ifname"]).startswith(run_id)]
    found += [f"directory {p}" for p in Path("/tmp").glob(f"vsb-{run_id}-*")]
    return found


def nft_ruleset(netns: str | None = None) -> str:
    argv = ["nft", "list", "ruleset"]
    return run(["ip", "netns", "exec", netns, *argv] if netns else argv, check=False)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", ["cni-bridge", "docker-bridge"])
def test_search_through_cni_bridge_and_docker_bridge(root, engine, name):
    require(name)
    result = vswbench("search", "--switch", name, "--no-calibration", "--min-load",
                      "1k", "--max-load", "20k", "--trial-duration", "0.3", "--warmup", "0")
    assert result.returncode == 0, result.stderr
    assert "NDR" in result.stdout + result.stderr


@pytest.mark.timeout(120)
def test_del_takes_away_what_add_installed(root):
    require("cni-bridge")
    with (run_scope(record_state=False) as scope,
          Testbed(parse("p2p"), all_switches()["cni-bridge"], scope) as tb):
        ns = tb.switch_ns
        netconf = tb.switch.stats()["cni_netconf"]   # type: ignore[union-attr]
        data_dir = Path(netconf["plugins"][0]["ipam"]["dataDir"]) / netconf["name"]
        assert "masquerade" in nft_ruleset(ns), "ipMasq installs a nat chain"
        assert {p.name for p in data_dir.iterdir()} >= {"198.18.1.1", "198.18.1.2"}
        veths = [link["ifname"] for link in ip_json("link", "show", netns=ns)
                 if link.get("link_type") == "ether" and link["ifname"] != f"{scope.id}br"]
        assert len(veths) == 2, veths
        tb.switch.teardown()                            # type: ignore[union-attr]
        assert "CNI-" not in nft_ruleset(ns), nft_ruleset(ns)
        assert not [p for p in data_dir.iterdir() if p.name.startswith("198.")]
        left = [link["ifname"] for link in ip_json("link", "show", netns=ns)]
        assert left == ["lo"], left


@pytest.mark.timeout(180)
def test_kill_mid_trial_then_clean_leaves_nothing(root, engine):
    require("cni-bridge-firewall")
    proc = subprocess.Popen([sys.executable, "-m", "vswbench", "trial", "--switch",
                             "cni-bridge-firewall", "--rate", "1k", "--duration", "60",
                             "--warmup", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    run_id = ""
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("run vsb") and "ready" in line:
                run_id = line.split()[1].rstrip(":")
                break
        assert run_id, f"no testbed (rc {proc.poll()})"
        switch_ns = f"{run_id}sw"
        rules = nft_ruleset(switch_ns)
        chains = sorted({w for w in rules.split() if w.startswith("CNI-")})
        assert "CNI-FORWARD" in chains and any(c not in ("CNI-FORWARD", "CNI-ADMIN")
                                               for c in chains), rules
        ipam = list(Path("/tmp").glob(f"vsb-{run_id}-*/ipam/{run_id}cni/198.*"))
        assert len(ipam) == 2, ipam
        proc.send_signal(signal.SIGKILL)        # our own child, by PID: no cleanup of its own
        proc.wait(timeout=10)
        assert leftovers_of(run_id), "a SIGKILL leaves the run's objects behind"

        result = vswbench("clean", "--prefix", run_id)
        assert result.returncode == 0, result.stderr
        dels = [line for line in result.stdout.splitlines() if "CNI DEL" in line]
        assert len(dels) == 2, result.stdout
        assert all(line.endswith("(bridge, firewall)") for line in dels), dels  # no error
        assert not leftovers_of(run_id), leftovers_of(run_id)
        root_rules = nft_ruleset()
        assert not [c for c in chains if c != "CNI-FORWARD" and c != "CNI-ADMIN"
                    and c in root_rules], "a firewall rule of the run in the root namespace"
        assert run_id not in root_rules
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if run_id and leftovers_of(run_id):
            vswbench("clean", "--force", "--prefix", run_id)
