"""CNI netconf building (switches/cni/netconf.py) and the execution protocol's environment
(plugin.py), without root: what a runtime would write on a plugin's stdin and in its env."""

from __future__ import annotations

import pytest

from vswbench.errors import UsageError
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.base import HostPort
from vswbench.switches.base import SwitchContext
from vswbench.switches.cni import netconf as nc
from vswbench.switches.cni.plugin import Invocation
from vswbench.switches.cni.plugin import load_record
from vswbench.switches.cni.plugin import plugin_argv
from vswbench.switches.cni.plugin import record
from vswbench.switches.cni.switch import CniBridge
from vswbench.switches.cni.switch import CniBridgeBare
from vswbench.switches.cni.switch import CniBridgeTuning
from vswbench.switches.cni.switch import host_side


def test_host_local_keeps_its_state_where_told_and_refuses_other_ranges():
    ipam = nc.host_local("/tmp/vsb-vsb0001-abcdefgh/ipam")
    assert ipam == {"type": "host-local", "dataDir": "/tmp/vsb-vsb0001-abcdefgh/ipam",
                    "ranges": [[{"subnet": "198.18.0.0/16", "gateway": "198.18.0.1"}]]}
    with pytest.raises(UsageError, match="outside 198.18.0.0/15"):
        nc.host_local("/d", "10.0.0.0/8")
    with pytest.raises(UsageError, match="outside subnet"):
        nc.host_local("/d", "198.18.1.0/24", "198.18.2.1")
    with pytest.raises(UsageError, match="dataDir"):
        nc.host_local("")


def test_bridge_refuses_hairpin_with_promisc_as_the_plugin_does():
    with pytest.raises(UsageError, match="hairpinMode and promiscMode"):
        nc.bridge("br", {}, gateway=True, ipmasq=True, hairpin=True, promisc=True)


def test_stdin_follows_libcni_name_version_prevresult_and_capabilities():
    ipam = nc.host_local("/d")
    conf = nc.conflist("vsb0001cni", [
        nc.bridge("vsb0001br", ipam, gateway=True, ipmasq=True, hairpin=True),
        nc.chained("firewall")])
    first = nc.plugin_stdin(conf, 0, ips=["198.18.1.1/16"])
    assert first["name"] == "vsb0001cni" and first["cniVersion"] == "1.0.0"
    assert first["runtimeConfig"] == {"ips": ["198.18.1.1/16"]}
    assert "prevResult" not in first
    assert (first["isGateway"], first["ipMasq"], first["hairpinMode"]) == (True, True, True)
    prev = {"cniVersion": "1.0.0", "interfaces": [{"name": "x"}]}
    second = nc.plugin_stdin(conf, 1, ips=["198.18.1.1/16"], prev_result=prev)
    assert second["prevResult"] == prev
    assert "runtimeConfig" not in second, "firewall declares no ips capability"
    with pytest.raises(UsageError, match="outside"):
        nc.plugin_stdin(conf, 0, ips=["192.0.2.1/24"])


def test_chained_plugins_and_unknown_ones():
    assert nc.chained("bandwidth")["egressRate"] == nc.BANDWIDTH_BPS
    assert nc.chained("tuning", "/t")["dataDir"] == "/t"
    with pytest.raises(UsageError, match="chainable: bandwidth, firewall, tuning"):
        nc.chained("portmap")
    with pytest.raises(UsageError, match="1-4094"):
        nc.vlan("m", 0, {})


def ctx(tmp_path) -> SwitchContext:
    return SwitchContext(RunId("vsb0a0b"), CleanupRegistry(), "vsb0a0bsw",
                         temp_dir=str(tmp_path))


PORT = HostPort("tester.p0", "vsb0a0btester", "vsb0a0btp0", "198.18.1.1/16")


@pytest.mark.parametrize(("cls", "flags", "chain"), [
    (CniBridge, (True, True, True, False), []),
    (CniBridgeBare, (False, False, False, False), []),
    (CniBridgeTuning, (True, True, True, False), ["tuning"]),
])
def test_each_bridge_backend_builds_its_netconf(tmp_path, cls, flags, chain):
    conf = cls(ctx(tmp_path)).netconf(PORT)
    main = conf["plugins"][0]
    assert conf["name"] == "vsb0a0bcni" and main["bridge"] == "vsb0a0bbr"
    assert (main["isGateway"], main["ipMasq"], main["hairpinMode"], main["promiscMode"]) == flags
    assert main["ipam"]["dataDir"] == str(tmp_path / "ipam")
    assert ("gateway" in main["ipam"]["ranges"][0][0]) == flags[0]
    assert nc.plugin_types(conf)[1:] == chain
    if chain == ["tuning"]:
        assert conf["plugins"][1]["dataDir"] == str(tmp_path / "tuning")


def test_invocation_env_and_argv_are_the_runtime_s_no_shell(tmp_path):
    inv = Invocation({"name": "n", "cniVersion": "1.0.0", "plugins": [{"type": "bridge"}]},
                     "vsb0a0bsw", "vsb0a0btester", "vsb0a0btp0", "vsb0a0btp0")
    env = inv.env("ADD")
    assert env["CNI_COMMAND"] == "ADD" and env["CNI_NETNS"] == "/run/netns/vsb0a0btester"
    assert env["CNI_IFNAME"] == "vsb0a0btp0" and env["CNI_PATH"] == "/usr/lib/cni"
    assert env["CNI_CONTAINERID"] == "vsb0a0btp0"
    assert plugin_argv("vsb0a0bsw", "bridge") == ["ip", "netns", "exec", "vsb0a0bsw",
                                                  "/usr/lib/cni/bridge"]
    path = record(str(tmp_path), inv)
    assert path.parent.name == "cni" and load_record(path) == inv
    path.write_text("{")
    assert load_record(path) is None


def test_host_side_interface_is_the_one_without_a_sandbox():
    result = {"interfaces": [{"name": "br", "mac": "1"}, {"name": "veth1", "mac": "2"},
                             {"name": "eth0", "mac": "3", "sandbox": "/run/netns/x"}]}
    assert host_side(result, exclude="br") == ("veth1", "2")
    assert host_side({}) == ("", "")


def test_docker_rules_are_docker_s_default_bridge_chains():
    from vswbench.switches.kernel.docker import docker_rules

    text = docker_rules("vsb0a0bbr")
    for chain in ("DOCKER-USER", "DOCKER-ISOLATION-STAGE-1", "DOCKER-ISOLATION-STAGE-2",
                  "DOCKER", "FORWARD", "POSTROUTING", "PREROUTING", "OUTPUT"):
        assert f"chain {chain} {{" in text
    assert "type filter hook forward priority filter; policy drop;" in text
    assert 'oifname "vsb0a0bbr" ct state related,established accept' in text
    assert 'iifname "vsb0a0bbr" oifname "vsb0a0bbr" accept' in text       # icc=true
    assert 'ip saddr 198.18.0.0/16 oifname != "vsb0a0bbr" masquerade' in text
    assert text.startswith("table ip vsbdocker {")


def test_flowtable_and_mirred_rules():
    from vswbench.switches.kernel.flowtable import flowtable_rules
    from vswbench.switches.kernel.mirred import mirred_argv

    text = flowtable_rules(["vsb0a0bsw0", "vsb0a0bsw1"])
    assert "devices = { vsb0a0bsw0, vsb0a0bsw1 };" in text
    assert "meta l4proto { tcp, udp } flow add @ft" in text
    argv = mirred_argv("ns", "a", "b")
    assert argv[-6:] == ["action", "mirred", "egress", "redirect", "dev", "b"]
    assert "u32" in argv and "bpf" not in argv


def test_clean_s_dry_run_names_the_cni_dels_it_would_call(tmp_path):
    from vswbench.testbed.leftovers import CleanPlan
    from vswbench.testbed.leftovers import dry_run_lines

    run_dir = tmp_path / "vsb-vsb0a0b-abcdefgh"
    run_dir.mkdir()
    inv = Invocation({"name": "n", "cniVersion": "1.0.0", "plugins": [{"type": "bridge"}]},
                     "vsb0a0bsw", "vsb0a0btester", "vsb0a0btp0", "vsb0a0btp0")
    record(str(run_dir), inv)
    lines = dry_run_lines(CleanPlan(temp_dirs=[run_dir]))
    assert f"would call CNI DEL for vsb0a0btp0 (recorded in {run_dir})" in lines


def test_ptp_gives_each_port_its_own_network_as_the_l3_plan_addresses_it(tmp_path):
    from vswbench.switches.cni.others import CniPtp

    sw = CniPtp(ctx(tmp_path))
    port = HostPort("tester.p1", "vsb0a0btester", "vsb0a0btp1", "198.18.2.2/24")
    assert sw.network_for(port) == ("198.18.2.0/24", "198.18.2.1")
    conf = sw.netconf(port)
    assert conf["name"] == "vsb0a0bcni0" and nc.plugin_types(conf) == ["ptp"]
    assert conf["plugins"][0]["ipam"]["ranges"] == [[{"subnet": "198.18.2.0/24",
                                                      "gateway": "198.18.2.1"}]]
