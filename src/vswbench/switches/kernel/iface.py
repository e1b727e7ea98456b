"""One interface's knobs inside a namespace: /sys/class/net (read and written with `ip netns
exec`), ethtool features, the ifindex (over netlink)."""
from __future__ import annotations

import subprocess

from vswbench.errors import CommandError
from vswbench.host import netlink
from vswbench.host.netns import in_netns
from vswbench.host.netns import run_in


def read_sys(netns: str | None, relpath: str) -> str:
    """Read /sys/class/net/<relpath> as seen inside `netns` (ip netns exec remounts /sys)."""
    return run_in(netns, ["cat", f"/sys/class/net/{relpath}"]).strip()


def write_sys(netns: str | None, relpath: str, value: str) -> None:
    """Write /sys/class/net/<relpath> inside `netns`: tee with the value on stdin, no shell."""
    argv = in_netns(netns, ["tee", f"/sys/class/net/{relpath}"])
    proc = subprocess.run(argv, input=value, capture_output=True, text=True, timeout=10)
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stderr)


def ethtool_k(netns: str | None, ifname: str, **features: bool) -> None:
    args = [x for k, on in features.items() for x in (k, "on" if on else "off")]
    run_in(netns, ["ethtool", "-K", ifname, *args])


def ifindex(netns: str | None, ifname: str) -> int:
    return netlink.link(netns, ifname).ifindex
