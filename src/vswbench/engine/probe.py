"""`vswbench-engine probe`: which I/O backends are compiled in and usable here, TSC facts.

The probe's JSON is kept whole (`raw`); `backends` is read tolerantly, accepting a list of objects
(`[{"name": "afxdp", "usable": true, "reason": ...}]`), a mapping of name to object or to bool, or
a plain list of names.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from vswbench.engine.process import EngineError
from vswbench.engine.process import find_engine

USABLE_KEYS = ("usable", "available", "ok", "supported")
REASON_KEYS = ("reason", "why", "error", "msg")
DEMO_BACKENDS = ("afpacket", "udp", "afxdp")


@dataclass(frozen=True)
class BackendInfo:
    name: str
    usable: bool
    reason: str | None
    max_frame: int | None = None   # the largest frame it carries, bytes with FCS (None: not said)


@dataclass(frozen=True)
class ProbeResult:
    raw: dict[str, Any]
    backends: tuple[BackendInfo, ...]
    tsc_hz: float | None
    tsc_invariant: bool | None
    text: str = field(default="", repr=False, compare=False)  # the engine's output, unchanged

    def usable(self) -> list[str]:
        return [b.name for b in self.backends if b.usable]

    def backend(self, name: str) -> BackendInfo | None:
        return next((b for b in self.backends if b.name == name), None)


def _backend_from_obj(name: str, obj: Any) -> BackendInfo:
    if isinstance(obj, bool):
        return BackendInfo(name, obj, None)
    if not isinstance(obj, dict):
        return BackendInfo(name, bool(obj), None)
    usable = next((bool(obj[k]) for k in USABLE_KEYS if k in obj), True)
    reason = next((str(obj[k]) for k in REASON_KEYS if obj.get(k)), None)
    limit = obj.get("max_frame")
    max_frame = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    return BackendInfo(name, usable, reason, max_frame)


def parse_backends(raw: dict[str, Any]) -> tuple[BackendInfo, ...]:
    value = raw.get("backends", raw.get("io", []))
    usable_list = raw.get("usable")
    result: list[BackendInfo] = []
    if isinstance(value, dict):
        result = [_backend_from_obj(name, obj) for name, obj in value.items()]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                ok = item in usable_list if isinstance(usable_list, list) else True
                result.append(BackendInfo(item, ok, None))
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                result.append(_backend_from_obj(item["name"], item))
    return tuple(result)


def _tsc(raw: dict[str, Any]) -> tuple[float | None, bool | None]:
    tsc = raw.get("tsc")
    if isinstance(tsc, dict):
        hz = tsc.get("hz", tsc.get("freq_hz", tsc.get("frequency_hz")))
        inv = tsc.get("invariant")
    else:
        hz = raw.get("tsc_hz", tsc if isinstance(tsc, (int, float)) else None)
        inv = raw.get("tsc_invariant")
    return (float(hz) if isinstance(hz, (int, float)) else None,
            bool(inv) if isinstance(inv, bool) else None)


def parse_probe(text: str) -> ProbeResult:
    """Parse the probe's stdout: one JSON object (possibly one JSON line among others)."""
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.strip()]
    for candidate in candidates:
        try:
            raw = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(raw, dict):
            hz, invariant = _tsc(raw)
            return ProbeResult(raw, parse_backends(raw), hz, invariant, text)
    raise EngineError(f"the engine's probe output is not a JSON object: {text[:200]!r}")


# the engine's answers, one per engine binary: what the kernel and the engine support does not
# change under a process, and a probe takes 0.2 s (it loads XDP programs in namespaces of its
# own); a `vswbench trial` asked it up to four times (the tester's io, xdp's native mode, DPDK,
# the TSC), the integration matrix once per case
_ANSWERS: dict[str, ProbeResult] = {}


def probe(engine: Path | str | None = None, timeout: float = 30.0) -> ProbeResult:
    """The engine's probe, run once per process and engine binary (a failed one is not kept)."""
    binary = str(engine or find_engine())
    if binary not in _ANSWERS:
        _ANSWERS[binary] = _run_probe(binary, timeout)
    return _ANSWERS[binary]


def _run_probe(binary: str, timeout: float) -> ProbeResult:
    argv = [binary, "probe"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise EngineError(f"probe did not finish within {timeout:g} s", argv=argv) from exc
    except OSError as exc:
        raise EngineError(f"cannot run {argv[0]}: {exc}", argv=argv) from exc
    if proc.returncode != 0:
        raise EngineError("probe failed", argv=argv, returncode=proc.returncode, stderr=proc.stderr)
    return parse_probe(proc.stdout)
