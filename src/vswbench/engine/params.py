"""TrialParams: the one typed record of a trial's traffic, from the command line to the engine.

Both encodings the engine reads are rendered here and nowhere else: the sender's argv (`gen` and
`loop` processes started per trial) and the control-mode JSON command (one long-lived tester that
runs many trials). What stays fixed over a session (size, flows, burst, io) and what a search
varies (rate, duration) live in one record; `at()` gives the record of one trial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from vswbench.errors import UsageError
from vswbench.units import MAX_RATE_PPS, MIN_RATE_PPS, FrameSize

IO_CHOICES = ("auto", "afpacket", "udp", "afxdp", "xdplive", "dpdk")
# "auto" is resolved per switch before anything runs (measure/plan.engine_io): xdplive where the
# kernel can generate through the switch's ports, else afpacket; dpdk for the DPDK switches
# engine modes each backend has (engine/README.md): xdplive generates and counts in the kernel,
# so it has no reflect or fwd; those engines of a testbed take afpacket instead
GEN_ONLY_IO = ("xdplive",)
MAX_DURATION_S = 24 * 3600.0         # one trial of a day; longer is a typo (e.g. 1e9)
MAX_FLOWS = 1_000_000                # the engine's own limit on --flows
MAX_BURST = 65_536


def _fmt(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".")


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

    def __post_init__(self) -> None:
        if not isinstance(self.size, FrameSize):
            object.__setattr__(self, "size", FrameSize.parse(self.size))

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

    def at(self, rate_pps: float, duration: float, warmup: float = 0.0) -> TrialParams:
        """The same traffic at another load and length (one trial of a search)."""
        return replace(self, rate_pps=rate_pps, duration=duration, warmup=warmup)

    def send_args(self, senders: int = 1, duration: float | None = None) -> list[str]:
        """argv of a gen/loop process: the rate is shared among `senders`."""
        per_sender = self.rate_pps / max(1, senders)
        return ["--size", self.size.engine_arg(), "--rate", _fmt(per_sender),
                "--duration", _fmt(self.duration if duration is None else duration),
                "--flows", str(self.flows), "--burst", str(self.burst)]

    def control_command(self, *, count: int | None, cap_s: float,
                        drain: float) -> dict[str, Any]:
        """The control-mode JSON command of one trial at this record's rate: `count` frames
        (None: by duration), stopped after `cap_s` seconds at the latest (0: no cap)."""
        cmd: dict[str, Any] = {"cmd": "trial", "mode": "loop", "rate": self.rate_pps,
                               "size": self.size.engine_arg(), "burst": self.burst,
                               "flows": self.flows, "warmup": 0, "drain": drain}
        if count is not None:
            cmd["count"] = count
        if cap_s > 0:
            cmd["duration"] = round(cap_s, 6)
        return cmd
