"""Run ids and the names derived from them.

Every kernel object a run creates is named `<run id><suffix>`, and every run id starts with `vsb`,
so `vswbench clean` can find a killed run's leftovers and touch nothing else. A run id is `vsb` plus
4 hex digits (7 characters), which leaves 8 characters for suffixes of interface names (IFNAMSIZ is
16 including the terminating NUL).
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

PREFIX = "vsb"
IFNAME_MAX = 15
_RUN_ID_RE = re.compile(r"^vsb[0-9a-f]{4}\Z")
_SUFFIX_RE = re.compile(r"^[A-Za-z0-9_.-]*\Z")

# The roles a run gives its objects: what follows the run id in the name of a namespace, an
# interface, a DPDK file prefix or a vhost port. Collected from every caller of RunId.name/ifname
# (tests/unit/test_run_roles.py checks that each name those callers make is one of these);
# `vswbench clean` removes a vsb name only if it is a run id and exactly one of these roles.
_N = r"[0-9]{1,3}"
_HOST_ABBR = rf"(?:t|c|v|s{_N}|r{_N}|n{_N})"           # testbed/build.py host_abbr
ROLE_PATTERNS: dict[str, str] = {
    "host namespaces (scenario.py hosts, testbed/build.py)":
        rf"tester|client|server|s{_N}|r{_N}|nf{_N}",
    "the switch namespace (testbed/build.py)": "sw",
    "site namespaces and switches (scenario.SITES, testbed/sites.py)": rf"h{_N}",
    "the sink namespace (switches/ovs.py)": "sink",
    "host ports (testbed/build.py plan_ports)": rf"{_HOST_ABBR}p{_N}|h{_N}",
    "kernel switch veth ends (switches/kernel.py)": rf"sw{_N}",
    "bridges (switches/bridge.py, nf_ovs.py)": rf"br|br{_N}",
    "macvlan ports (switches/macvlan.py, cni/others.py)": "mvp|mvq",
    "CNI masters and moved devices (switches/cni/others.py)": rf"vm{_N}|vq{_N}|hd{_N}",
    "CNI networks' names (switches/cni/switch.py, others.py)": rf"cni|cni{_N}",
    "ovs ports (switches/ovs.py)": rf"o{_N}|oc{_N}|ok{_N}|vx",
    "the wire between sites (testbed/sites.py)": rf"w{_N}|x{_N}",
    "the demo's namespace pair (host/pair.py)": "a|b|a0|b0",
    "DPDK file prefixes and vhost ports (testpmd.py, ovs_dpdk.py, build.py)":
        rf"tp|ovs|vhu{_N}|e{_HOST_ABBR}",
    "the service path's nftables table (host/tuning.py, measure/sockets.py)": "svc",
    "a VM's taps (testbed/vm.py; the test names its host by a digit)":
        rf"(?:{_HOST_ABBR}|{_N})t{_N}",
}
_ROLE_RE = "|".join(f"(?:{pattern})" for pattern in ROLE_PATTERNS.values())
RUN_NAME_RE = re.compile(rf"^(vsb[0-9a-f]{{4}})({_ROLE_RE})\Z")


@dataclass(frozen=True)
class RunId:
    value: str

    def __post_init__(self) -> None:
        if not _RUN_ID_RE.match(self.value):
            raise ValueError(f"not a run id (vsb + 4 hex digits): {self.value!r}")

    def __str__(self) -> str:
        return self.value

    def name(self, suffix: str) -> str:
        """A namespace or other object name: run id + suffix."""
        if not _SUFFIX_RE.match(suffix):
            raise ValueError(f"bad name suffix {suffix!r}")
        return self.value + suffix

    def ifname(self, suffix: str) -> str:
        """An interface name: run id + suffix, at most 15 characters."""
        name = self.name(suffix)
        if len(name) > IFNAME_MAX:
            raise ValueError(f"interface name {name!r} is longer than {IFNAME_MAX} characters")
        return name


def _taken(candidate: str) -> bool:
    netns_dir = Path("/run/netns")
    if netns_dir.is_dir() and any(p.name.startswith(candidate) for p in netns_dir.iterdir()):
        return True
    from vswbench.run.state import state_dir  # local import: run/state.py imports this

    return (state_dir() / f"{candidate}.json").exists()


def new_run_id() -> RunId:
    """A fresh run id not used by any namespace or run state on this host."""
    for _ in range(64):
        candidate = PREFIX + secrets.token_hex(2)
        if not _taken(candidate):
            return RunId(candidate)
    # Extremely unlikely: fall back to pid-derived digits.
    return RunId(PREFIX + f"{os.getpid() & 0xFFFF:04x}")


def is_project_name(name: str) -> bool:
    """Does this name start with the project's prefix? (A name a run makes is is_run_name.)"""
    return name.startswith(PREFIX)


def run_name_parts(name: str) -> tuple[str, str] | None:
    """(run id, role) of a name made exactly as a run makes it (run id + one of ROLE_PATTERNS,
    nothing after), else None: `vsbcafebabe` and `vsbbeefeth0` are not a run's names."""
    match = RUN_NAME_RE.match(name)
    return (match.group(1), match.group(2)) if match else None


def is_run_name(name: str) -> bool:
    return run_name_parts(name) is not None
