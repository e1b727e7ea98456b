"""Typed reads of JSON values as stored: a value of the expected type, or None (or an empty
container) for anything else. Every reader of a stored record (measure/'s from_json, results/)
takes its numbers, counts, flags and texts through these, so "a bool is not a number" and "NaN is
no value" are decided once."""

from __future__ import annotations

import math
from typing import Any


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (missing, bool, text, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def count(value: Any) -> int | None:
    """An int (not a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
