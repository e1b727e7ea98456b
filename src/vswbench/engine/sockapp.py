"""vswbench-sockapp seen from Python: where the binary is, its command lines, its JSON records.

The socket client/server of the project (engine/src/sockapp/, built beside the engine): TCP or
UDP stream, request/response with one request outstanding per flow (rr), one TCP connection per
transaction (crr); epoll, pinned to one CPU, N parallel flows. The client prints one `result`
record (goodput from TCP_INFO's bytes acked, retransmissions, transactions/s and their latency
histogram, connections/s); the server prints `ready` once it listens, and its `result` (what it
received) when it gets SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine
from vswbench.engine.records import LatencySummary
from vswbench.engine.records import parse_latency
from vswbench.units import MAX_BITRATE
from vswbench.units import MIN_BITRATE

SOCKAPP_NAME = "vswbench-sockapp"
CHECKOUT = Path(__file__).resolve().parents[3]   # src/vswbench/engine/sockapp.py
MODES = ("stream", "rr", "crr")
PROTOS = ("tcp", "udp")
MAX_FLOWS = 256
MAX_SIZE = 1 << 20
UDP_MAX = 65507
BASE_PORT = 18000
EMPTY_LATENCY = LatencySummary(None, None, None, None, None, None, None, None, None, 0)


def find_sockapp(env: Mapping[str, str] | None = None) -> Path:
    """$VSWBENCH_SOCKAPP, else the repo's engine/build, else beside the engine binary (its
    link resolved), else $PATH."""
    env = os.environ if env is None else env
    override = env.get("VSWBENCH_SOCKAPP")
    if override:
        if not (Path(override).is_file() and os.access(override, os.X_OK)):
            raise EngineNotFound(f"VSWBENCH_SOCKAPP={override} is not an executable file")
        return Path(override)
    candidates = [CHECKOUT / "engine" / "build" / SOCKAPP_NAME]
    with contextlib.suppress(EngineNotFound):
        candidates.append(find_engine(env).resolve().parent / SOCKAPP_NAME)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    on_path = shutil.which(SOCKAPP_NAME, path=env.get("PATH", os.defpath))
    if on_path:
        return Path(on_path)
    raise EngineNotFound(f"{SOCKAPP_NAME} not found (beside the engine, $PATH): run ./setup.sh "
                         "or make -C engine to build it")


@dataclass(frozen=True)
class SockParams:
    """One socket measurement's load: what the client does, how many flows, how big, how long."""
    mode: str = "stream"        # stream | rr | crr
    proto: str = "tcp"          # tcp | udp
    flows: int = 1
    size: int = 16384           # bytes per write (stream) or per request and response
    duration: float = 5.0
    read_size: int | None = None   # TCP stream: the server's bytes per recv (None: 1 MiB)
    rate_bps: float | None = None  # UDP stream: each client's payload bits/s (None: unpaced)

    def problems(self) -> list[str]:
        return self._kind_problems() + self._range_problems() + self._option_problems()

    def _kind_problems(self) -> list[str]:
        """Mode and protocol: known, and a pair the client can run."""
        out = []
        if self.mode not in MODES:
            out.append(f"mode {self.mode!r}: expected one of {', '.join(MODES)}")
        if self.proto not in PROTOS:
            out.append(f"proto {self.proto!r}: expected tcp or udp")
        if self.mode == "crr" and self.proto != "tcp":
            out.append("crr opens a TCP connection per transaction: use proto tcp")
        return out

    def _range_problems(self) -> list[str]:
        """Flows, size and duration within their bounds."""
        out = []
        if not 1 <= self.flows <= MAX_FLOWS:
            out.append(f"flows {self.flows}: expected 1..{MAX_FLOWS}")
        if not 1 <= self.size <= (UDP_MAX if self.proto == "udp" else MAX_SIZE):
            out.append(f"size {self.size}: expected 1..{UDP_MAX if self.proto == 'udp' else MAX_SIZE}"
                       " bytes")
        if not 0.1 <= self.duration <= 86400:
            out.append(f"duration {self.duration:g}: expected 0.1..86400 s")
        return out

    def _option_problems(self) -> list[str]:
        """The read size and the rate: within their bounds, and given where they apply."""
        out = []
        if self.read_size is not None and not 1 <= self.read_size <= MAX_SIZE:
            out.append(f"read size {self.read_size}: expected 1..{MAX_SIZE} bytes")
        if self.read_size is not None and (self.mode, self.proto) != ("stream", "tcp"):
            out.append("read size: the server's bytes per recv are set for TCP streams only")
        if self.rate_bps is not None and (self.mode, self.proto) != ("stream", "udp"):
            out.append("rate: the client paces UDP streams only (TCP paces itself)")
        if self.rate_bps is not None and not MIN_BITRATE <= self.rate_bps <= MAX_BITRATE:
            out.append(f"rate {self.rate_bps:g}: expected {MIN_BITRATE:g}..{MAX_BITRATE:g} bits/s")
        return out

    def common_args(self, addr: str, port: int, cpu: int | None) -> list[str]:
        args = ["--mode", self.mode, "--proto", self.proto, "--addr", addr, "--port", str(port),
                "--flows", str(self.flows), "--size", str(self.size)]
        return args + (["--cpu", str(cpu)] if cpu is not None else [])

    def server_args(self, addr: str, port: int = BASE_PORT, cpu: int | None = None) -> list[str]:
        read = ["--read-size", str(self.read_size)] if self.read_size is not None else []
        return ["server", *self.common_args(addr, port, cpu), *read]

    def client_args(self, addr: str, port: int = BASE_PORT, cpu: int | None = None) -> list[str]:
        rate = ["--rate", str(round(self.rate_bps))] if self.rate_bps is not None else []
        return ["client", *self.common_args(addr, port, cpu), "--duration", f"{self.duration:g}",
                *rate, "--hist"]


@dataclass(frozen=True)
class ClientResult:
    """A client's `result` record."""
    duration_s: float
    bytes_sent: int
    bytes_acked: int
    goodput_gbps: float
    retransmits: int
    transactions: int
    transactions_per_s: float
    timeouts: int
    connections: int
    connections_per_s: float
    connect_errors: int
    cpu_s: float
    latency: LatencySummary
    histogram: list[list[int]]
    raw: dict[str, Any]


@dataclass(frozen=True)
class ServerResult:
    duration_s: float
    bytes_received: int
    datagrams_received: int
    replies: int
    accepted: int
    cpu_s: float
    raw: dict[str, Any]


def parse_client(data: Mapping[str, Any]) -> ClientResult:
    summary = parse_latency(data.get("latency_us")) or EMPTY_LATENCY
    return ClientResult(float(data["duration_s"]), int(data["bytes_sent"]),
                        int(data["bytes_acked"]), float(data["goodput_gbps"]),
                        int(data["retransmits"]), int(data["transactions"]),
                        float(data["transactions_per_s"]), int(data["timeouts"]),
                        int(data["connections"]), float(data["connections_per_s"]),
                        int(data["connect_errors"]), float(data["cpu_s"]), summary,
                        [[int(x) for x in b] for b in data.get("hist", [])], dict(data))


def parse_server(data: Mapping[str, Any]) -> ServerResult:
    return ServerResult(float(data["duration_s"]), int(data["bytes_received"]),
                        int(data["datagrams_received"]), int(data["replies"]),
                        int(data["accepted"]), float(data["cpu_s"]), dict(data))
