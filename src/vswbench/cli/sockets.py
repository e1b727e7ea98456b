"""`vswbench stream | rr | crr`: what applications see through a testbed (measure/sockets.py):
TCP or UDP goodput, request/response latency and rate, connections per second, with the CPU
they cost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import SWITCH_FILE_OPTION
from vswbench.cli.common import complete_switch
from vswbench.cli.common import emit
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import say
from vswbench.cli.common import seconds
from vswbench.cli.common import writable_file
from vswbench.engine.sockapp import MAX_FLOWS
from vswbench.engine.sockapp import MAX_SIZE
from vswbench.engine.sockapp import SockParams
from vswbench.host.tuning import MTUS
from vswbench.host.tuning import OFFLOADS
from vswbench.measure.socket_result import SocketResult
from vswbench.units import parse_bitrate

DEFAULT_SIZE = {"stream": 16384, "rr": 64, "crr": 64}


def socket_options(mode: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        decorators = [
            SWITCH_FILE_OPTION,
            click.option("--switch", "switch", required=True,
                         help="Kernel backend (see `vswbench switches`).",
                         shell_complete=complete_switch),
            click.option("--scenario", default="rr", show_default=True,
                         help="rr, p2p-pair, pairs:N, remote[-vxlan][-rr]: a client and a "
                              "server namespace each side of the switch; pvp, chain:N: "
                              "network functions between them, each a kernel IP router in "
                              "its own namespace (no engine)."),
            *([click.option("--proto", type=click.Choice(("tcp", "udp")), default="tcp",
                            show_default=True)] if mode != "crr" else []),
            click.option("--flows", type=click.IntRange(1, MAX_FLOWS), default=1,
                         show_default=True, help="Parallel flows (connections) per client."),
            click.option("--size", "msg_size", type=click.IntRange(1, MAX_SIZE),
                         default=DEFAULT_SIZE[mode], show_default=True,
                         help="Bytes per write (stream) or per request and response."),
            *([click.option("--read-size", type=click.IntRange(1, MAX_SIZE), default=None,
                            help="TCP stream: the server's bytes per recv [1 MiB]; 131072 reads "
                                 "as iperf3 does."),
               click.option("--rate", "rate", default=None,
                            help="UDP stream: each client's payload rate in bits/s, e.g. 500M "
                                 "or 2G [as fast as its sockets take the datagrams].")]
              if mode == "stream" else []),
            click.option("--duration", type=seconds(), default=5.0, show_default=True),
            click.option("--mtu", type=click.Choice([str(m) for m in MTUS]), default="1500",
                         show_default=True, help="MTU of every link of the testbed."),
            click.option("--offloads", type=click.Choice(OFFLOADS), default="default",
                         show_default=True,
                         help="TSO, GSO and GRO on every link: as the switch left them, on, off."),
            click.option("--service", is_flag=True,
                         help="Reach the server through a virtual IP that nftables DNAT "
                              "translates (a Kubernetes Service)."),
            click.option("--tester-cpu", type=int, default=None, help="CPU of the client [0]."),
            click.option("--switch-cpu", type=int, default=None,
                         help="CPU of the switch and the server [next]."),
            click.option("--option", "options", multiple=True, help="Backend option key=value."),
            click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
            click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
                         default=None, help="Also write the JSON result to this file."),
        ]
        for deco in reversed(decorators):
            func = deco(func)
        return func
    return wrap


def _run(mode: str, kw: dict[str, Any]) -> int:
    from vswbench.measure.plan import parse_options
    from vswbench.measure.sockets import SocketOptions
    from vswbench.measure.sockets import plan_sockets
    from vswbench.measure.sockets import run_sockets

    writable_file(kw.get("out_file"))
    rate = parse_bitrate(kw["rate"]) if kw.get("rate") is not None else None
    load = SockParams(mode, kw.get("proto", "tcp"), kw["flows"], kw["msg_size"], kw["duration"],
                      kw.get("read_size"), rate)
    plan = plan_sockets(SocketOptions(
        kw["switch"], kw["scenario"], load, int(kw["mtu"]), kw["offloads"], kw["service"],
        kw["tester_cpu"], kw["switch_cpu"], parse_options(tuple(kw["options"]))))
    data = run_sockets(plan, progress=say)
    emit(data, kw)
    if not kw["as_json"]:
        print_result(SocketResult.from_json(mode, data))
    return 0


def print_result(r: SocketResult) -> None:
    title = (f"{r.switch} / {r.scenario}: {r.kind} {r.proto}, "
             f"{r.flows} flow(s) x {r.pairs} pair(s), {r.msg_size} B, MTU "
             f"{r.mtu}, offloads {r.offloads}"
             + (f", the server reads {r.read_size:,} B per recv" if r.read_size else "")
             + (f", service VIP {r.service_vip}" if r.service else "")
             + (f", network functions: {r.nf}" if r.nf else ""))
    out.print(title, highlight=False)
    table = Table()
    rows = _stream_rows(r) if r.kind == "stream" else _transaction_rows(r)
    if r.kind == "crr":
        rows.append(("connections/s", num(r.connections_per_s)))
    if r.retransmits is not None:
        rows.append(("TCP retransmissions", f"{r.retransmits:,}"))
    for port, n in r.port_tx_drops.items():
        rows.append((f"frames dropped at {port} (tx)", f"{n:,}"))
    rows.append(("CPU busy (all cores)", f"{r.busy_cpu_s:.2f} s"))
    if r.kind == "stream":
        rows.append(("CPU per GB", f"{num(r.cpu_s_per_gb, 3)} s"))
        rows += [(f"  of it CPU {c}", f"{num(v.cpu_s_per_gb, 3)} s")
                 for c, v in r.cost_per_core.items()]
    else:
        rows.append(("cycles per transaction", num(r.cycles_per_transaction)))
        rows += [(f"  of it CPU {c}", num(v.cycles_per_transaction))
                 for c, v in r.cost_per_core.items()]
    table.add_column("metric")
    table.add_column("value", justify="right")
    for row in rows:
        table.add_row(*row)
    out.print(table)


def _stream_rows(r: SocketResult) -> list[tuple[str, str]]:
    rows = [("goodput", f"{num(r.goodput_gbps, 3)} Gbit/s")]
    if r.sent_gbps is not None:
        paced = (f" (paced at {r.rate_bps / 1e9:.3f} Gbit/s per client)" if r.rate_bps
                 else " (unpaced)")
        rows.append(("UDP sent", f"{num(r.sent_gbps, 3)} Gbit/s{paced}"))
    if r.udp_loss_ratio is not None:
        rows.append(("UDP loss", f"{r.udp_loss_ratio * 100:.3f} %"))
    if r.send_waits:
        rows.append(("sends a full socket buffer held up", f"{r.send_waits:,}"))
    return rows


def _transaction_rows(r: SocketResult) -> list[tuple[str, str]]:
    return [("transactions/s", num(r.transactions_per_s)),
            *((f"latency {k}", f"{num(getattr(r.latency, k), 1)} us")
              for k in ("p50", "p90", "p99", "p999"))]


@click.command()
@socket_options("stream")
def stream(**kw: Any) -> int:
    """TCP or UDP stream: goodput and its CPU cost (the project's socket client and server)."""
    return _run("stream", kw)


@click.command()
@socket_options("rr")
def rr(**kw: Any) -> int:
    """Request/response, one request outstanding per flow: transactions/s and latency."""
    return _run("rr", kw)


@click.command()
@socket_options("crr")
def crr(**kw: Any) -> int:
    """A TCP connection per transaction: connections/s and their latency."""
    return _run("crr", kw)
