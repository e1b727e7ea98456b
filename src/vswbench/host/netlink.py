"""Links and addresses read over rtnetlink, in this process: a read starts no `ip`.

Reading state is what a testbed build and a trial do most: a port's MAC, whether it is UP, its
addresses while an `ip addr add` lands, every port's counters before and after each phase. Each
was an `ip -j ... show` (2-5 ms: a fork, an exec, a JSON dump); a read over a netlink socket
takes 0.1 ms, 0.4 ms in another namespace (measured: 200 dumps each). Writes stay with `ip`,
whose argv is what the records show.

A NETLINK_ROUTE socket answers for the network namespace it was created in. `_route_socket`
creates it inside the namespace from a short-lived thread that enters it (setns(2) moves the
calling thread only), so the process never changes namespace. No socket is kept: one held open
would keep a deleted namespace, and every link in it, alive.

`parse_link` and `parse_address` read the kernel's bytes with bounds checked at every step;
anything malformed is a NetlinkError (tests/unit/test_netlink.py fuzzes them).
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from vswbench.errors import VswbenchError

NETNS_DIR = "/run/netns"   # where `ip netns add` binds a namespace (NETNS_RUN_DIR)
CLONE_NEWNET = 0x40000000

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTM_NEWLINK, RTM_GETLINK, RTM_NEWADDR, RTM_GETADDR = 16, 18, 20, 22
IFLA_ADDRESS, IFLA_IFNAME, IFLA_OPERSTATE, IFLA_STATS64 = 1, 3, 16, 23
IFA_ADDRESS, IFA_LOCAL = 1, 2

_NLMSG = struct.Struct("=IHHII")       # len, type, flags, seq, pid
_IFINFO = struct.Struct("=BxHiII")     # family, type, index, flags, change
_IFADDR = struct.Struct("=BBBBI")      # family, prefixlen, flags, scope, index
_RTATTR = struct.Struct("=HH")         # len, type
_STATS64_HEAD = struct.Struct("=8Q")   # rx/tx packets, rx/tx bytes, rx/tx errors, rx/tx dropped
# IF_OPER_* as `ip` names them
OPERSTATES = ("UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN", "TESTING", "DORMANT", "UP")


class NetlinkError(VswbenchError):
    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code   # the errno of the kernel's NLMSG_ERROR, 0 for a parse error


@dataclass(frozen=True)
class LinkStats:
    """The head of struct rtnl_link_stats64, in its order."""
    rx_packets: int
    tx_packets: int
    rx_bytes: int
    tx_bytes: int
    rx_errors: int
    tx_errors: int
    rx_dropped: int
    tx_dropped: int


@dataclass(frozen=True)
class LinkState:
    """One link as RTM_NEWLINK describes it: what `ip -j -s link show` gave the reads here."""
    ifname: str
    ifindex: int
    operstate: str
    address: str           # the MAC, lower case with colons ("" for a link without one)
    stats: LinkStats | None


@dataclass(frozen=True)
class Address:
    ifindex: int
    family: int
    local: str


# -- parsing -----------------------------------------------------------------------------------
def _align(n: int) -> int:
    return (n + 3) & ~3


def messages(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(type, payload) of each netlink message in one datagram."""
    offset = 0
    while offset < len(data):
        if len(data) - offset < _NLMSG.size:
            raise NetlinkError(f"a truncated netlink header at byte {offset}")
        length, kind, _flags, _seq, _pid = _NLMSG.unpack_from(data, offset)
        if length < _NLMSG.size or offset + length > len(data):
            raise NetlinkError(f"a netlink message of {length} bytes at byte {offset} of "
                               f"{len(data)}")
        yield kind, data[offset + _NLMSG.size:offset + length]
        offset += _align(length)


def attributes(data: bytes, offset: int) -> dict[int, bytes]:
    """The route attributes from `offset` on, by type (the last of a repeated type)."""
    attrs: dict[int, bytes] = {}
    while offset + _RTATTR.size <= len(data):
        length, kind = _RTATTR.unpack_from(data, offset)
        if length < _RTATTR.size or offset + length > len(data):
            raise NetlinkError(f"a route attribute of {length} bytes at byte {offset} of "
                               f"{len(data)}")
        attrs[kind & 0x3FFF] = data[offset + _RTATTR.size:offset + length]  # less NLA_F_*
        offset += _align(length)
    return attrs


def _attr(kind: int, value: bytes) -> bytes:
    length = _RTATTR.size + len(value)
    return _RTATTR.pack(length, kind) + value + b"\0" * (-length % 4)


def _text(value: bytes) -> str:
    return value.split(b"\0", 1)[0].decode(errors="replace")


def parse_link(payload: bytes) -> LinkState:
    if len(payload) < _IFINFO.size:
        raise NetlinkError(f"an RTM_NEWLINK of {len(payload)} bytes")
    _family, _type, index, _flags, _change = _IFINFO.unpack_from(payload)
    attrs = attributes(payload, _IFINFO.size)
    oper = attrs.get(IFLA_OPERSTATE, b"\0")
    raw = attrs.get(IFLA_STATS64)
    stats = (LinkStats(*_STATS64_HEAD.unpack_from(raw))
             if raw is not None and len(raw) >= _STATS64_HEAD.size else None)
    return LinkState(_text(attrs.get(IFLA_IFNAME, b"")), index,
                     OPERSTATES[oper[0]] if oper and oper[0] < len(OPERSTATES) else "UNKNOWN",
                     ":".join(f"{b:02x}" for b in attrs.get(IFLA_ADDRESS, b"")), stats)


def parse_address(payload: bytes) -> Address | None:
    if len(payload) < _IFADDR.size:
        raise NetlinkError(f"an RTM_NEWADDR of {len(payload)} bytes")
    family, _plen, _flags, _scope, index = _IFADDR.unpack_from(payload)
    attrs = attributes(payload, _IFADDR.size)
    raw = attrs.get(IFA_LOCAL, attrs.get(IFA_ADDRESS))
    sizes = {socket.AF_INET: 4, socket.AF_INET6: 16}
    if raw is None or family not in sizes or len(raw) != sizes[family]:
        return None
    return Address(index, family, socket.inet_ntop(family, raw))


# -- the socket --------------------------------------------------------------------------------
_LIBC = ctypes.CDLL(None, use_errno=True)   # this process's libc, for setns(2)


def _setns(fd: int) -> None:
    if _LIBC.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _route_socket(netns: str | None) -> socket.socket:
    """A NETLINK_ROUTE socket of `netns` (None: this process's own)."""
    if netns is None:
        return socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    if "/" in netns or netns in ("", ".", ".."):
        raise NetlinkError(f"{netns!r} is not a namespace name")
    made: list[socket.socket | BaseException] = []

    def inside() -> None:
        try:
            with open(f"{NETNS_DIR}/{netns}", "rb") as target, \
                    open("/proc/thread-self/ns/net", "rb") as home:
                _setns(target.fileno())
                try:
                    made.append(socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                              socket.NETLINK_ROUTE))
                finally:
                    _setns(home.fileno())
        except BaseException as exc:   # handed to the caller's thread
            made.append(exc)

    thread = threading.Thread(target=inside, name=f"vsb-netns-{netns}")
    thread.start()
    thread.join()
    result = made[0]
    if isinstance(result, FileNotFoundError):
        raise NetlinkError(f"no namespace {netns}")
    if isinstance(result, BaseException):
        raise NetlinkError(f"cannot open a netlink socket in namespace {netns}: {result}")
    return result


def _ask(netns: str | None, request: int, body: bytes, reply: int, *,
         dump: bool = True) -> list[bytes]:
    """The payloads of the `reply` messages to one request: a dump's, or a get's one."""
    flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else 0)
    with _route_socket(netns) as sock:
        sock.bind((0, 0))
        sock.send(_NLMSG.pack(_NLMSG.size + len(body), request, flags, 1, 0) + body)
        payloads: list[bytes] = []
        while True:
            for kind, payload in messages(sock.recv(1 << 16)):
                if kind == NLMSG_DONE:
                    return payloads
                if kind == NLMSG_ERROR:
                    code = -struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else 0
                    raise NetlinkError(f"netlink request {request} in {netns or 'the host'}: "
                                       f"{errno.errorcode.get(code, code)}", code)
                if kind == reply:
                    payloads.append(payload)
                    if not dump:
                        return payloads


def links(netns: str | None) -> dict[str, LinkState]:
    """Every link of `netns` by name, with its counters."""
    found = (parse_link(p) for p in _ask(netns, RTM_GETLINK, _IFINFO.pack(0, 0, 0, 0, 0),
                                         RTM_NEWLINK))
    return {link.ifname: link for link in found}


def link(netns: str | None, ifname: str) -> LinkState:
    """One link, asked for by name, as `ip link show dev` asks. A get, not a dump: a get sees a
    link's new state at once, where a dump showed a veth whose peer had just come up as down
    for up to a second (linkwatch applies such changes in batches; measured on 6.18, a router
    testbed's build took 2.2 s with dumps and 0.2 s with gets)."""
    body = _IFINFO.pack(0, 0, 0, 0, 0) + _attr(IFLA_IFNAME, ifname.encode() + b"\0")
    try:
        (payload,) = _ask(netns, RTM_GETLINK, body, RTM_NEWLINK, dump=False)
    except NetlinkError as exc:
        if exc.code == errno.ENODEV:
            raise VswbenchError(f"no interface {ifname} in namespace {netns}") from None
        raise
    return parse_link(payload)


def addresses(netns: str | None, ifname: str) -> list[str]:
    """The addresses on `ifname` (IPv4 and IPv6), as `ip addr show` lists them."""
    index = link(netns, ifname).ifindex
    found = (parse_address(p) for p in _ask(netns, RTM_GETADDR, _IFADDR.pack(0, 0, 0, 0, 0),
                                            RTM_NEWADDR))
    return [a.local for a in found if a is not None and a.ifindex == index]
