"""What a kernel backend needs and runs on: root, its tools (with the package that ships each),
the kernel's CONFIG_ options (/proc/config.gz), and the versions recorded with a result."""
from __future__ import annotations

import gzip
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path


def kernel_config(option: str, config: Path = Path("/proc/config.gz")) -> str | None:
    """'y', 'm', 'n' for CONFIG_<option>, or None when the kernel does not publish its config."""
    try:
        text = gzip.decompress(config.read_bytes()).decode(errors="replace")
    except OSError:
        return None
    return parse_kernel_config(text, option)


def parse_kernel_config(text: str, option: str) -> str:
    name = option if option.startswith("CONFIG_") else f"CONFIG_{option}"
    for line in text.splitlines():
        if line.startswith(name + "="):
            return line.split("=", 1)[1].strip()
        if line.strip() == f"# {name} is not set":
            return "n"
    return "n"


def missing_kernel_options(options: Iterable[str]) -> list[str]:
    """Options known to be absent (an unpublished config counts as present: we cannot tell)."""
    return [opt for opt in options if kernel_config(opt) not in (None, "y", "m")]


def missing_tools(tools: Iterable[str]) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def basic_availability(tools: Mapping[str, str], options: Iterable[str]) -> tuple[str, str] | None:
    """(reason, fix) when root, a tool (tool -> its package) or a kernel option is missing; None
    when all is there."""
    if os.geteuid() != 0:
        return ("needs root (creates network namespaces and links)", "run as root")
    tools_missing = missing_tools(tools)
    if tools_missing:
        pkgs = sorted({tools[t] for t in tools_missing})
        return (f"{', '.join(tools_missing)} not found", f"apt-get install {' '.join(pkgs)}")
    opts = missing_kernel_options(options)
    if opts:
        names = ", ".join(f"CONFIG_{o}" for o in opts)
        return (f"kernel {platform.release()} lacks {names}", f"use a kernel built with {names}")
    return None


# the tools every veth-port backend runs (a backend's `tools`: tool -> its package)
KERNEL_TOOLS = {"ip": "iproute2", "ethtool": "ethtool", "taskset": "util-linux"}
TC = {"tc": "iproute2"}


def tool_version(argv: list[str], pattern: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    m = re.search(pattern, proc.stdout + proc.stderr)
    return m.group(1) if m else "unknown"


def kernel_versions(clang: bool = False) -> dict[str, str]:
    out = {"kernel": platform.release(),
           "iproute2": tool_version(["ip", "-V"], r"iproute2-([\w.]+)")}
    if clang:
        out["clang"] = tool_version(["clang", "--version"], r"clang version ([\w.]+)")
    return out
