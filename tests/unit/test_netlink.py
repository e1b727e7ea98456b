"""host/netlink.py: the rtnetlink messages it parses, built here byte by byte as the kernel lays
them out, and arbitrary bytes, which give a NetlinkError or a reading, never another exception.
(tests/integration/test_netlink_reads.py checks the reads against `ip` in real namespaces.)"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from vswbench.host import netlink
from vswbench.host.netlink import NetlinkError

EXAMPLES = int(os.environ.get("VSB_FUZZ_EXAMPLES", "100"))


def attr(kind: int, value: bytes) -> bytes:
    length = 4 + len(value)
    return struct.pack("=HH", length, kind) + value + b"\0" * (-length % 4)


def message(kind: int, payload: bytes) -> bytes:
    length = 16 + len(payload)
    return struct.pack("=IHHII", length, kind, 2, 1, 0) + payload + b"\0" * (-length % 4)


def newlink(index: int, name: str, *, oper: int = 6, mac: bytes = b"\x02\0\0\0\0\x07",
            stats: tuple[int, ...] | None = (1, 2, 3, 4, 5, 6, 7, 8)) -> bytes:
    body = struct.pack("=BxHiII", 0, 1, index, 0, 0)
    body += attr(netlink.IFLA_IFNAME, name.encode() + b"\0") + attr(netlink.IFLA_ADDRESS, mac)
    body += attr(netlink.IFLA_OPERSTATE, bytes([oper]))
    if stats is not None:   # the kernel's struct is longer: the head is what is read
        body += attr(netlink.IFLA_STATS64, struct.pack("=24Q", *stats, *[0] * (24 - len(stats))))
    return body


def test_a_link_reads_as_ip_shows_it() -> None:
    data = message(netlink.RTM_NEWLINK, newlink(7, "vsb0abcp0")) + message(netlink.NLMSG_DONE,
                                                                          b"\0" * 4)
    (kind, payload), (done, _) = list(netlink.messages(data))
    assert (kind, done) == (netlink.RTM_NEWLINK, netlink.NLMSG_DONE)
    link = netlink.parse_link(payload)
    assert (link.ifname, link.ifindex, link.operstate, link.address) == (
        "vsb0abcp0", 7, "UP", "02:00:00:00:00:07")
    assert link.stats == netlink.LinkStats(1, 2, 3, 4, 5, 6, 7, 8)


@pytest.mark.parametrize("oper,shown", [(0, "UNKNOWN"), (2, "DOWN"), (3, "LOWERLAYERDOWN"),
                                        (6, "UP"), (200, "UNKNOWN")])
def test_operstates_are_named_as_ip_names_them(oper: int, shown: str) -> None:
    assert netlink.parse_link(newlink(1, "lo", oper=oper)).operstate == shown


def test_a_link_without_counters_has_none() -> None:
    assert netlink.parse_link(newlink(1, "lo", stats=None)).stats is None


def test_addresses_of_both_families() -> None:
    v4 = struct.pack("=BBBBI", socket.AF_INET, 24, 0, 0, 3) + attr(
        netlink.IFA_LOCAL, socket.inet_aton("198.18.0.1")) + attr(
        netlink.IFA_ADDRESS, socket.inet_aton("198.18.0.9"))
    v6 = struct.pack("=BBBBI", socket.AF_INET6, 64, 0, 0, 3) + attr(
        netlink.IFA_ADDRESS, socket.inet_pton(socket.AF_INET6, "2001:2::1"))
    assert netlink.parse_address(v4) == netlink.Address(3, socket.AF_INET, "198.18.0.1")
    assert netlink.parse_address(v6) == netlink.Address(3, socket.AF_INET6, "2001:2::1")


@pytest.mark.parametrize("data", [b"\x10\0\0", struct.pack("=IHHII", 8, 16, 0, 0, 0),
                                  struct.pack("=IHHII", 64, 16, 0, 0, 0)])
def test_a_truncated_message_is_a_netlink_error(data: bytes) -> None:
    with pytest.raises(NetlinkError, match="netlink"):
        list(netlink.messages(data))


def test_a_truncated_attribute_is_a_netlink_error() -> None:
    body = struct.pack("=BxHiII", 0, 1, 1, 0, 0) + struct.pack("=HH", 40, netlink.IFLA_IFNAME)
    with pytest.raises(NetlinkError, match="route attribute of 40 bytes"):
        netlink.parse_link(body)


def test_a_namespace_name_is_never_a_path() -> None:
    for name in ("../x", "", ".."):
        with pytest.raises(NetlinkError, match="not a namespace name"):
            netlink.links(name)


@pytest.mark.skipif(not hasattr(socket, "AF_NETLINK"), reason="netlink is Linux's")
def test_the_hosts_own_links_are_read_without_root() -> None:
    found = netlink.links(None)
    assert found["lo"].ifindex == 1 and found["lo"].stats is not None
    assert "127.0.0.1" in netlink.addresses(None, "lo")
    assert set(found) == set(os.listdir("/sys/class/net"))   # the host's view of its links
    for name, link in found.items():
        sysfs = Path("/sys/class/net") / name
        assert link.ifindex == int((sysfs / "ifindex").read_text())
        assert link.operstate == (sysfs / "operstate").read_text().strip().upper()


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.binary(max_size=256))
def test_any_bytes_parse_or_are_a_netlink_error(data: bytes) -> None:
    for parse in (lambda: list(netlink.messages(data)), lambda: netlink.parse_link(data),
                  lambda: netlink.parse_address(data)):
        with contextlib.suppress(NetlinkError):
            parse()
