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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PREFIX = "vsb"
IFNAME_MAX = 15
_RUN_ID_RE = re.compile(r"^vsb[0-9a-f]{4}\Z")
_SUFFIX_RE = re.compile(r"^[A-Za-z0-9_.-]*\Z")

# The roles a run gives its objects: what follows the run id in the name of a namespace, an
# interface, a DPDK file prefix or a vhost port. The testbed's own roles are here; each switch
# backend declares the roles of its objects (Switch.link_roles), and switches/catalog.py joins
# both into the pattern `vswbench clean` matches (tests/unit/test_run_roles.py checks that each
# name the code makes is one of them); a vsb name is removed only if it is a run id and exactly
# one role.
NUM = r"[0-9]{1,3}"
HOST_ABBR = rf"(?:t|c|v|s{NUM}|r{NUM}|n{NUM})"          # testbed/plan.py host_abbr
RUN_ROLES: dict[str, str] = {
    rf"tester|client|server|s{NUM}|r{NUM}|nf{NUM}":
        "host namespaces (scenario.py hosts, testbed/plan.py)",
    "sw": "the switch namespace (testbed/plan.py)",
    rf"h{NUM}": "site namespaces and switches (scenario.SITES, testbed/sites.py)",
    rf"{HOST_ABBR}p{NUM}|h{NUM}": "host ports (testbed/plan.py plan_ports)",
    rf"w{NUM}|x{NUM}": "the wire between sites (testbed/sites.py)",
    "a|b|a0|b0": "the demo's namespace pair (host/pair.py)",
    rf"e{HOST_ABBR}": "the engines' DPDK file prefixes (testbed/plan.py)",
    "svc": "the service path's nftables table (host/tuning.py, measure/sockets.py)",
    rf"(?:{HOST_ABBR}|{NUM})t{NUM}":
        "a VM's taps (testbed/vm.py; the test names its host by a digit)",
}


def run_name_re(roles: Iterable[str]) -> re.Pattern[str]:
    """The names a run makes with these roles (regexes): a run id and exactly one role,
    nothing after; group 1 is the run id, group 2 the role."""
    alternatives = "|".join(f"(?:{pattern})" for pattern in dict.fromkeys(roles))
    return re.compile(rf"^(vsb[0-9a-f]{{4}})({alternatives})\Z")


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
    """Does this name start with the project's prefix? (Whether a run made it: switches/catalog.py
    is_run_name.)"""
    return name.startswith(PREFIX)

