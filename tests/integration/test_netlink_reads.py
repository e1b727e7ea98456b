"""host/netlink.py against `ip`: in two namespaces joined by a veth pair, after traffic, every
link, counter and address that netlink reads is what `ip -j -s link show` and `ip -j addr show`
print; a missing link or namespace is a one-line error."""

from __future__ import annotations

import pytest

from tests.integration.integration_helpers import TX_CPU
from tests.integration.integration_helpers import port_args
from vswbench.engine.process import run_engine
from vswbench.errors import VswbenchError
from vswbench.host import netlink
from vswbench.host.netns import ip_json

COUNT = 1000


def _as_ip_prints(link: netlink.LinkState) -> dict[str, object]:
    s = link.stats
    assert s is not None, link
    return {"ifname": link.ifname, "ifindex": link.ifindex, "operstate": link.operstate,
            "address": link.address,
            "rx": (s.rx_packets, s.rx_bytes, s.rx_errors, s.rx_dropped),
            "tx": (s.tx_packets, s.tx_bytes, s.tx_errors, s.tx_dropped)}


def _ip_prints(entry: dict) -> dict[str, object]:
    rx, tx = entry["stats64"]["rx"], entry["stats64"]["tx"]
    return {"ifname": entry["ifname"], "ifindex": entry["ifindex"],
            "operstate": entry["operstate"], "address": entry["address"],
            "rx": (rx["packets"], rx["bytes"], rx["errors"], rx["dropped"]),
            "tx": (tx["packets"], tx["bytes"], tx["errors"], tx["dropped"])}


@pytest.mark.timeout(60)
def test_links_counters_and_addresses_read_as_ip_prints_them(ns_pair, engine, registry):
    a, b = ns_pair.a, ns_pair.b
    run_engine(["gen", *port_args(a, "afpacket", TX_CPU), "--count", str(COUNT), "--rate", "20k",
                "--size", "64", "--no-hist"], engine=engine, registry=registry, timeout=30)
    for end in (a, b):   # nothing else sends in these namespaces: both reads see one state
        shown = {e["ifname"]: _ip_prints(e) for e in ip_json("-s", "link", "show",
                                                              netns=end.netns)}
        read = {name: _as_ip_prints(link) for name, link in netlink.links(end.netns).items()}
        assert read == shown
        assert _as_ip_prints(netlink.link(end.netns, end.ifname)) == shown[end.ifname]
        listed = [i["local"] for e in ip_json("addr", "show", "dev", end.ifname, netns=end.netns)
                  for i in e["addr_info"]]
        assert netlink.addresses(end.netns, end.ifname) == listed == [end.ip]
    assert netlink.link(a.netns, a.ifname).stats.tx_packets >= COUNT   # type: ignore[union-attr]


def test_a_missing_link_or_namespace_is_one_line(ns_pair):
    with pytest.raises(VswbenchError, match=f"no interface vsbnone in namespace {ns_pair.a.netns}"):
        netlink.link(ns_pair.a.netns, "vsbnone")
    with pytest.raises(netlink.NetlinkError, match="no namespace vsb-no-such-namespace"):
        netlink.links("vsb-no-such-namespace")
