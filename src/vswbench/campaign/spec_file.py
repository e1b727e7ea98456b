"""Reading a campaign spec's text, bounded: a spec is read only if it is a regular file of at most
MAX_SPEC_BYTES, so that `vswbench run /dev/zero`, /dev/urandom or a FIFO (as the spec or inside a
spec directory) is refused at once instead of filling memory or waiting for a writer for ever.

The file is read by saferead (the one reader of every input file: looked at with stat, opened
without blocking, looked at again through the descriptor, read up to one byte past the limit); its
TOML is then parsed with a bounded nesting depth
(MAX_SPEC_DEPTH), the value lists' lengths are what campaign/spec.py counts points from."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.saferead import read_text

MAX_SPEC_BYTES = 1_000_000       # the largest spec here is a few KB; a megabyte is a mistake
MAX_SPEC_DEPTH = 8               # the spec > [[study]] > a study > options = [ > { is 5 deep


def read_spec_text(path: Path, fix: str) -> str:
    """The text of the spec file `path`; UsageError naming the problem and `fix` (what to give
    instead) for anything but a readable regular UTF-8 file of at most MAX_SPEC_BYTES
    (saferead: the one bounded reader of every input file)."""
    return read_text(path, "campaign spec", cap=MAX_SPEC_BYTES, fix=fix)


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The TOML of a spec as Python data; UsageError for a syntax error, a number Python cannot
    hold, or nesting deeper than MAX_SPEC_DEPTH (tomllib recurses per level: 100,000 levels
    would end in a RecursionError)."""
    if len(text) > MAX_SPEC_BYTES:
        raise UsageError(f"campaign spec {source}: larger than {MAX_SPEC_BYTES:,} characters: "
                         "split it into several specs")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"campaign spec {source}: TOML syntax error: {e}") from None
    except RecursionError:
        raise _too_deep(source) from None
    except ValueError as e:         # e.g. an integer of more than 4,300 digits
        raise UsageError(f"campaign spec {source}: a value TOML cannot hold: "
                         f"{str(e).split(';')[0][:120]}") from None
    if depth(data) > MAX_SPEC_DEPTH:
        raise _too_deep(source)
    return data


def _too_deep(source: str) -> UsageError:
    return UsageError(f"campaign spec {source}: tables and lists nested more than "
                      f"{MAX_SPEC_DEPTH} deep: a spec's values are numbers, texts, lists of them "
                      "and option tables")


def depth(data: Any) -> int:
    """How deep lists and tables nest in `data` (a scalar: 0), without recursion."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        value, level = todo.pop()
        children = (value.values() if isinstance(value, dict) else
                    value if isinstance(value, list) else None)
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_SPEC_DEPTH:
            todo += [(child, level + 1) for child in children]
    return deepest
