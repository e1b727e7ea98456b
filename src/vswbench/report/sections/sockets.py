"""The "What applications see" section: per switch, TCP goodput, request/response p50/p99 and
connections per second with their CPU cost, beside the switch's frame NDR (report/sockets.py)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from matplotlib.figure import Figure

from vswbench.measure.socket_result import SocketResult
from vswbench.report.figure import Colours
from vswbench.report.figure import Plot
from vswbench.report.figure import new_figure
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Figures
from vswbench.report.sections.base import Section
from vswbench.report.sections.base import empty_note
from vswbench.report.sections.base import figure_html
from vswbench.report.sections.base import table
from vswbench.report.sockets import SocketRow
from vswbench.report.sockets import every_point
from vswbench.report.sockets import socket_rows
from vswbench.report.sockets import verdict_lines

INTRO = ("What an application in a container gets through each switch: the project's socket "
         "client and server (vswbench-sockapp, pinned, epoll) in the client and server "
         "namespaces, through the switch's kernel path. Goodput is what TCP acknowledged "
         "(UDP: what the server received); rr keeps one request outstanding per flow and "
         "records each round trip; crr opens, uses and closes a TCP connection per "
         "transaction. CPU is every core's busy time (/proc/stat, softirq included) as the "
         "frame trials account it: seconds per GB moved, cycles per transaction. One run per "
         "point on this machine: the differences are not tested for noise.")


def _n(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def goodput_plot(rows: Sequence[SocketRow], colours: Colours) -> Figure | None:
    got = [(r.switch, r.stream.goodput_gbps) for r in rows
           if r.stream is not None and r.stream.goodput_gbps is not None]
    if not got:
        return None
    fig, (ax,) = new_figure()
    names = [g[0] for g in got]
    ax.barh(names, [g[1] for g in got], color=[colours(n) for n in names])
    ax.set_xlabel("TCP goodput, one flow of 16384 B writes (Gbit/s)")
    ax.set_title("What applications see: TCP goodput per switch")
    ax.invert_yaxis()
    return fig


def _row(r: SocketRow) -> list[str]:
    def lat(s: SocketResult | None, k: str) -> str:
        return "–" if s is None else _n(getattr(s.latency, k), 1)
    ndr = "–" if r.ndr_pps is None else f"{r.ndr_pps / 1e6:,.3f} ({r.ndr_size} B)"
    return [escape(r.switch), escape(r.scenario),
            _n(r.stream.goodput_gbps if r.stream else None, 2),
            _n(r.stream.retransmits if r.stream and r.stream.retransmits is not None else None),
            _n(r.stream.cpu_s_per_gb if r.stream else None, 2),
            _n(r.rr.transactions_per_s if r.rr else None), lat(r.rr, "p50"), lat(r.rr, "p99"),
            _n(r.rr.cycles_per_transaction if r.rr else None),
            _n(r.crr.connections_per_s if r.crr else None),
            _n(r.crr.cycles_per_transaction if r.crr else None), ndr]


class Sockets(Section):
    id = "sockets"
    title = "What applications see: TCP streams, request/response and connection rates"

    def empty(self, model: ReportModel) -> str:
        return "no socket points (kinds stream, rr, crr) in this campaign"

    def figures(self, model: ReportModel, colours: Colours) -> Figures:
        yield ("sockets-goodput", "TCP goodput per switch",
               goodput_plot(socket_rows(model.data), colours))

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        points = every_point(model.data)
        if not points:
            return empty_note(self.empty(model))
        rows = socket_rows(model.data)
        html = f"<p>{INTRO}</p>" + "".join(figure_html(p) for p in plots)
        verdicts = verdict_lines(rows)
        if verdicts:
            html += "<ul>" + "".join(f"<li>{escape(v)}</li>" for v in verdicts) + "</ul>"
        if rows:
            html += table(["switch", "scenario", "goodput Gbit/s", "retransmissions",
                           "CPU s per GB", "rr transactions/s", "rr p50 us", "rr p99 us",
                           "rr cycles/transaction", "crr connections/s",
                           "crr cycles/transaction", "frame NDR Mpps"],
                          [_row(r) for r in rows], set(range(2, 12)))
        html += "<h3>Every socket point</h3>" + table(
            ["point", "Gbit/s", "transactions/s", "connections/s", "p50 us", "p99 us",
             "p99.9 us", "retransmissions", "CPU s per GB", "cycles/transaction"],
            [[escape(label + (f" (network functions: {s.nf})" if s.nf else "")),
              _n(s.goodput_gbps, 2), _n(s.transactions_per_s),
              _n(s.connections_per_s), _n(s.latency.p50, 1),
              _n(s.latency.p99, 1), _n(s.latency.p999, 1),
              _n(s.retransmits), _n(s.cpu_s_per_gb, 2), _n(s.cycles_per_transaction)]
             for label, s in points], set(range(1, 10)))
        return html


SECTION = Sockets()
