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
_RUN_ID_RE = re.compile(r"^vsb[0-9a-f]{4}$")
_SUFFIX_RE = re.compile(r"^[A-Za-z0-9_.-]*$")


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
    from vswbench.run.state import state_dir  # local import: runstate imports this module

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
    """Does this kernel object name belong to vswbench?"""
    return name.startswith(PREFIX)
