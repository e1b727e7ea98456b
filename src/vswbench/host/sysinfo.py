"""The system fingerprint recorded with every run: what a reader needs to judge or reproduce a
number (RFC 8172 and RFC 8204 ask that every configuration item be recorded).

Everything is read, nothing is changed. Each reader takes the root of the file system (default
"/") so tests can point it at a fake /proc and /sys tree, and never raises: a file that is
missing or unreadable (a VM has no cpufreq, an old kernel no smt/active) reads as "n/a" for text
and None for numbers. `missing_tuning` turns the fingerprint into warnings for the report.
"""

from __future__ import annotations

import platform
import re
import subprocess
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import MISSING
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from pathlib import Path
from typing import Any

NA = "n/a"
Runner = Callable[[list[str]], str]   # argv -> stdout; raises on failure


@dataclass
class Fingerprint:
    kernel_release: str
    kernel_version: str
    cmdline: str
    cpu_model: str
    logical_cpus: int | None
    smt_active: str                      # "on", "off" or "n/a"
    governors: dict[str, str]            # "cpu0" -> "performance" / "n/a"
    turbo: str                           # "on", "off" or "n/a"
    thp_enabled: str                     # the selected value: "always", "madvise", "never"
    thp_defrag: str
    hugepages_total: int | None
    hugepages_free: int | None
    hugepage_size_kb: int | None
    isolated_cpus: str                   # cpulist, "" when none
    nohz_full: str                       # cpulist, "" when none
    irqbalance_running: bool | None      # None: /proc could not be read
    tsc_hz: float | None
    vswbench_version: str
    python_version: str
    machine: str
    offloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    switch_versions: dict[str, dict[str, str]] = field(default_factory=dict)
    hostname: str = NA
    virtualization: str = NA             # "none", "vm" or "vm (kvm)"; n/a: not known
    irq_time_accounting: str = NA        # CONFIG_IRQ_TIME_ACCOUNTING: "on", "off" or "unknown"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fingerprint:
        """The Fingerprint of its stored JSON (to_json's); fields an older version did not
        record read as unknown ("n/a" for text, None for numbers, empty for tables), keys it
        does not know are left out. Values are taken as stored."""
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in data:
                kwargs[f.name] = data[f.name]
            elif f.default is not MISSING:
                kwargs[f.name] = f.default
            elif f.default_factory is not MISSING:
                kwargs[f.name] = f.default_factory()
            elif str(f.type).startswith("dict"):
                kwargs[f.name] = {}
            else:
                kwargs[f.name] = NA if str(f.type) == "str" else None
        if not isinstance(kwargs["governors"], dict):
            kwargs["governors"] = {}
        return cls(**kwargs)


def _read(root: str | Path, rel: str) -> str | None:
    try:
        return (Path(root) / rel.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return None


def _text(root: str | Path, rel: str) -> str:
    value = _read(root, rel)
    return NA if value is None else value


# -- readers -----------------------------------------------------------------------------------
def kernel(root: str | Path = "/") -> tuple[str, str]:
    return _text(root, "proc/sys/kernel/osrelease"), _text(root, "proc/sys/kernel/version")


def cmdline(root: str | Path = "/") -> str:
    return _text(root, "proc/cmdline")


def cpu_model(root: str | Path = "/") -> str:
    info = _read(root, "proc/cpuinfo") or ""
    m = re.search(r"^(?:model name|Model|cpu model)\s*:\s*(.+)$", info, re.MULTILINE)
    return m.group(1).strip() if m else NA


def virtualization(root: str | Path = "/") -> str:
    """'vm' when the CPU says it runs under a hypervisor (the cpuinfo flag 'hypervisor'), with
    the hypervisor's name where DMI gives it ('vm (QEMU)'); 'none' on bare metal; n/a unread."""
    info = _read(root, "proc/cpuinfo")
    if info is None:
        return NA
    flags = re.search(r"^flags\s*:(.*)$", info, re.MULTILINE)
    if flags is None:
        return NA
    if "hypervisor" not in flags.group(1).split():
        return "none"
    vendor = _read(root, "sys/class/dmi/id/sys_vendor") or _read(root,
                                                                 "sys/class/dmi/id/product_name")
    return f"vm ({vendor})" if vendor else "vm"


def hostname(root: str | Path = "/") -> str:
    return _text(root, "proc/sys/kernel/hostname")


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]; '' or malformed -> []."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            return [] if part.strip() else cpus
        cpus += range(int(lo), int(hi if sep else lo) + 1)
    return cpus


def logical_cpus(root: str | Path = "/") -> int | None:
    online = parse_cpulist(_read(root, "sys/devices/system/cpu/online") or "")
    if online:
        return len(online)
    info = _read(root, "proc/cpuinfo")
    count = len(re.findall(r"^processor\s*:", info, re.MULTILINE)) if info else 0
    return count or None


def smt_active(root: str | Path = "/") -> str:
    return {"1": "on", "0": "off"}.get(_read(root, "sys/devices/system/cpu/smt/active") or "", NA)


def governors(root: str | Path = "/") -> dict[str, str]:
    base = Path(root) / "sys/devices/system/cpu"
    try:
        cpus = sorted((p.name for p in base.iterdir() if re.fullmatch(r"cpu\d+", p.name)),
                      key=lambda n: int(n[3:]))
    except OSError:
        return {}
    return {c: _text(root, f"sys/devices/system/cpu/{c}/cpufreq/scaling_governor") for c in cpus}


def turbo(root: str | Path = "/") -> str:
    """intel_pstate's no_turbo (1 = turbo off), else cpufreq's boost (1 = on)."""
    no_turbo = _read(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo in ("0", "1"):
        return "off" if no_turbo == "1" else "on"
    boost = _read(root, "sys/devices/system/cpu/cpufreq/boost")
    return {"1": "on", "0": "off"}.get(boost or "", NA)


def _selected(text: str | None) -> str:
    """'always [madvise] never' -> 'madvise'."""
    if text is None:
        return NA
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text


def thp(root: str | Path = "/") -> tuple[str, str]:
    base = "sys/kernel/mm/transparent_hugepage"
    return _selected(_read(root, f"{base}/enabled")), _selected(_read(root, f"{base}/defrag"))


def hugepages(root: str | Path = "/") -> tuple[int | None, int | None, int | None]:
    """(total, free, size in kB) of the default huge page size, from /proc/meminfo."""
    info = _read(root, "proc/meminfo") or ""

    def field_(name: str) -> int | None:
        m = re.search(rf"^{name}:\s*(\d+)", info, re.MULTILINE)
        return int(m.group(1)) if m else None
    return field_("HugePages_Total"), field_("HugePages_Free"), field_("Hugepagesize")


def isolated(root: str | Path = "/") -> tuple[str, str]:
    """(isolated cpulist, nohz_full cpulist); the kernel writes "(null)" for an empty nohz_full."""
    iso = _text(root, "sys/devices/system/cpu/isolated")
    nohz = _text(root, "sys/devices/system/cpu/nohz_full")
    return iso, "" if nohz == "(null)" else nohz


def irqbalance_running(root: str | Path = "/") -> bool | None:
    """A process whose comm is irqbalance (read only; nothing is signalled)."""
    try:
        pids = [p for p in (Path(root) / "proc").iterdir() if p.name.isdigit()]
    except OSError:
        return None
    return any(_read(root, f"proc/{p.name}/comm") == "irqbalance" for p in pids)


def _run(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    if proc.returncode != 0:
        detail = proc.stderr.strip() or proc.stdout.strip()
        raise RuntimeError(f"status {proc.returncode}: {detail}")
    return proc.stdout


def parse_ethtool_k(text: str) -> dict[str, str]:
    """`ethtool -k IF` lines like 'tx-checksumming: off [fixed]' -> {name: 'off [fixed]'}."""
    features = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(":")
        if sep and value.strip() and " " not in name:
            features[name] = value.strip()
    return features


def offloads(interfaces: dict[str, str], run: Runner = _run) -> dict[str, dict[str, Any]]:
    """Offload features of each interface (name -> namespace, "" for the host's). A failure is
    recorded as text beside the interface, never raised: a fingerprint must not stop a run."""
    out: dict[str, dict[str, Any]] = {}
    for ifname, netns in sorted(interfaces.items()):
        argv = ["ethtool", "-k", ifname]
        if netns:
            argv = ["ip", "netns", "exec", netns, *argv]
        try:
            out[ifname] = {"netns": netns, "features": parse_ethtool_k(run(argv)), "error": None}
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            out[ifname] = {"netns": netns, "features": {}, "error": f"`{' '.join(argv)}`: {e}"}
    return out


def fingerprint(interfaces: dict[str, str] | None = None, *, tsc_hz: float | None = None,
                switch_versions: dict[str, dict[str, str]] | None = None,
                root: str | Path = "/", run: Runner = _run) -> Fingerprint:
    from vswbench import __version__

    release, version = kernel(root)
    thp_enabled, thp_defrag = thp(root)
    total, free, size = hugepages(root)
    iso, nohz = isolated(root)
    return Fingerprint(release, version, cmdline(root), cpu_model(root), logical_cpus(root),
                       smt_active(root), governors(root), turbo(root), thp_enabled, thp_defrag,
                       total, free, size, iso, nohz, irqbalance_running(root), tsc_hz,
                       __version__, platform.python_version(), platform.machine(),
                       offloads(interfaces or {}, run), dict(switch_versions or {}),
                       hostname(root), virtualization(root), irq_time_accounting(root))


def kernel_config_option(name: str, root: str | Path = "/") -> str | None:
    """`y`, `m`, `n` (unset) of a kernel config option from /boot/config-$(uname -r) or
    /proc/config.gz; None when neither can be read."""
    import gzip

    release = _read(root, "proc/sys/kernel/osrelease") or platform.release()
    text = _read(root, f"boot/config-{release}")
    if text is None:
        try:
            text = gzip.decompress((Path(root) / "proc/config.gz").read_bytes()).decode(
                errors="replace")
        except (OSError, EOFError, ValueError):
            return None
    for line in text.splitlines():
        if line.startswith(f"{name}="):
            return line.split("=", 1)[1].strip()
        if line.strip() == f"# {name} is not set":
            return "n"
    return "n"


def irq_time_accounting(root: str | Path = "/") -> str:
    """Whether /proc/stat's irq and softirq times are measured (CONFIG_IRQ_TIME_ACCOUNTING=y:
    "on") or tick-sampled estimates ("off"); "unknown" without a readable kernel config."""
    value = kernel_config_option("CONFIG_IRQ_TIME_ACCOUNTING", root)
    return "unknown" if value is None else ("on" if value == "y" else "off")


def missing_tuning(fp: Fingerprint) -> list[str]:
    """Warnings for the report: settings that make numbers vary between runs or machines."""
    warnings = []
    slow = sorted({g for g in fp.governors.values() if g not in ("performance", NA)})
    if slow:
        cpus = [c for c, g in fp.governors.items() if g not in ("performance", NA)]
        warnings.append(f"governor is not performance ({', '.join(slow)} on {', '.join(cpus)}): "
                        "clock speed follows load; set it with `cpupower frequency-set -g "
                        "performance`")
    if fp.turbo == "on":
        warnings.append("turbo/boost is on: clock speed varies with temperature and load; turn "
                        "it off for repeatable numbers")
    if fp.isolated_cpus in ("", NA):
        warnings.append("no isolated cores: other tasks share the tester's and switch's cores; "
                        "boot with isolcpus= and nohz_full= for them")
    if fp.irqbalance_running:
        warnings.append("irqbalance running: it moves interrupts between cores during trials; "
                        "stop it (systemctl stop irqbalance)")
    if fp.thp_enabled == "always":
        warnings.append("THP always: transparent hugepage compaction adds latency spikes; set "
                        "/sys/kernel/mm/transparent_hugepage/enabled to madvise or never")
    if fp.irq_time_accounting == "off":
        warnings.append("IRQ time accounting is off (CONFIG_IRQ_TIME_ACCOUNTING unset): "
                        "/proc/stat's irq and softirq times, the basis of kernel switches' "
                        "cycles per packet, are tick-sampled estimates; cross-check with "
                        "--profile (perf sampling)")
    if fp.smt_active == "on":
        warnings.append("SMT is on: sibling threads share a core and disturb each other's "
                        "timing; turn it off or keep sibling threads idle")
    return warnings
