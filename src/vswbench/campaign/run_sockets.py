"""The campaign runner's path for the socket kinds (stream, rr, crr: measure/sockets.py): a
point planned as `vswbench stream|rr|crr` plans it, and a group of points that share a testbed
(switch, scenario, placement, options, message size, flows, protocol, MTU, offloads, service)
measured on one socket testbed, one client run per point."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from vswbench.campaign.point import Point
from vswbench.engine.sockapp import SockParams
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.measure.sockets import SocketOptions
from vswbench.measure.sockets import SocketPlan
from vswbench.measure.sockets import plan_sockets
from vswbench.results.store import now


def socket_plan(p: Point, tester_cpu: int | None, switch_cpu: int | None) -> SocketPlan:
    if isinstance(p.size, str):
        raise UsageError(f"point {p.label}: a message size is bytes, not {p.size!r}")
    load = SockParams(p.kind, p.proto or "tcp", p.flows, p.size, p.duration or 5.0)
    return plan_sockets(SocketOptions(p.switch, p.scenario, load, p.mtu or 1500,
                                      p.offloads or "default", bool(p.service), tester_cpu,
                                      switch_cpu, dict(p.options)))


def run_socket_group(group: list[Point], plans: list[SocketPlan], run_id: Any
                     ) -> Iterator[tuple[Point, tuple[str, Any, str | None, str | None]]]:
    """Each point of a group on one socket testbed: (point, (status, result, error, started))."""
    from vswbench.measure.sockets import measure_once
    from vswbench.measure.sockets import socket_testbed

    with socket_testbed(plans[0], progress=lambda m: None, run_id=run_id) as bed:
        for p, plan in zip(group, plans, strict=True):
            started = now()
            try:
                result = measure_once(bed, replace(plans[0], load=plan.load),
                                      progress=lambda m: None)
                yield p, ("done", {**result, "point": p.params(), "label": p.label}, None,
                          started)
            except (UsageError, KeyboardInterrupt):
                raise
            except VswbenchError as exc:
                yield p, ("failed", None, str(exc), started)
