"""Scenario remote (two emulated hosts joined by a wire): its description, how a hop across the
wire splits into the halves each site's switch forwards, and which backends can take a wire."""
from __future__ import annotations

import pytest

from vswbench import scenario as sc
from vswbench.errors import UsageError
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import SwitchContext
from vswbench.switches.catalog import all_switches
from vswbench.testbed.sites import SiteSwitches
from vswbench.testbed.sites import remote_problem
from vswbench.testbed.sites import wire_key


@pytest.mark.parametrize("name,wire,roles", [
    ("remote", "veth", (sc.Role.SENDER, sc.Role.RECEIVER)),
    ("remote-rr", "veth", (sc.Role.CLIENT, sc.Role.SERVER)),
    ("remote-vxlan", "vxlan", (sc.Role.SENDER, sc.Role.RECEIVER)),
    ("remote-vxlan-rr", "vxlan", (sc.Role.CLIENT, sc.Role.SERVER))])
def test_remote_scenarios_put_the_two_ends_on_two_sites(name, wire, roles) -> None:
    s = sc.parse(name)
    assert s.name == name and s.wire == wire and s.sites == ("h1", "h2")
    assert tuple(h.role for h in s.hosts) == roles
    assert [h.site for h in s.hosts] == ["h1", "h2"]


def test_local_scenarios_have_no_sites_and_a_bad_wire_is_refused() -> None:
    assert sc.parse("p2p-pair").sites == () and sc.parse("rr").wire == ""
    with pytest.raises(UsageError, match="geneve"):
        sc.remote("geneve")
    with pytest.raises(UsageError, match="remote-vxlan"):
        sc.parse("remote-geneve")


def test_only_switches_that_take_a_wire_run_remote() -> None:
    classes = all_switches()
    remote = sc.parse("remote")
    assert remote_problem(remote, classes["bridge"]) is None
    assert remote_problem(remote, classes["ovs"]) is None
    for name in ("veth", "router", "macvlan", "xdp", "testpmd", "ovs-afxdp"):
        problem = remote_problem(remote, classes[name])
        assert problem and name in problem and "bridge or ovs" in problem
    assert remote_problem(sc.parse("p2p"), classes["veth"]) is None


class FakeSwitch:
    """Records what SiteSwitches hands each site's switch."""

    def __init__(self) -> None:
        self.attachments: dict[str, Attachment] = {}
        self.paths: list[ForwardPath] = []

    def forward(self, paths: list[ForwardPath]) -> None:
        self.paths = list(paths)


def _sites(name: str) -> tuple[SiteSwitches, dict[str, FakeSwitch]]:
    rid = RunId("vsb1a2b")
    ctx = SwitchContext(rid, CleanupRegistry(), rid.name("sw"))
    scen = sc.parse(name)
    sites = SiteSwitches(ctx, scen, all_switches()["bridge"])
    fakes = {"h1": FakeSwitch(), "h2": FakeSwitch()}
    sites.inner = fakes  # type: ignore[assignment]
    for site in fakes:
        fakes[site].attachments[wire_key(site)] = Attachment(
            HostPort(wire_key(site), rid.name(site), rid.ifname("w"), ""), "w")
    for i, host in enumerate(scen.hosts):
        key = f"{host.name}.p0"
        sites.attachments[key] = Attachment(HostPort(key, rid.name(host.name), "x", ""), "y",
                                            host_mac=f"02:00:00:00:00:0{i}")
    return sites, fakes


def test_a_hop_across_the_wire_becomes_two_halves() -> None:
    sites, fakes = _sites("remote")
    sites.forward([ForwardPath("s1.p0", "r1.p0")])
    assert fakes["h1"].paths == [ForwardPath("s1.p0", "wire.h1")]
    assert fakes["h2"].paths == [ForwardPath("wire.h2", "r1.p0")]
    # the wire on h1 leads to r1: a static fdb entry points r1's MAC at it
    assert fakes["h1"].attachments["wire.h1"].host_mac == "02:00:00:00:00:01"


def test_round_trip_hops_split_both_ways() -> None:
    sites, fakes = _sites("remote-rr")
    sites.forward([ForwardPath("client.p0", "server.p0"), ForwardPath("server.p0", "client.p0")])
    assert fakes["h1"].paths == [ForwardPath("client.p0", "wire.h1"),
                                 ForwardPath("wire.h1", "client.p0")]
    assert fakes["h2"].paths == [ForwardPath("wire.h2", "server.p0"),
                                 ForwardPath("server.p0", "wire.h2")]
    assert fakes["h2"].attachments["wire.h2"].host_mac == "02:00:00:00:00:00"
