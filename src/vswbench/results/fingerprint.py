"""A run's stored system fingerprint, typed: the host's `sysinfo.Fingerprint` (host/sysinfo.py,
the one definition of its fields, read back by `Fingerprint.from_json`), which keys the run
recorded, and what a store adds beside them: a merged store's name for the host
(results/merge.py, key `host`) and a two-host run's per-host fingerprints (campaign/remote.py,
key `hosts`). Readers above results/ read these attributes, never the stored dict's keys
(tests/unit/test_typed_reads.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields
from typing import Any

from vswbench.host.sysinfo import Fingerprint

HOST_KEY = "host"      # results/merge.py: the lab's name for the host a run measured on
HOSTS_KEY = "hosts"    # campaign/remote.py: {"tester NAME": {...}, "dut NAME": {...}}
FIELDS = frozenset(f.name for f in fields(Fingerprint))


@dataclass(frozen=True)
class RunFingerprint:
    """A stored fingerprint read into types; `to_json` gives the stored dict back."""
    host: Fingerprint                   # every field; those not recorded read as unknown
    recorded: tuple[str, ...]           # the stored keys, in stored order
    extra: Mapping[str, Any]            # keys Fingerprint does not define, as stored

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunFingerprint:
        return cls(Fingerprint.from_json(data), tuple(str(k) for k in data),
                   {str(k): v for k, v in data.items() if k not in FIELDS})

    def to_json(self) -> dict[str, Any]:
        """The fingerprint as it was stored (its keys in their stored order)."""
        return dict(self.items())

    def items(self) -> list[tuple[str, Any]]:
        """(key, value) of every stored item, in stored order: the typed field's value for the
        Fingerprint's fields, the stored value for the others."""
        return [(k, getattr(self.host, k) if k in FIELDS else self.extra[k])
                for k in self.recorded]

    def has(self, name: str) -> bool:
        """Whether the run recorded Fingerprint field `name` (an older version did not)."""
        return name in self.recorded

    @property
    def lab_name(self) -> str | None:
        """A merged store's name for the host (results/merge.py), None without one."""
        value = self.extra.get(HOST_KEY)
        return value if isinstance(value, str) and value else None

    @property
    def dut_names(self) -> tuple[str, ...]:
        """A two-host run's DUT names (its `hosts` keys "dut NAME"), in stored order."""
        hosts = self.extra.get(HOSTS_KEY)
        if not isinstance(hosts, dict):
            return ()
        return tuple(k.split(" ", 1)[1] for k in hosts if isinstance(k, str)
                     and k.startswith("dut "))
