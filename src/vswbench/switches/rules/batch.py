"""Installing rule text in one transaction and timing it: `nft -f FILE` (one nftables
transaction), `ip -batch FILE` (one netlink socket, a message per route), `ovs-ofctl --bundle
add-flows` (one OpenFlow bundle). The text is written to the run's private temp dir first, so the
time is the tool's and the kernel's (or the daemon's), not Python's."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from vswbench.host.netns import run_in


def timed_file(netns: str | None, argv: Sequence[str], text: str, temp_dir: str,
               name: str, timeout: float = 300.0) -> float:
    """Write `text` to a file in temp_dir (the run's private directory; else a vsb- file in the
    system's), run `argv + [file]` in `netns`, remove the file; seconds the command took."""
    with tempfile.NamedTemporaryFile("w", prefix=f"vsb-{name}-", dir=temp_dir or None,
                                     delete=False) as f:
        f.write(text)
        path = Path(f.name)
    try:
        start = time.perf_counter()
        run_in(netns, [*argv, str(path)], timeout=timeout)
        return time.perf_counter() - start
    finally:
        path.unlink(missing_ok=True)


def nft_file(netns: str, text: str, temp_dir: str, name: str = "rules.nft") -> float:
    return timed_file(netns, ["nft", "-f"], text, temp_dir, name)


def ip_batch(netns: str, text: str, temp_dir: str, name: str = "routes.batch") -> float:
    return timed_file(netns, ["ip", "-batch"], text, temp_dir, name)
