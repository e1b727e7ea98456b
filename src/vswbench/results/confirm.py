"""Is a throughput headline confirmed by the trial that followed it?

The campaign measures latency at 90 % of the search's result in one longer trial (quick: 1 s
against the search's 0.25 s trials). That trial is the headline's confirmation: below the rate
the search found, the switch should lose nothing (the NDR goal's loss ratio is 0). Where it lost
frames and the stall monitor measured no host stall that explains the loss (measure/hoststall.py
classified the trial), the headline is "not confirmed": the verdict line says so beside it, with
the loss, never letting it stand silently. A loss a host stall explains is the host's, said as
such.
"""

from __future__ import annotations

from vswbench.results.points import Latency

GOAL_LOSS_RATIO = 0.0              # the NDR goal's: a confirmation trial may lose nothing


def unconfirmed_note(latency: Latency | None) -> str | None:
    """Why the headline the latency trial followed is not confirmed, or None (confirmed, no
    confirmation trial, or a loss a measured host stall explains)."""
    if latency is None or latency.host_stall:
        return None
    ratio = latency.loss_ratio or 0.0
    if not latency.lost_frames and ratio <= GOAL_LOSS_RATIO:
        return None
    at = (f"{latency.fraction_of_ndr * 100:g} % trial"
          if latency.fraction_of_ndr is not None else "confirmation trial")
    return f"its {at} lost {ratio * 100:.3g} %, no stall explains it"


def confirmation(latency: Latency | None) -> str:
    """'confirmed', 'not confirmed', 'host stall' (its loss a stall's) or 'none' (no trial)."""
    if latency is None:
        return "none"
    if unconfirmed_note(latency) is not None:
        return "not confirmed"
    if latency.host_stall and (latency.lost_frames or latency.loss_ratio):
        return "host stall"
    return "confirmed"
