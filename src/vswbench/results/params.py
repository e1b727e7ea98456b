"""A stored point's parameters, typed, and the one table of variant knobs with their defaults.

A point's params are JSON as the campaign wrote them (execute.execute_point); `Params` reads them
for every reader above results/ (record.py holds what its result measured, points.py assembles
both into `PointRecord`s).

- `KNOBS`: the one table of variant knobs and their defaults (a Setup's variant names the knobs
  that differ from them; the exports' knob columns; a paper claim's selectors);
- `Params`: a point's parameters, typed, with its options as one Mapping[str, str];
- `number`, `count`, `flag`, `text`: a stored JSON value as one type, or None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from vswbench.jsonvalues import as_dict as _dict
from vswbench.jsonvalues import as_list as _list
from vswbench.jsonvalues import text


# -- the variant knobs -------------------------------------------------------------------------
@dataclass(frozen=True)
class Knob:
    """A workload knob a point may set; `default` is what a point that leaves it out measured.
    `column`: an export column of its own (options are spread into `k=v` instead)."""
    name: str
    default: Any
    column: bool = True
    same: tuple[Any, ...] = ()      # values that measured what the default measures

    def is_default(self, value: Any) -> bool:
        return value == self.default or value in self.same


# the one table: a Setup's variant names the knobs that differ from their default (preset: only
# of the kinds a preset drives, PRESET_KINDS); io "auto" is chosen per switch (each row names its
# tester, the result's io), so it is the default, as the CLI's --io is; points stored before
# "auto" existed name "afpacket", what auto chooses for a kernel switch: no variant either
KNOBS = (Knob("flows", 1), Knob("churn", None), Knob("burst", 1), Knob("placement", "default"),
         Knob("io", "auto", same=("afpacket",)), Knob("preset", "fast"), Knob("shape_pps", None),
         Knob("options", None, column=False), Knob("host", None))
KNOB_DEFAULTS: Mapping[str, Any] = {k.name: k.default for k in KNOBS}
PRESET_KINDS = ("search", "latency", "b2b")


@dataclass(frozen=True)
class Params:
    """A point's parameters as stored, typed. `options`: the backend options, one
    Mapping[str, str]. The generic accessors (`has`, `text`, `canonical`, ...) serve readers that
    select or group by a key named at run time (a paper claim's selectors, the error bars)."""
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def switch(self) -> str | None:
        return None if self.raw.get("switch") is None else str(self.raw["switch"])

    @property
    def scenario(self) -> str | None:
        return None if self.raw.get("scenario") is None else str(self.raw["scenario"])

    @property
    def size(self) -> Any:
        return self.raw.get("size")

    @property
    def rate(self) -> Any:
        """The stored rate as written (a number of pps, or None)."""
        return self.raw.get("rate")

    @property
    def flows(self) -> Any:
        return self.raw.get("flows", KNOB_DEFAULTS["flows"])

    @property
    def placement(self) -> str:
        return str(self.raw.get("placement", KNOB_DEFAULTS["placement"]))

    @property
    def preset(self) -> str | None:
        return text(self.raw.get("preset")) or (None if not self.raw.get("preset")
                                                 else str(self.raw["preset"]))

    @property
    def repetition(self) -> int:
        rep = self.raw.get("repetition", 0)
        return rep if isinstance(rep, int) and not isinstance(rep, bool) else 0

    @property
    def duration(self) -> Any:
        return self.raw.get("duration")

    @property
    def fractions(self) -> tuple[Any, ...]:
        return tuple(_list(self.raw.get("fractions")))

    @property
    def function(self) -> str | None:
        value = self.raw.get("function")
        return str(value) if value else None

    @property
    def options(self) -> Mapping[str, str]:
        """The backend options ("nf", "clones", "table_size", ...), each value as text."""
        return {str(k): str(v) for k, v in _dict(self.raw.get("options")).items()}

    def option(self, key: str, default: str | None = None) -> str | None:
        """One backend option as text (`default` when not set, or null)."""
        raw = _dict(self.raw.get("options")).get(key)
        return default if raw is None else str(raw)

    def option_int(self, key: str) -> int | None:
        raw = _dict(self.raw.get("options")).get(key)
        try:
            return int(raw) if raw is not None else None
        except (TypeError, ValueError):
            return None

    # generic: keys named at run time
    def keys(self) -> tuple[str, ...]:
        return tuple(self.raw)

    def has(self, key: str) -> bool:
        return key in self.raw

    def text(self, key: str, default: Any = None) -> str | None:
        """str() of the value of `key` (or of `default`); None when both are missing/None."""
        value = self.raw.get(key, default)
        return None if value is None else str(value)

    def knob_text(self, key: str) -> str | None:
        """text(key) with the knob's default (KNOBS) standing in for a missing knob."""
        return self.text(key, KNOB_DEFAULTS.get(key))

    def value(self, key: str, default: Any = None) -> Any:
        """The JSON value of `key` as stored (for laying it out: exports, labels)."""
        return self.raw.get(key, default)

    def json(self, key: str) -> str:
        """The value of `key` as canonical JSON text ("null" when missing)."""
        return json.dumps(self.raw.get(key), sort_keys=True, default=str)

    def pairs(self, without: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
        """(key, str(value)) of every parameter but `without`, sorted."""
        return tuple(sorted((k, str(v)) for k, v in self.raw.items() if k not in without))

    def canonical(self, without: tuple[str, ...] = ()) -> str:
        """Every parameter but `without` as canonical JSON text."""
        return json.dumps({k: v for k, v in self.raw.items() if k not in without},
                          sort_keys=True, default=str)

    def replaced(self, **changes: Any) -> Params:
        """These params with keys set (None: removed) - e.g. flows dropped to group a series."""
        raw = dict(self.raw)
        for k, v in changes.items():
            if v is None:
                raw.pop(k, None)
            else:
                raw[k] = v
        return Params(raw)

    def without_option(self, option: str) -> Params:
        if not isinstance(self.raw.get("options"), dict):
            return self
        raw = dict(self.raw)
        raw["options"] = {k: v for k, v in raw["options"].items() if k != option} or None
        return Params(raw)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.raw)
