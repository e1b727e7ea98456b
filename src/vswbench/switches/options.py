"""The backend options (`--option key=value`, a campaign study's `options` table): every key
that some part of vswbench reads, and what it sets. Each value is checked by its reader (the
switch backend, or chain_nf for the chain keys); here only the key: a key nothing reads would be
ignored, and a misspelt `kernal_mode=softirq` would silently measure the default instead.
tests/unit/test_backend_options.py checks that every key the sources read is listed here."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from vswbench.errors import UsageError

KNOWN: dict[str, str] = {
    "nf": "how a chain's network functions forward: fwd, router, ovs, ovs-afxdp (switch veth)",
    "nf_poll": "how fwd network functions wait for frames: auto, busy, sleep",
    "kernel_mode": "kernel switches: where the links' receive work runs: napi, softirq",
    "napi_priority": "kernel switches, kernel_mode napi: the napi threads' scheduling: fifo, normal",
    "bridge_fdb": "bridge: static or learning forwarding database",
    "ovs_mode": "OVS backends: p2p (port-to-port rules) or normal (MAC learning)",
    "flow_table": "OVS backends: port (a rule per path) or exact (a rule per flow)",
    "clones": "OVS backends: output ports per frame (1 = no copy)",
    "dpdk_port": "DPDK switches: the engine's port type",
    "shape_pps": "shaped: the shaper's rate in packets/s",
    "shape_frame_size": "shaped: the frame size the shaper's byte rate is computed for",
    "function": "what the switch does per frame: l2, l3, nat, acl (switches/functions.py)",
    "table_size": "functions l3 and acl: prefixes or filter rules in the table",
}


def unknown_key(key: str) -> str | None:
    """Why `key` is not an option (the closest known key and the list), or None."""
    if key in KNOWN:
        return None
    close = difflib.get_close_matches(key, KNOWN, n=1)
    return (f"no backend reads option {key!r}" + (f" (did you mean {close[0]}?)" if close else "")
            + "; the options are " + ", ".join(KNOWN))


def check_keys(keys: Iterable[str]) -> None:
    """UsageError for the first unknown key of --option, with what each option sets."""
    for key in keys:
        problem = unknown_key(key)
        if problem:
            raise UsageError(f"--option {key}: {problem}. "
                             + "; ".join(f"{k}: {v}" for k, v in KNOWN.items()))


__all__ = ["KNOWN", "check_keys", "unknown_key"]
