"""Checks of single campaign-spec values, one per dimension (CHECKS): each returns the value
normalised or raises BadValue with the problem; campaign/spec.py collects them per study.

The bounds are the command line's (engine/params.py, units.py, measure/): a spec can ask for
nothing a flag would refuse. A value is shown in a message by `short`, never longer than a line;
numbers are written with the digits 0-9 (check_value refuses Arabic-Indic or full-width ones,
which Python's float() and int() would quietly read)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from vswbench import scenario as scenarios
from vswbench.engine.params import IO_CHOICES
from vswbench.engine.params import MAX_BURST
from vswbench.engine.params import MAX_FLOWS
from vswbench.engine.params import seconds_problem
from vswbench.errors import UsageError
from vswbench.measure.b2b import MAX_FRAMES_RANGE
from vswbench.measure.b2b import TRIALS_RANGE
from vswbench.measure.loadcurve import SWEEP_POINTS_RANGE
from vswbench.measure.rule_update import MAX_RULES
from vswbench.measure.rule_update import UPDATE_RATE_RANGE
from vswbench.measure.search import PRESETS
from vswbench.switches.options import unknown_key
from vswbench.switches.rules.functions import FUNCTIONS
from vswbench.switches.rules.functions import MAX_L3_TABLE
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME
from vswbench.units import FrameSize
from vswbench.units import parse_rate

SOCKET_KINDS = ("stream", "rr", "crr")      # what applications see (measure/sockets.py)
KINDS = ("search", "sweep", "trial", "latency", "b2b", "rule-update", *SOCKET_KINDS)
PLACEMENTS = ("default", "s_core", "bi", "pbp", "unpinned")
ALL_SWITCHES = "*"


MAX_VALUE_CHARS = 100       # no switch, scenario, rate, churn or option value is longer
SHOWN_CHARS = 40            # a value in a message: at most this much of it


MAX_PROBLEMS = 50           # a spec's mistakes reported at once at most (then checking stops)


class BadValue(Exception):
    """One value's problem (collected, never shown alone)."""


class TooManyProblems(Exception):
    """Problems is full: the spec is not checked further (its mistakes so far are reported)."""


class Problems(list[str]):
    """The mistakes of one spec, one line each, in the order found. It holds MAX_PROBLEMS at
    most: the next one raises TooManyProblems, so that a spec of 100,000 bad values costs the
    time of 50, not of 100,000 messages (each with its "did you mean")."""

    def append(self, problem: str) -> None:
        if len(self) >= MAX_PROBLEMS:
            raise TooManyProblems
        super().append(" ".join(problem.split()))          # one line, whatever it quotes

    def extend(self, problems: Any) -> None:
        for problem in problems:
            self.append(problem)

    def __iadd__(self, problems: Any) -> Problems:       # type: ignore[override,misc]
        self.extend(problems)
        return self


def short(v: Any) -> str:
    """`v` as a message shows it: its repr, cut to SHOWN_CHARS with the length said (a value of
    5,000 characters is never echoed whole; repr keeps it on one line)."""
    try:
        text = repr(v)
    except ValueError:                      # an int too long to print (sys.set_int_max_str_digits)
        return "a number of thousands of digits"
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def check_value(key: str, v: Any) -> Any:
    """CHECKS[key](v) after the checks every value gets: a string no longer than
    MAX_VALUE_CHARS, digits 0-9 only (also in an options table's keys and values)."""
    for text in _texts(v):
        if len(text) > MAX_VALUE_CHARS:
            raise BadValue(f"{short(text)} is too long: no {key} value has more than "
                           f"{MAX_VALUE_CHARS} characters")
        if not text.isascii() and any(c.isnumeric() and not c.isascii() for c in text):
            raise BadValue(f"{short(text)} has digits other than 0-9: write numbers with the "
                           "digits 0-9")
    return CHECKS[key](v)


def _texts(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):        # an options table: its keys, and its values as options hold them
        return [t for k, x in v.items()
                for t in (str(k), *(_texts(str(x)) if isinstance(x, (int, float)) else _texts(x)))]
    return []


def _int(v: Any, low: int, high: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadValue(f"{short(v)} is not a whole number")
    if high is None and v < low:
        raise BadValue(f"{short(v)} is out of range: must be at least {low}")
    if high is not None and not low <= v <= high:
        raise BadValue(f"{short(v)} is out of range {low}..{high}")
    return v


def _seconds(v: Any) -> float:
    """A duration: the command line's bounds (engine/params.seconds_problem)."""
    problem = seconds_problem(v)
    if problem:
        raise BadValue(f"{short(v)} is not a duration: {problem}")
    return float(v)


def _update_rate(v: Any) -> float:
    low, high = UPDATE_RATE_RANGE
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
        raise BadValue(f"{short(v)} is not a number of changes per second from {low:g} to "
                       f"{high:g}")
    return float(v)


def _choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in choices:
            raise BadValue(f"{short(v)} is not one of {', '.join(choices)}"
                           f"{did_you_mean(v, choices)}")
        return v
    return check


def _rate(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise BadValue(f"{short(v)} is not a rate (packets per second like 100000 or \"100k\")")
    try:
        return parse_rate(str(v))
    except UsageError as e:
        raise BadValue(str(e)) from None


def _shape_pps(v: Any) -> float:
    from vswbench.switches.kernel.shaped import MAX_SHAPE_PPS

    pps = _rate(v)
    if pps > MAX_SHAPE_PPS:
        raise BadValue(f"{short(v)} is above the shaper's limit of {MAX_SHAPE_PPS:,.0f} pps")
    return pps


def _size(v: Any) -> int | str:
    """Bytes MIN_FRAME..MAX_FRAME (FCS included) or "imix" / "imix:GENOME", as units.FrameSize
    parses them."""
    if isinstance(v, bool) or not isinstance(v, (int, str)) or (
            isinstance(v, str) and not v.lower().startswith("imix")):
        raise BadValue(f"{short(v)} is not a frame size: give bytes {MIN_FRAME}..{MAX_FRAME} "
                       "(FCS included) or \"imix\"")
    try:
        return FrameSize.parse(v).stored()
    except UsageError as exc:
        raise BadValue(str(exc)) from None


def _scenario(v: Any) -> str:
    if not isinstance(v, str):
        raise BadValue(f"{short(v)} is not a scenario name")
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
        return str(v)
    raise BadValue(f"unknown switch {short(v)}{did_you_mean(v, names)}: choose from "
                   f"{', '.join(names)} "
               f"or \"*\" (see `vswbench switches`)")


def _options(v: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(v, dict):
        raise BadValue(f"{short(v)} is not a table of backend options, e.g. "
                       "{ ovs_mode = \"normal\" }")
    items = []
    for k, x in v.items():
        if k in ("shape_pps", "shape_frame_size"):
            raise BadValue(f"{k} is set by the campaign: use the study key shape_pps (and size)")
        if (problem := unknown_key(k)) is not None:
            raise BadValue(problem)
        if not isinstance(x, (str, int, float, bool)):
            raise BadValue(f"option {k} = {short(x)}: values are strings, numbers or booleans")
        items.append((k, str(x).lower() if isinstance(x, bool) else str(x)))
    return tuple(sorted(items))


def _churn(v: Any) -> str | None:
    """"A/D" (new flows per second / seconds each lives) canonical, or None for "off"."""
    from vswbench.engine.params import TrialParams
    from vswbench.engine.params import churn_text
    from vswbench.engine.params import parse_churn

    if isinstance(v, bool) or not isinstance(v, str):
        raise BadValue(f"{short(v)} is not a churn: write \"A/D\" (new flows per second / seconds "
                       f"each flow lives, e.g. \"1000/0.5\") or \"off\"")
    try:
        arrival, life = parse_churn(v)
        TrialParams(flow_arrival=arrival, flow_life=life).validate()
    except UsageError as e:
        raise BadValue(str(e).replace("--churn ", "")) from None
    return churn_text(arrival, life)


def _fraction(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 200:
        raise BadValue(f"{short(v)} is not a percentage of the NDR in (0, 200]")
    return v / 100


CHECKS: dict[str, Callable[[Any], Any]] = {
    "kind": _choice(KINDS), "scenario": _scenario, "switch": _switch, "size": _size,
    "rate": _rate, "burst": lambda v: _int(v, 1, MAX_BURST),
    "flows": lambda v: _int(v, 1, MAX_FLOWS),
    "chain": lambda v: _int(v, 1, scenarios.MAX_CHAIN),
    "pairs": lambda v: _int(v, 1, scenarios.MAX_PAIRS),
    "placement": _choice(PLACEMENTS), "repetitions": lambda v: _int(v, 1, 1000),
    "preset": _choice(tuple(PRESETS)), "duration": _seconds,
    "points": lambda v: _int(v, *SWEEP_POINTS_RANGE), "fractions": _fraction,
    "io": _choice(tuple(io for io in IO_CHOICES if io != "dpdk")),  # DPDK switches imply it
    "options": _options, "shape_pps": _shape_pps, "trials": lambda v: _int(v, *TRIALS_RANGE),
    "max_frames": lambda v: _int(v, *MAX_FRAMES_RANGE), "churn": _churn,
    "profile": lambda v: _bool(v),
    "pdr_loss": lambda v: _loss_percent(v)}
CHECKS.update({"function": _choice(tuple(FUNCTIONS)),           # switches/rules/functions.py
               "table_size": lambda v: _int(v, 1, MAX_L3_TABLE),
               "rules": lambda v: _int(v, 1, MAX_RULES),            # kind rule-update
               "update_rate": _update_rate,
               # kinds stream, rr, crr (measure/sockets.py, host/tuning.py)
               "proto": _choice(("tcp", "udp")), "msg_size": lambda v: _int(v, 1, 1 << 20),
               "mtu": lambda v: _mtu(v), "offloads": _choice(("default", "on", "off")),
               "service": lambda v: _bool(v)})
SCALAR_ONLY = ("repetitions", "profile", "pdr_loss")


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise BadValue(f"{short(v)} is not true or false")
    return v


def _mtu(v: Any) -> int:
    if isinstance(v, bool) or v not in (1500, 9000):
        raise BadValue(f"{short(v)} is not an MTU this benchmark sets: 1500 or 9000")
    return int(v)


def _loss_percent(v: Any) -> float:
    """pdr_loss: the PDR's loss ratio in percent (Emmerich et al. Table 2: 10), as a ratio."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 100:
        raise BadValue(f"{short(v)} is not a loss percentage in (0, 100), e.g. 0.5 or 10")
    return v / 100


def did_you_mean(word: Any, choices: Any) -> str:
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# [campaign] budget: the whole run's wall time ("7m", "90s", "1h30m" or seconds); the runner
# then runs group by group and pairs each group's switches in rounds with what the first pass
# leaves of it (campaign/grouped.py, rounds_phase.py; on another host: the decide phase,
# campaign/decide_phase.py). Without it, every point runs once.
BUDGET_RE = re.compile(r"(?:([0-9]{1,3})h)?(?:([0-9]{1,4})m)?(?:([0-9]{1,6})s)?")
MAX_BUDGET_S = 7 * 86400.0


def parse_budget(raw: Any, problems: list[str]) -> float | None:
    """[campaign] budget: seconds (a number) or a duration text such as "7m", "6m30s", "1h"."""
    if raw is None:
        return None
    seconds: float | None = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        try:
            seconds = float(raw)
        except OverflowError:            # an integer of hundreds of digits
            seconds = None
    elif isinstance(raw, str) and raw and raw.isascii() and (m := BUDGET_RE.fullmatch(raw)):
        h, mi, se = (int(x) if x else 0 for x in m.groups())
        seconds = h * 3600.0 + mi * 60.0 + se
    if seconds is None or not 1.0 <= seconds <= MAX_BUDGET_S:
        shown = repr(raw)[:40]
        problems.append(f"[campaign], budget: {shown} is not a duration: give seconds (1 to "
                        f"{MAX_BUDGET_S:.0f}) or a text such as \"7m\", \"6m30s\" or \"1h\"")
        return None
    return seconds
