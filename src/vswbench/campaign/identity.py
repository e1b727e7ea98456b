"""Which campaign a results store holds: a store is one campaign's, measured with one spec.

Resuming (the same spec into the same --out) is the normal case. Running another campaign into
a store that holds one, or the same campaign name with a changed spec, would mix points measured
under different specs in one report without a word; that is refused (UsageError, exit 2, before
anything is measured), naming the difference, unless the user says so (`vswbench run --append`).

Two spec texts are the same campaign when their TOML says the same (comments, spacing and key
order do not count).
"""

from __future__ import annotations

import tomllib
from typing import Any

from vswbench.errors import UsageError
from vswbench.results.store import ResultStore

APPEND_HINT = "add --append to add to it anyway"


def check_campaign(store: ResultStore, name: str, text: str, *, append: bool = False) -> None:
    """UsageError unless `store` is empty or holds campaign `name` measured with this spec
    (the latest run of that name); `append` accepts either."""
    if append:
        return
    runs = store.runs()
    if not runs:
        return
    mine = [r for r in runs if r.spec_name == name]
    if not mine:
        others = ", ".join(sorted({r.spec_name for r in runs}))
        raise UsageError(f"{store.path.parent} holds campaign {others}, not {name}: give "
                         f"campaign {name} its own --out directory, or {APPEND_HINT}")
    last = mine[-1]
    difference = spec_difference(last.spec_text, text)
    if difference is not None:
        raise UsageError(f"the spec of campaign {name} changed since run {last.run_id} in "
                         f"{store.path.parent} ({difference}): give the changed spec a new "
                         f"--out directory (or a new name), or {APPEND_HINT}")


def spec_difference(old_text: str, new_text: str) -> str | None:
    """The first difference between two spec texts in words, e.g. `study 1: sizes [64] is
    now [64, 128]`; None when they say the same."""
    if old_text == new_text:
        return None
    try:
        old, new = tomllib.loads(old_text), tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        return "its text differs"
    return _first_difference(old, new, "")


def _first_difference(old: Any, new: Any, where: str) -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        return _first_key_difference(old, new, where)
    tables = (isinstance(old, list) and isinstance(new, list)
              and all(isinstance(x, dict) for x in old + new))
    if tables and len(old) != len(new):
        return f"[[{where}]]: {len(old)} table{'s' if len(old) != 1 else ''}, now {len(new)}"
    if tables:
        for i, (a, b) in enumerate(zip(old, new)):
            found = _first_difference(a, b, f"{where}[{i + 1}]")
            if found is not None:
                return found
        return None
    if old != new:
        return f"{_name(where)} {_short(old)} is now {_short(new)}"
    return None


def _first_key_difference(old: dict[str, Any], new: dict[str, Any], where: str) -> str | None:
    """A table's first key removed, added or changed, in the old table's order, then the new
    keys."""
    for key in [*old, *(k for k in new if k not in old)]:
        here = f"{where}.{key}" if where else str(key)
        if key not in new:
            return f"{_name(here)} was removed (it was {_short(old[key])})"
        if key not in old:
            return f"{_name(here)} was added ({_short(new[key])})"
        found = _first_difference(old[key], new[key], here)
        if found is not None:
            return found
    return None


def _name(path: str) -> str:
    """study[2].sizes -> study 2: sizes."""
    head, _, tail = path.partition("].")
    if "[" in head and tail:
        table, _, index = head.partition("[")
        return f"{table} {index}: {tail}"
    return path


def _short(value: Any, limit: int = 60) -> str:
    if isinstance(value, list) and all(isinstance(x, dict) for x in value):
        return f"{len(value)} table{'s' if len(value) != 1 else ''}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."

