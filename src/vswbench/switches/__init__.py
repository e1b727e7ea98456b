"""Switch backends: name -> class. Each backend module defines one Switch subclass."""
from __future__ import annotations

from vswbench.switches.base import Switch

REGISTRY: dict[str, type[Switch]] = {}


def register(cls: type[Switch]) -> type[Switch]:
    REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    # Imported for their @register side effect; a missing module is a bug, not a missing tool.
    from vswbench.switches import kernel, ovs  # noqa: F401


def all_switches() -> dict[str, type[Switch]]:
    if not REGISTRY:
        _load()
    return dict(REGISTRY)
