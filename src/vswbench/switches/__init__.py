"""Switch backends: name -> class. Each backend module defines one Switch subclass."""
from __future__ import annotations

from vswbench.switches.base import Switch

REGISTRY: dict[str, type[Switch]] = {}


def register(cls: type[Switch]) -> type[Switch]:
    REGISTRY[cls.name] = cls
    return cls


BACKEND_MODULES = ("veth", "bridge", "router", "macvlan", "ovs", "tcbpf", "xdp", "shaped", "memif",
                   "testpmd", "ovs_dpdk")


def _load() -> None:
    # Imported for their @register side effect (one module per backend; ovs.py holds ovs and ovs-afxdp).
    import importlib

    for mod in BACKEND_MODULES:
        importlib.import_module(f"vswbench.switches.{mod}")


def all_switches() -> dict[str, type[Switch]]:
    # Always load every module: importing one backend directly registers only that one.
    _load()
    return dict(REGISTRY)
