"""The backend options (`--option key=value`, a campaign study's `options` table): every key
that some part of vswbench reads, and what it sets (a backend's own keys are its class's
options_read). Each value is checked by its reader (the
switch backend, or chain/nf.py for the chain keys); here only the key: a key nothing reads would be
ignored, and a misspelt `kernal_mode=softirq` would silently measure the default instead.
tests/unit/test_backend_options.py checks that every key the sources read is listed here."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from vswbench.errors import UsageError

# the keys every switch reads (the chain keys: chain/nf.py; the function keys: rules/functions.py)
CHAIN_KEYS = {
    "nf": "how a chain's network functions forward: fwd, router, ovs, ovs-afxdp (switch veth)",
    "nf_poll": "how fwd network functions wait for frames: auto, busy, sleep",
    "vm_accel": "pvp-vm, chain-vm:N: how the VMs run: tcg (emulated) or kvm (testbed/vm.py)",
}
FUNCTION_KEYS = {
    "function": "what the switch does per frame: l2, l3, nat, acl (switches/rules/functions.py)",
    "table_size": "functions l3 and acl: prefixes or filter rules in the table",
}


def known() -> dict[str, str]:
    """Every option key with what it sets: the chain keys, each backend's own (its class's
    options_read, catalog order), the function keys."""
    from vswbench.switches.catalog import BACKENDS

    found = dict(CHAIN_KEYS)
    for cls in BACKENDS:
        for key, text in cls.options_read.items():
            found.setdefault(key, text)
    return {**found, **FUNCTION_KEYS}


def unknown_key(key: str) -> str | None:
    """Why `key` is not an option (the closest known key and the list), or None."""
    options = known()
    if key in options:
        return None
    close = difflib.get_close_matches(key, options, n=1)
    return (f"no backend reads option {key!r}" + (f" (did you mean {close[0]}?)" if close else "")
            + "; the options are " + ", ".join(options))


def check_keys(keys: Iterable[str]) -> None:
    """UsageError for the first unknown key of --option, with what each option sets."""
    for key in keys:
        problem = unknown_key(key)
        if problem:
            raise UsageError(f"--option {key}: {problem}. "
                             + "; ".join(f"{k}: {v}" for k, v in known().items()))


__all__ = ["CHAIN_KEYS", "FUNCTION_KEYS", "check_keys", "known", "unknown_key"]
