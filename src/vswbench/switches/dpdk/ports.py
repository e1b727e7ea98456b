"""DPDK ports between the engine and a switch: vhost-user and memif, as vdev strings.

A DPDK switch hands every host port a pair of virtual devices joined by a UNIX socket in the run's
temporary directory: the switch's side (net_vhost / dpdkvhostuser, or a memif server) and the
engine's side (virtio_user, or a memif client). The engine opens its side with `--io dpdk --port
VDEV`; the switch opens the other. MAC addresses are set in the vdev strings, so the testbed knows
them before any process starts.

Every DPDK process gets `--no-pci`, `--no-huge` (memfd memory: vhost-user can map it, and no
hugepage is ever reserved) and a file prefix `vsb<run id>...`; DPDK leaves /var/run/dpdk/PREFIX
behind when it exits, so whoever starts a process removes that directory after it (and `vswbench
clean` removes those of a killed run).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.run.ids import RunId
from vswbench.switches.base import Availability

TRANSPORTS = ("vhost", "memif")
RUNTIME_ROOT = Path("/var/run/dpdk")
# virtio_user ring size: 1024 (DPDK's default 256 overflows in a 0.3 ms hiccup at 1 Mpps)
VIRTIO_RING = 1024
DPDK_FIX = "apt-get install dpdk-dev, then rebuild the engine (./setup.sh)"
# thread names (comm prefixes) of a DPDK process's EAL and vhost threads
DPDK_THREADS = ("lcore-worker", "rte_", "eal-intr", "vhost", "dpdk-")
DPDK_PORT_HELP = {"dpdk_port": "DPDK switches: the engine's port type"}


@dataclass(frozen=True)
class DpdkLink:
    """One host port's link to a DPDK switch."""

    key: str            # HostPort.key
    index: int          # port number on the switch (attach order)
    socket: str         # the UNIX socket joining both sides
    mac: str            # the engine side's MAC
    transport: str      # "vhost" or "memif"

    @property
    def engine_vdev(self) -> str:
        """The engine's side: virtio_user (client of the switch's vhost-user server) or a memif
        client."""
        if self.transport == "vhost":
            return (f"virtio_user{self.index},path={self.socket},queues=1,queue_size={VIRTIO_RING},"
                    f"mac={self.mac}")
        return (f"net_memif{self.index},role=client,id=0,socket={self.socket},"
                f"socket-abstract=no,mac={self.mac}")

    def switch_vdev(self, name_index: int | None = None) -> str:
        """The switch's side as a DPDK vdev (testpmd): net_vhost server or memif server."""
        n = self.index if name_index is None else name_index
        if self.transport == "vhost":
            return f"net_vhost{n},iface={self.socket},queues=1"
        return f"net_memif{n},role=server,id=0,socket={self.socket},socket-abstract=no"


def port_mac(index: int, run_id: RunId) -> str:
    """A locally administered unicast MAC: 02:76:73 ('vs') + two bytes of the run id + index."""
    digits = "".join(c for c in str(run_id) if c in "0123456789abcdef")[-4:].rjust(4, "0")
    return f"02:76:73:{digits[:2]}:{digits[2:]}:{index & 0xff:02x}"


def parse_transport(options: Mapping[str, str], default: str) -> str:
    from vswbench.errors import UsageError

    value = options.get("dpdk_port", default)
    if value not in TRANSPORTS:
        raise UsageError(f"--option dpdk_port={value}: choose from {', '.join(TRANSPORTS)}")
    return value


def engine_dpdk() -> tuple[bool, str]:
    """Was the engine built with its DPDK backend? (from `vswbench-engine probe`): (True, the
    DPDK version) or (False, why not)."""
    from vswbench.engine.probe import probe
    from vswbench.errors import VswbenchError

    try:
        found = probe(timeout=20)
    except VswbenchError as exc:  # no engine: find_engine says why and how; a failed probe
        return False, str(exc)
    except OSError as exc:
        return False, f"cannot probe the engine: {exc}"
    dpdk: dict[str, Any] = next((b for b in found.raw.get("backends") or []
                                 if isinstance(b, dict) and b.get("name") == "dpdk"), {})
    if not dpdk.get("compiled"):
        return False, "the engine was built without its DPDK backend (no libdpdk at build time)"
    if not dpdk.get("usable"):
        return False, f"the engine's DPDK backend cannot run here: {dpdk.get('reason')}"
    return True, str(dpdk.get("dpdk_version") or "")


def dpdk_availability(binary: str, binary_fix: str) -> Availability:
    """A DPDK switch runs when its own binary exists and the engine speaks DPDK."""
    if shutil.which(binary) is None and not Path(binary).is_file():
        return Availability(False, f"{binary} not found", binary_fix)
    ok, why = engine_dpdk()
    return Availability(True) if ok else Availability(False, why, DPDK_FIX)


def eal_common(prefix: str, memory_mb: int) -> list[str]:
    """EAL arguments every DPDK process of the project gets."""
    return ["--no-pci", "--no-telemetry", "--no-huge", "-m", str(memory_mb),
            "--file-prefix", prefix]


def remove_runtime_dir(prefix: str) -> None:
    """DPDK's runtime directory of one process (left behind on exit) and any hugepage file."""
    if not prefix.startswith("vsb") or "/" in prefix:
        return
    shutil.rmtree(RUNTIME_ROOT / prefix, ignore_errors=True)
    for mount in (Path("/dev/hugepages"), Path("/mnt/huge")):
        for path in mount.glob(f"{prefix}map_*") if mount.is_dir() else ():
            path.unlink(missing_ok=True)
