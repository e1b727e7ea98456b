"""TrialParams: the one typed record of a trial's traffic, from the command line to the engine.

Both encodings the engine reads are rendered here and nowhere else: the sender's argv (`gen` and
`loop` processes started per trial) and the control-mode JSON command (one long-lived tester that
runs many trials). What stays fixed over a session (size, flows, burst, io) and what a search
varies (rate, duration) live in one record; `at()` gives the record of one trial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from vswbench.errors import UsageError
from vswbench.units import MAX_RATE_PPS
from vswbench.units import MIN_RATE_PPS
from vswbench.units import FrameSize
from vswbench.units import ascii_number

IO_CHOICES = ("auto", "afpacket", "udp", "afxdp", "xdplive", "dpdk")
# "auto" is resolved per switch before anything runs (measure/plan.engine_io): xdplive where the
# kernel can generate through the switch's ports, else afpacket; dpdk for the DPDK switches
# engine modes each backend has (engine/README.md): xdplive generates and counts in the kernel,
# so it has no reflect or fwd; those engines of a testbed take afpacket instead
GEN_ONLY_IO = ("xdplive",)
MAX_DURATION_S = 24 * 3600.0         # one trial of a day; longer is a typo (e.g. 1e9)
MIN_DURATION_S = 0.1                 # a measured trial's shortest (shorter: 1e-320 is a typo)
MAX_FLOWS = 1_000_000                # the engine's own limit on --flows
MAX_BURST = 65_536
MAX_FLOW_ARRIVAL = 1e7               # the engine's limits on churn (engine/src/churn.h)
MAX_FLOW_LIFE = 86_400.0
CHURN_SPACE = 64_512                 # distinct source ports from 1024: live flows must fit
CHURN_IO = ("auto", "afpacket", "afxdp", "dpdk")   # userspace L2 generators (xdplive, udp: no)


def seconds_problem(value: Any, low: float = MIN_DURATION_S) -> str | None:
    """Why `value` is not a number of seconds from `low` to a day (nan, inf, 1e-320 and 1e308
    are not), or None: the one check of every duration, a command's flag or a campaign key."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            low <= value <= MAX_DURATION_S):             # nan compares false; no float(10**400)
        return f"give seconds from {low:g} to {MAX_DURATION_S:g}"
    return None


def _fmt(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".")


def _churn_number(text: str, what: str, whole: str) -> float:
    t = text.strip()
    scale = 1.0
    if t[-1:] in ("k", "K", "M"):
        scale, t = (1e3 if t[-1] in "kK" else 1e6), t[:-1]
    try:
        value = float(ascii_number(t)) * scale
    except ValueError:
        raise UsageError(f"--churn {whole}: {text!r} is not a number of {what}") from None
    if not value > 0:
        raise UsageError(f"--churn {whole}: {what} must be above 0 (or --churn off for a fixed "
                         "set of flows)")
    return value


def parse_churn(text: str | None) -> tuple[float, float]:
    """"A/D" (A new flows per second, each living D seconds; "10k/0.5") -> (A, D); None, "" or
    "off" -> (0, 0). Checked by TrialParams.validate."""
    if text is None or str(text).strip().lower() in ("", "off", "none", "0"):
        return 0.0, 0.0
    whole = str(text)
    parts = whole.split("/")
    if len(parts) != 2:
        raise UsageError(f"--churn {whole}: expected A/D, new flows per second and the seconds "
                         f"each flow lives (e.g. 1000/0.5 or 10k/1), or off")
    return (_churn_number(parts[0], "flows per second", whole),
            _churn_number(parts[1], "seconds", whole))


def churn_text(arrival: float, life: float) -> str | None:
    """The canonical "A/D" of a churn (None: off), as stored with results."""
    if arrival <= 0 and life <= 0:
        return None
    return f"{arrival:g}/{life:g}"


# The drivers' gap limit (engine --gap-us) where the tester's core carries none of the switch's
# work (Switch.tester_cpu_free): a generator that did not run for longer than this skips the
# departures due meanwhile instead of sending them back to back into the switch's ring afterwards.
# On this VM, at 40-90 % of a kernel switch's NDR, trials whose tester core stopped for over 1 ms
# (and the switch's core did not) lost frames in 71 % of cases, against 19 % with neither core
# stopped over 0.3 ms (three quick runs, 2,000 trials, 2026-11-27).
TESTER_GAP_US = 100.0


@dataclass(frozen=True)
class TrialParams:
    """What the tester sends in a trial. `size` accepts 64, "1518" or "imix" too (parsed)."""

    size: FrameSize = field(default_factory=lambda: FrameSize(64))
    rate_pps: float = 10_000.0       # offered load over all senders; 0 = as fast as possible
    duration: float = 2.0            # seconds of measured traffic
    warmup: float = 1.0              # seconds of traffic before it, result dropped
    flows: int = 1
    burst: int = 1
    io: str = "afpacket"            # the CLI and campaigns default to "auto" (plan_trial resolves it)
    flow_arrival: float = 0.0        # churn: new flows per second (0 = the fixed set of `flows`)
    flow_life: float = 0.0           # churn: seconds each flow lives (engine/src/churn.h)

    def __post_init__(self) -> None:
        if not isinstance(self.size, FrameSize):
            object.__setattr__(self, "size", FrameSize.parse(self.size))

    @property
    def churn(self) -> str | None:
        """"A/D" when flows churn, else None."""
        return churn_text(self.flow_arrival, self.flow_life)

    @property
    def frame_size(self) -> int | str:
        """The size as results store it: bytes, or the IMIX text."""
        return self.size.stored()

    def validate(self) -> None:
        """UsageError naming the flag and the fix for any value the engine would refuse."""
        numbers = {"--rate": self.rate_pps, "--duration": self.duration, "--warmup": self.warmup}
        for flag, value in numbers.items():
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UsageError(f"{flag} {value!r}: must be a finite number")
        if not MIN_RATE_PPS <= self.rate_pps <= MAX_RATE_PPS:
            raise UsageError(f"--rate {self.rate_pps:g}: must be {MIN_RATE_PPS:g} to "
                             f"{MAX_RATE_PPS:g} packets per second (e.g. 100k or 1.5M)")
        if not 0 < self.duration <= MAX_DURATION_S or not 0 <= self.warmup <= MAX_DURATION_S:
            raise UsageError(f"--duration {self.duration:g} / --warmup {self.warmup:g}: the "
                             f"duration must be positive and the warm-up not negative, both at "
                             f"most {MAX_DURATION_S:g} s")
        if not 1 <= self.flows <= MAX_FLOWS or not 1 <= self.burst <= MAX_BURST:
            raise UsageError(f"--flows {self.flows} / --burst {self.burst}: flows must be "
                             f"1..{MAX_FLOWS}, burst 1..{MAX_BURST}")
        if self.io not in IO_CHOICES:
            raise UsageError(f"--io {self.io}: choose from {', '.join(IO_CHOICES)}")
        self._validate_churn()

    def _validate_churn(self) -> None:
        a, d = self.flow_arrival, self.flow_life
        if a == 0 and d == 0:
            return
        text = f"--churn {a:g}/{d:g}"
        if not (math.isfinite(a) and math.isfinite(d) and 0 < a <= MAX_FLOW_ARRIVAL
                and 0 < d <= MAX_FLOW_LIFE):
            raise UsageError(f"{text}: new flows per second must be in (0, {MAX_FLOW_ARRIVAL:g}] "
                             f"and the lifetime in (0, {MAX_FLOW_LIFE:g}] seconds")
        if a * d < 1:
            raise UsageError(f"{text}: {a * d:g} flows active on average; at least 1 is needed "
                             f"(more arrivals or longer lives)")
        if math.ceil(a * d) >= CHURN_SPACE:
            raise UsageError(f"{text}: {math.ceil(a * d):,} flows active at once, more than the "
                             f"{CHURN_SPACE:,} distinct source ports live flows take; use fewer or "
                             f"shorter flows")
        if self.flows != 1:
            raise UsageError(f"--flows {self.flows} with {text}: churn replaces the fixed set of "
                             f"flows; leave --flows at 1")
        if self.io not in CHURN_IO:
            raise UsageError(f"--io {self.io} with {text}: the {self.io} generator sends a fixed "
                             f"set of flows; churn needs --io afpacket, afxdp or dpdk (or auto)")

    def at(self, rate_pps: float, duration: float, warmup: float = 0.0) -> TrialParams:
        """The same traffic at another load and length (one trial of a search)."""
        return replace(self, rate_pps=rate_pps, duration=duration, warmup=warmup)

    def send_args(self, senders: int = 1, duration: float | None = None) -> list[str]:
        """argv of a gen/loop process: the rate is shared among `senders`."""
        per_sender = self.rate_pps / max(1, senders)
        return ["--size", self.size.engine_arg(), "--rate", _fmt(per_sender),
                "--duration", _fmt(self.duration if duration is None else duration),
                "--flows", str(self.flows), "--burst", str(self.burst), *self.churn_args()]

    def churn_args(self) -> list[str]:
        """--flow-arrival/--flow-life of a sending process (none without churn)."""
        if self.churn is None:
            return []
        return ["--flow-arrival", _fmt(self.flow_arrival), "--flow-life", _fmt(self.flow_life)]

    def control_command(self, *, count: int | None, cap_s: float, drain: float,
                        drain_quiet: float = 0.0) -> dict[str, Any]:
        """The control-mode JSON command of one trial at this record's rate: `count` frames
        (None: by duration), stopped after `cap_s` seconds at the latest (0: no cap); frames in
        flight are awaited `drain` s at most, less once none arrived for `drain_quiet` s (> 0)."""
        cmd: dict[str, Any] = {"cmd": "trial", "mode": "loop", "rate": self.rate_pps,
                               "size": self.size.engine_arg(), "burst": self.burst,
                               "flows": self.flows, "warmup": 0, "drain": drain}
        if drain_quiet > 0:
            cmd["drain_quiet"] = drain_quiet
        if self.churn is not None:
            cmd["flow_arrival"], cmd["flow_life"] = self.flow_arrival, self.flow_life
        if count is not None:
            cmd["count"] = count
        if cap_s > 0:
            cmd["duration"] = round(cap_s, 6)
        return cmd
