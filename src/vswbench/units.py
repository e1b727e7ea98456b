"""Rates, frame sizes (IMIX included) and wire arithmetic, defined once for the whole package.

Rates are packets per second of Ethernet frames; a frame size counts the 4-byte FCS (RFC 2544: a
"64-byte frame" is 60 bytes handed to the kernel). On the wire every frame also takes 20 bytes
of preamble (8) and inter-frame gap (12).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from vswbench.errors import UsageError

MIN_FRAME, MAX_FRAME = 64, 9018          # bytes, FCS included (the engine's limits: MTU 9000)
STD_FRAME_MAX = 1518                     # the largest frame of a 1500-byte MTU
STD_MTU, JUMBO_MTU = 1500, 9000          # a testbed's links: as created, and for larger frames
FRAME_L2_BYTES = 18                      # Ethernet header and FCS: frame size = MTU + 18
WIRE_OVERHEAD_BYTES = 20                 # preamble (8) and inter-frame gap (12) per frame
DEFAULT_LINK_BPS = 10e9                  # the reference link of line-rate curves: 10 GbE
MAX_RATE_PPS = 1e9                       # no tester here comes near: larger is a typo
MIN_RATE_PPS = 1.0                       # the engine paces whole packets per second
# RFC 6985 letters (engine/src/frame.c); the engine's default genome is "aaaaaaaddddg".
IMIX_LETTERS = {"a": 64, "b": 128, "c": 256, "d": 512, "e": 1024, "f": 1280, "g": 1518}
IMIX_DEFAULT_GENOME = "aaaaaaaddddg"
_SCALE = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9}


NUMBER_RE = re.compile(r"[0-9]+(\.[0-9]+)?")


def ascii_number(text: str) -> str:
    """`text` unchanged if it is a plain decimal number: the ASCII digits 0-9 with at most one
    decimal point inside; ValueError otherwise. Python's int() and float() also read Unicode
    digits, '1_000', '+5', ' 5 ', '1e3', 'inf' and 'nan': all of those are refused here."""
    if not text.isascii() or not NUMBER_RE.fullmatch(text):
        raise ValueError(f"{text!r}: write numbers with the ASCII digits 0-9 and at most one "
                         "decimal point (no sign, underscore, space or exponent)")
    return text


def _scaled(text: str, low: float, high: float, unit: str, examples: str) -> float:
    """A number with an optional k/M/G suffix within [low, high]; UsageError naming `unit` and
    `examples` otherwise."""
    s = str(text).strip()
    scale = _SCALE.get(s[-1:], 1.0)
    digits = s[:-1] if scale != 1.0 else s
    try:
        value = float(ascii_number(digits)) * scale
    except ValueError:
        raise UsageError(f"rate {text!r}: expected {unit} like {examples}") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise UsageError(f"rate {text!r}: must be {low:g} to {high:g} {unit} (e.g. {examples})")
    return value


def parse_rate(text: str) -> float:
    """'100k' -> 100000.0, '1.5M' -> 1500000.0, '2500' -> 2500.0; UsageError otherwise."""
    return _scaled(text, MIN_RATE_PPS, MAX_RATE_PPS, "packets per second", "10k, 100k or 1.5M")


MIN_BITRATE = 1e3                         # bits/s: the socket app's pacer (engine sa_opts.c)
MAX_BITRATE = 1e12


def parse_bitrate(text: str) -> float:
    """'500M' -> 5e8 bits/s, '2G' -> 2e9, '64k' -> 64000.0; UsageError otherwise."""
    return _scaled(text, MIN_BITRATE, MAX_BITRATE, "bits per second", "500M or 2G")


@dataclass(frozen=True)
class FrameSize:
    """A frame size, FCS included: a fixed number of bytes (MIN_FRAME..MAX_FRAME) or an IMIX genome."""

    bytes: int | None = None          # fixed size, or None for IMIX
    genome: str | None = None         # IMIX letters (RFC 6985), or None for a fixed size

    @classmethod
    def parse(cls, value: int | str | FrameSize) -> FrameSize:
        """64, "64", "imix", "imix:aaad" -> a FrameSize; UsageError naming the fix otherwise."""
        if isinstance(value, FrameSize):
            return value
        if isinstance(value, bool):
            raise UsageError(f"frame size {value!r}: give bytes {MIN_FRAME}..{MAX_FRAME} or imix")
        text = str(value).strip().lower()
        if text == "imix":
            return cls(genome=IMIX_DEFAULT_GENOME)
        if text.startswith("imix:"):
            genome = text[5:]
            if not genome or any(c not in IMIX_LETTERS for c in genome):
                raise UsageError(f"frame size {value!r}: an IMIX genome is letters a-g "
                                 "(a=64 b=128 c=256 d=512 e=1024 f=1280 g=1518), e.g. imix:aaaad")
            return cls(genome=genome)
        try:
            size = int(ascii_number(text))
        except ValueError:
            raise UsageError(f"frame size {value!r}: give bytes {MIN_FRAME}..{MAX_FRAME} (FCS "
                             "included) or imix") from None
        if not MIN_FRAME <= size <= MAX_FRAME:
            raise UsageError(f"frame size {size}: must be {MIN_FRAME}..{MAX_FRAME} bytes, FCS "
                             "included")
        return cls(bytes=size)

    @property
    def is_imix(self) -> bool:
        return self.genome is not None

    @property
    def mean_bytes(self) -> float:
        """Bytes per frame on average (a fixed size is its own mean)."""
        if self.genome is None:
            assert self.bytes is not None
            return float(self.bytes)
        return sum(IMIX_LETTERS[c] for c in self.genome) / len(self.genome)

    @property
    def largest(self) -> int:
        """The largest frame sent (what a shaper or MTU must allow)."""
        if self.genome is None:
            assert self.bytes is not None
            return self.bytes
        return max(IMIX_LETTERS[c] for c in self.genome)

    @property
    def link_mtu(self) -> int:
        """The MTU a testbed's links need for these frames: 1500 up to 1518 B, else the size
        less 18 B rounded up to 9000 (frames above 1518 B)."""
        if self.largest <= STD_FRAME_MAX:
            return STD_MTU
        return max(JUMBO_MTU, self.largest - FRAME_L2_BYTES)

    def engine_arg(self) -> str:
        """The engine's --size / control "size" value."""
        if self.genome is None:
            return str(self.bytes)
        return "imix" if self.genome == IMIX_DEFAULT_GENOME else f"imix:{self.genome}"

    def stored(self) -> int | str:
        """The form kept in specs and stores: bytes as an int, IMIX as its engine text."""
        if self.genome is None:
            assert self.bytes is not None
            return self.bytes
        return self.engine_arg()

    def __str__(self) -> str:
        return f"{self.bytes} B" if self.genome is None else self.engine_arg()


def frame_bytes(size: Any) -> float | None:
    """Mean bytes per frame of a stored size (int, "imix", "imix:..."); None if it is none."""
    if isinstance(size, bool) or size is None:
        return None
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        return float(size) if math.isfinite(size) else None
    try:
        return FrameSize.parse(size).mean_bytes
    except UsageError:
        return None


def wire_gbps(pps: float | None, size: Any) -> float | None:
    """Gbit/s on the wire at `pps` frames of `size` (IMIX at its mean size), with preamble and gap."""
    mean = frame_bytes(size)
    if pps is None or mean is None:
        return None
    return round(pps * (mean + WIRE_OVERHEAD_BYTES) * 8 / 1e9, 6)


def line_rate_pps(size: float, link_bps: float = DEFAULT_LINK_BPS) -> float:
    """Frames per second a link carries at full rate: link / ((size + 20 bytes) x 8 bits)."""
    if size <= 0 or link_bps <= 0:
        raise UsageError(f"line rate of {size}-byte frames on a {link_bps} bit/s link: both must "
                         "be positive")
    return link_bps / ((size + WIRE_OVERHEAD_BYTES) * 8)
