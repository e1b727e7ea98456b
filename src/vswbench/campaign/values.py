"""Checks of single campaign-spec values, one per dimension (CHECKS): each returns the value
normalised or raises BadValue with the problem; campaign/spec.py collects them per study."""

from __future__ import annotations

import difflib
import re
from typing import Any, Callable

from vswbench import scenario as scenarios
from vswbench.engine.params import IO_CHOICES
from vswbench.errors import UsageError
from vswbench.measure.search import PRESETS
from vswbench.switches.functions import FUNCTIONS, MAX_L3_TABLE
from vswbench.switches.options import unknown_key
from vswbench.units import FrameSize, parse_rate

KINDS = ("search", "sweep", "trial", "latency", "b2b", "rule-update")
PLACEMENTS = ("default", "s_core", "bi", "pbp", "unpinned")
CALIBRATION_SWITCH = "shaped"
ALL_SWITCHES = "*"


class BadValue(Exception):
    """One value's problem (collected, never shown alone)."""


def _int(v: Any, low: int, high: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadValue(f"{v!r} is not a whole number")
    if high is None and v < low:
        raise BadValue(f"{v} is out of range: must be at least {low}")
    if high is not None and not low <= v <= high:
        raise BadValue(f"{v} is out of range {low}..{high}")
    return v


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v == float("inf"):
        raise BadValue(f"{v!r} is not a positive number")
    return float(v)


def _choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in choices:
            raise BadValue(f"{v!r} is not one of {', '.join(choices)}{did_you_mean(v, choices)}")
        return v
    return check


def _rate(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise BadValue(f"{v!r} is not a rate (packets per second like 100000 or \"100k\")")
    try:
        return parse_rate(str(v))
    except UsageError as e:
        raise BadValue(str(e)) from None


def _shape_pps(v: Any) -> float:
    from vswbench.switches.shaped import MAX_SHAPE_PPS

    pps = _rate(v)
    if pps > MAX_SHAPE_PPS:
        raise BadValue(f"{v!r} is above the shaper's limit of {MAX_SHAPE_PPS:,.0f} pps")
    return pps


def _size(v: Any) -> int | str:
    """Bytes 64..1518 (FCS included) or "imix" / "imix:GENOME", as units.FrameSize parses them."""
    if isinstance(v, bool) or not isinstance(v, (int, str)) or (
            isinstance(v, str) and not v.lower().startswith("imix")):
        raise BadValue(f"{v!r} is not a frame size: give bytes 64..1518 (FCS included) or \"imix\"")
    try:
        return FrameSize.parse(v).stored()
    except UsageError as exc:
        raise BadValue(str(exc)) from None


def _scenario(v: Any) -> str:
    if not isinstance(v, str):
        raise BadValue(f"{v!r} is not a scenario name")
    if v.strip().lower() in ("chain", "pairs"):
        return v.strip().lower()           # resolved with the chain / pairs key
    try:
        return scenarios.parse(v).name
    except UsageError as e:
        raise BadValue(str(e)) from None


def _switch(v: Any) -> str:
    from vswbench.switches.catalog import all_switches

    names = sorted(all_switches())
    if v == ALL_SWITCHES or (isinstance(v, str) and v in names):
        return v
    raise BadValue(f"unknown switch {v!r}{did_you_mean(v, names)}: choose from {', '.join(names)} "
               f"or \"*\" (see `vswbench switches`)")


def _options(v: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(v, dict):
        raise BadValue(f"{v!r} is not a table of backend options, e.g. {{ ovs_mode = \"normal\" }}")
    items = []
    for k, x in v.items():
        if k in ("shape_pps", "shape_frame_size"):
            raise BadValue(f"{k} is set by the campaign: use the study key shape_pps (and size)")
        if (problem := unknown_key(k)) is not None:
            raise BadValue(problem)
        if not isinstance(x, (str, int, float, bool)):
            raise BadValue(f"option {k} = {x!r}: values are strings, numbers or booleans")
        items.append((k, str(x).lower() if isinstance(x, bool) else str(x)))
    return tuple(sorted(items))


def _churn(v: Any) -> str | None:
    """"A/D" (new flows per second / seconds each lives) canonical, or None for "off"."""
    from vswbench.engine.params import TrialParams, churn_text, parse_churn

    if isinstance(v, bool) or not isinstance(v, str):
        raise BadValue(f"{v!r} is not a churn: write \"A/D\" (new flows per second / seconds "
                       f"each flow lives, e.g. \"1000/0.5\") or \"off\"")
    try:
        arrival, life = parse_churn(v)
        TrialParams(flow_arrival=arrival, flow_life=life).validate()
    except UsageError as e:
        raise BadValue(str(e).replace("--churn ", "")) from None
    return churn_text(arrival, life)


def _fraction(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 200:
        raise BadValue(f"{v!r} is not a percentage of the NDR in (0, 200]")
    return v / 100


CHECKS: dict[str, Callable[[Any], Any]] = {
    "kind": _choice(KINDS), "scenario": _scenario, "switch": _switch, "size": _size,
    "rate": _rate, "burst": lambda v: _int(v, 1), "flows": lambda v: _int(v, 1),
    "chain": lambda v: _int(v, 1, scenarios.MAX_CHAIN),
    "pairs": lambda v: _int(v, 1, scenarios.MAX_PAIRS),
    "placement": _choice(PLACEMENTS), "repetitions": lambda v: _int(v, 1, 1000),
    "preset": _choice(tuple(PRESETS)), "duration": _number,
    "points": lambda v: _int(v, 2, 200), "fractions": _fraction,
    "io": _choice(tuple(io for io in IO_CHOICES if io != "dpdk")),  # DPDK switches imply it
    "options": _options, "shape_pps": _shape_pps, "trials": lambda v: _int(v, 1, 1000),
    "max_frames": lambda v: _int(v, 2, 10_000_000), "churn": _churn, "profile": lambda v: _bool(v),
    "pdr_loss": lambda v: _loss_percent(v)}
CHECKS.update({"function": _choice(tuple(FUNCTIONS)),           # switches/functions.py
               "table_size": lambda v: _int(v, 1, MAX_L3_TABLE),
               "rules": lambda v: _int(v, 1, 32768),                # kind rule-update
               "update_rate": _number})
SCALAR_ONLY = ("repetitions", "profile", "pdr_loss")


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise BadValue(f"{v!r} is not true or false")
    return v


def _loss_percent(v: Any) -> float:
    """pdr_loss: the PDR's loss ratio in percent (Emmerich et al. Table 2: 10), as a ratio."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 100:
        raise BadValue(f"{v!r} is not a loss percentage in (0, 100), e.g. 0.5 or 10")
    return v / 100


def did_you_mean(word: Any, choices: Any) -> str:
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# [campaign] budget: the whole run's wall time ("7m", "90s", "1h30m" or seconds); after the
# first pass the runner repeats the searches of neighbouring switches still undecided while it
# lasts (campaign/decide_phase.py). Without it, every point runs once.
BUDGET_RE = re.compile(r"(?:([0-9]{1,3})h)?(?:([0-9]{1,4})m)?(?:([0-9]{1,6})s)?")
MAX_BUDGET_S = 7 * 86400.0


def parse_budget(raw: Any, problems: list[str]) -> float | None:
    """[campaign] budget: seconds (a number) or a duration text such as "7m", "6m30s", "1h"."""
    if raw is None:
        return None
    seconds: float | None = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        seconds = float(raw)
    elif isinstance(raw, str) and raw and raw.isascii() and (m := BUDGET_RE.fullmatch(raw)):
        h, mi, se = (int(x) if x else 0 for x in m.groups())
        seconds = h * 3600.0 + mi * 60.0 + se
    if seconds is None or not 1.0 <= seconds <= MAX_BUDGET_S:
        shown = repr(raw)[:40]
        problems.append(f"[campaign], budget: {shown} is not a duration: give seconds (1 to "
                        f"{MAX_BUDGET_S:.0f}) or a text such as \"7m\", \"6m30s\" or \"1h\"")
        return None
    return seconds
