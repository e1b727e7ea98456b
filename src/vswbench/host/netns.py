"""Network namespaces and veth pairs, driven by `ip` with argv lists.

`Namespace` and `VethPair` are context managers that register their removal in a CleanupRegistry,
so they are removed however the run ends. Kernel state is awaited by polling (`wait_until`), never by
sleeping a guessed time.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vswbench.errors import CommandError
from vswbench.errors import VswbenchError
from vswbench.host import netlink
from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import Registration


class TimeoutWaiting(VswbenchError):
    pass


def run(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> str:
    """Run a command (argv list, never a shell); return stdout. CommandError when it fails."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise CommandError(list(argv), proc.returncode, proc.stderr)
    return proc.stdout


def ip_argv(*args: str, netns: str | None = None) -> list[str]:
    return ["ip", *(["-n", netns] if netns else []), *args]


def ip(*args: str, netns: str | None = None, check: bool = True) -> str:
    return run(ip_argv(*args, netns=netns), check=check)


def ip_json(*args: str, netns: str | None = None) -> list[dict[str, Any]]:
    out = run(["ip", "-j", *(["-n", netns] if netns else []), *args])
    return json.loads(out) if out.strip() else []


def in_netns(netns: str | None, argv: Sequence[str]) -> list[str]:
    """argv that runs a command inside a namespace (unchanged when netns is None)."""
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


def run_in(netns: str | None, argv: Sequence[str], *, check: bool = True,
           timeout: float = 30.0) -> str:
    return run(in_netns(netns, argv), check=check, timeout=timeout)


def sysctl(netns: str | None, **settings: str | int) -> None:
    """Set sysctls inside a namespace; keys use dots or double underscores for dots."""
    pairs = [f"{key.replace('__', '.')}={value}" for key, value in settings.items()]
    run_in(netns, ["sysctl", "-q", "-w", *pairs])


def wait_until(predicate: Callable[[], bool], *, timeout: float, what: str,
               interval: float = 0.005) -> None:
    """Poll `predicate` until true; TimeoutWaiting naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutWaiting(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
        interval = min(interval * 2, 0.1)


def list_namespaces() -> list[str]:
    """The namespaces `ip netns list` lists: the entries of its run directory."""
    try:
        return sorted(os.listdir(netlink.NETNS_DIR))
    except FileNotFoundError:
        return []


def namespace_exists(name: str) -> bool:
    return name in list_namespaces()


def namespace_pids(name: str) -> list[int]:
    out = run(["ip", "netns", "pids", name], check=False)
    return [int(tok) for tok in out.split() if tok.isdigit()]


class Namespace:
    """`ip netns add NAME` on enter (loopback up, IPv6 off so no stray frames), deleted on exit."""

    def __init__(self, name: str, registry: CleanupRegistry, *, ipv6: bool = False) -> None:
        self.name = name
        self.registry = registry
        self.ipv6 = ipv6
        self._reg: Registration | None = None

    def __enter__(self) -> Namespace:
        run(["ip", "netns", "add", self.name])
        self._reg = self.registry.register(f"namespace {self.name}", self.delete)
        # a new interface's IGMP reports (a snooping bridge's join) leave within 1 ms, not up to a
        # second later inside a trial, where the kernel counts them and no engine sees them
        quiet: dict[str, str | int] = {
            "net.ipv4.conf.default.igmpv3_unsolicited_report_interval": 1,
            "net.ipv4.conf.default.igmpv2_unsolicited_report_interval": 1}
        if not self.ipv6:
            quiet |= {"net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1}
        sysctl(self.name, **quiet)
        ip("link", "set", "lo", "up", netns=self.name)
        return self

    def delete(self) -> None:
        if namespace_exists(self.name):
            run(["ip", "netns", "delete", self.name])

    def __exit__(self, *exc: object) -> None:
        if self._reg is not None:
            self._reg.release()
            self._reg = None


class VethPair:
    """A veth pair with end `name_a` in namespace `ns_a` and end `name_b` in `ns_b`."""

    def __init__(self, name_a: str, ns_a: str | None, name_b: str, ns_b: str | None,
                 registry: CleanupRegistry) -> None:
        self.name_a, self.ns_a, self.name_b, self.ns_b = name_a, ns_a, name_b, ns_b
        self.registry = registry
        self._reg: Registration | None = None

    def __enter__(self) -> VethPair:
        argv = ["link", "add", self.name_a, *(["netns", self.ns_a] if self.ns_a else []),
                "type", "veth", "peer", "name", self.name_b,
                *(["netns", self.ns_b] if self.ns_b else [])]
        ip(*argv)
        self._reg = self.registry.register(f"veth {self.name_a}/{self.name_b}", self.delete)
        return self

    def delete(self) -> None:
        # Deleting one end removes both; the namespace may already be gone (and the pair with it).
        if self.ns_a is None or namespace_exists(self.ns_a):
            ip("link", "del", self.name_a, netns=self.ns_a, check=False)

    def up(self) -> None:
        set_up(self.ns_a, self.name_a)
        set_up(self.ns_b, self.name_b)
        wait_link_up(self.ns_a, self.name_a)
        wait_link_up(self.ns_b, self.name_b)

    def __exit__(self, *exc: object) -> None:
        if self._reg is not None:
            self._reg.release()
            self._reg = None


def set_up(netns: str | None, ifname: str) -> None:
    ip("link", "set", "dev", ifname, "up", netns=netns)


BENCHMARK_NET = ipaddress.ip_network("198.18.0.0/15")  # RFC 2544: the only addresses we use


def check_benchmark_address(cidr: str) -> None:
    """The network rule: addresses only from 198.18.0.0/15."""
    if ipaddress.ip_interface(cidr).ip not in BENCHMARK_NET:
        raise VswbenchError(
            f"address {cidr} is outside {BENCHMARK_NET}, the only range vswbench uses")


def add_address(netns: str | None, ifname: str, cidr: str) -> None:
    check_benchmark_address(cidr)
    ip("addr", "add", cidr, "dev", ifname, netns=netns)
    address = cidr.split("/")[0]
    wait_until(lambda: address in addresses(netns, ifname), timeout=5,
               what=f"address {cidr} on {ifname}")


def addresses(netns: str | None, ifname: str) -> list[str]:
    return netlink.addresses(netns, ifname)


def mac_address(netns: str | None, ifname: str) -> str:
    return netlink.link(netns, ifname).address


def is_up(netns: str | None, ifname: str) -> bool:
    return netlink.link(netns, ifname).operstate == "UP"


def wait_link_up(netns: str | None, ifname: str, timeout: float = 5.0) -> None:
    wait_until(lambda: is_up(netns, ifname), timeout=timeout, what=f"{ifname} to come up")


def set_neighbour(netns: str | None, ifname: str, address: str, mac: str) -> None:
    """A permanent neighbour entry, so no ARP frames mix with the measured ones."""
    ip("neigh", "replace", address, "lladdr", mac, "dev", ifname, "nud", "permanent", netns=netns)


def set_offload(netns: str | None, ifname: str, **features: bool) -> None:
    """ethtool -K, e.g. set_offload(ns, if, tx=False) to turn TX checksum offload off."""
    args = [item for key, on in features.items() for item in (key, "on" if on else "off")]
    run_in(netns, ["ethtool", "-K", ifname, *args])


@dataclass(frozen=True)
class LinkCounters:
    rx_packets: int
    tx_packets: int
    rx_bytes: int
    tx_bytes: int
    rx_dropped: int
    tx_dropped: int

    def __sub__(self, other: LinkCounters) -> LinkCounters:
        return LinkCounters(*(a - b for a, b in zip(self._values(), other._values(), strict=True)))

    def _values(self) -> tuple[int, ...]:
        return (self.rx_packets, self.tx_packets, self.rx_bytes, self.tx_bytes,
                self.rx_dropped, self.tx_dropped)

    @classmethod
    def of(cls, link: netlink.LinkState) -> LinkCounters:
        s = link.stats
        if s is None:
            raise VswbenchError(f"the kernel gave no counters for {link.ifname}")
        return cls(s.rx_packets, s.tx_packets, s.rx_bytes, s.tx_bytes, s.rx_dropped,
                   s.tx_dropped)


def link_counters(netns: str | None, ifname: str) -> LinkCounters:
    return LinkCounters.of(netlink.link(netns, ifname))
