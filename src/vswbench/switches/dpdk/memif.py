"""`memif`: no switch at all, the DPDK baseline (what `veth` is for the kernel switches).

Each hop's two host ports are the two ends of one shared-memory packet interface (DPDK net_memif):
the side whose engine starts first (a network function, a receiver; else the sender) is the memif
server, the other its client, on a socket in the run's
temporary directory. In p2p both ends belong to the tester's one process. The tester's ceiling
on the DPDK switches is calibrated here, as the kernel switches' is on veth.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.base import link_pairs
from vswbench.switches.dpdk.ports import DPDK_FIX
from vswbench.switches.dpdk.ports import engine_dpdk
from vswbench.switches.dpdk.ports import port_mac


class Memif(Switch):
    name = "memif"
    idle_polls = True                   # DPDK's engines poll their memif rings
    description = "no switch: DPDK memif between the containers' engines (the DPDK baseline)"
    direct = True
    port_kind = "dpdk"
    ingress_ring_frames = 1024   # memif rsize 2^10, virtio_user queue_size 1024 (dpdk/ports.py)

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.socket_dir = Path(ctx.temp_dir or "/tmp") / "memif"
        self.links: list[tuple[str, str, str]] = []   # (server key, client key, socket)

    @classmethod
    def availability(cls) -> Availability:
        ok, reason = engine_dpdk()
        return Availability(True) if ok else Availability(False, reason, DPDK_FIX)

    @classmethod
    def versions(cls) -> dict[str, str]:
        ok, version = engine_dpdk()
        return {"engine dpdk": version} if ok and version else {}

    def setup(self) -> None:
        self.socket_dir.mkdir(parents=True, exist_ok=True)

    def attach(self, port: HostPort) -> Attachment:
        index = len(self.attachments)
        att = Attachment(port, None, host_mac=port_mac(index, self.ctx.run_id))
        self.attachments[port.key] = att
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        """One memif per hop, whichever direction comes first; a port joins one memif only."""
        for src, dst in link_pairs(paths, "memif"):
            index = len(self.links)
            sock = str(self.socket_dir / f"m{index}.sock")
            self.links.append((src, dst, sock))
            # The end that starts first listens: a memif client fails when no server is there.
            # Long-running engines (NFs, receivers) start before the drivers.
            first = self.ctx.long_running_hosts
            server, client = ((dst, src) if dst.split(".")[0] in first
                              and src.split(".")[0] not in first else (src, dst))
            for key, role in ((server, "server"), (client, "client")):
                att = self.attachments[key]
                n = list(self.attachments).index(key)
                att.dpdk_port = (f"net_memif{n},role={role},id=0,socket={sock},"
                                 f"socket-abstract=no,mac={att.host_mac}")

    def teardown(self) -> None:
        for _src, _dst, sock in self.links:
            with contextlib.suppress(OSError):
                os.unlink(sock)
        self.links.clear()

    def config_dump(self) -> str:
        return "\n".join(f"memif {s} (server) <-> {d} (client) via {sock}"
                         for s, d, sock in self.links)

    def port_counters(self) -> list[PortCounters]:
        return []  # no switch: the engines count every frame themselves

    def tester_cpu_free(self) -> bool:
        return True         # its poll loop on its own core; the tester's core runs the tester only

    def forwarding_mode(self) -> str:
        return "direct (memif, shared memory)"
