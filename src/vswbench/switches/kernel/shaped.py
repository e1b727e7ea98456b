"""`shaped`: a calibration device under test with a known answer. Port-to-port forwarding by tc
(clsact ingress, a u32 match-all filter, `mirred egress redirect`) into a token-bucket shaper (tbf)
on every egress port, set to `shape_pps` packets per second for frames of `shape_frame_size` bytes
(FCS included, so the shaper's byte rate is pps x (size - 4)). Below the shaped rate nothing is
lost; above it the queue overflows. A search that does not find `shape_pps` is wrong.

    vswbench search --switch shaped --shape-pps 100k --size 64     (or --option shape_pps=100000)

The bucket holds SHAPER_BURST_S of traffic and the queue SHAPER_QUEUE_S: a trial of T seconds at a
rate r > R loses frames once (r - R) x T exceeds both, so a 1 s trial resolves R to about 0.6 %.
The queue absorbs the host's stalls (a delayed shaper timer, a tester catching up in one burst):
with a 0.5 ms queue, 1 s trials at 29.7 kpps into a 30 kpps shaper (1518 B) lost 2-398 frames in
15 of 20 trials, every one dropped at the shaper, and a fast search once found no NDR (CI); with
2 ms, none of 12 lost. It must not be longer: a queued frame stays charged to the sender's socket
across veth, so with 5 ms (150 frames of 1518 B) the socket filled first, the sender was pushed
back into its own ring instead of losing, and a search found 30,995 pps (+3.3 %).
Placement: kernel_mode softirq by default (unlike the other kernel backends): frames reach the
shaper one by one in the sender's softirq; threaded NAPI would hand them over in bursts larger
than the bucket. The shaper's own timer runs wherever the kernel fires it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from vswbench.errors import UsageError
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import PortCounters
from vswbench.switches.kernel.availability import TC
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME

SHAPER_BURST_S = 0.0005
SHAPER_QUEUE_S = 0.002   # >= 0.5 ms of bucket + a few ms of host stall; see above
MAX_SHAPE_PPS = 100e6


@dataclass(frozen=True)
class Shaper:
    pps: float
    frame_size: int

    @property
    def bytes_per_packet(self) -> int:
        return self.frame_size - 4   # the FCS never reaches the qdisc

    @property
    def rate_bits(self) -> int:
        return round(self.pps * self.bytes_per_packet * 8)

    @property
    def burst_bytes(self) -> int:
        return max(2 * self.bytes_per_packet, round(self.pps * SHAPER_BURST_S) * self.bytes_per_packet)

    @property
    def limit_bytes(self) -> int:
        return max(4 * self.bytes_per_packet, round(self.pps * SHAPER_QUEUE_S) * self.bytes_per_packet)

    def tbf_args(self) -> list[str]:
        return ["tbf", "rate", f"{self.rate_bits}bit", "burst", str(self.burst_bytes),
                "limit", str(self.limit_bytes)]


def shaper_from_options(options: Mapping[str, str]) -> Shaper:
    raw = options.get("shape_pps")
    if raw is None:
        raise UsageError("switch shaped needs a rate: --shape-pps N (packets/s, e.g. 100k)")
    from vswbench.units import ascii_number
    from vswbench.units import parse_rate

    pps = parse_rate(raw)
    if pps > MAX_SHAPE_PPS:
        raise UsageError(f"--shape-pps {raw}: at most {MAX_SHAPE_PPS:.0f} packets/s")
    try:
        size = int(ascii_number(str(options.get("shape_frame_size", "64"))))
    except ValueError:
        raise UsageError("shape_frame_size: expected a frame size in bytes, e.g. 64") from None
    if not MIN_FRAME <= size <= MAX_FRAME:
        raise UsageError(f"shape_frame_size {size}: frame sizes are {MIN_FRAME}..{MAX_FRAME} bytes")
    return Shaper(pps, size)


def qdisc_drops(netns: str, ifname: str) -> int:
    """Frames the root qdisc of `ifname` dropped (0 when it has none)."""
    out = run(["tc", "-n", netns, "-s", "-j", "qdisc", "show", "dev", ifname, "root"], check=False)
    try:
        return sum(int(q.get("drops", 0)) for q in json.loads(out or "[]"))
    except (ValueError, AttributeError):
        return 0


class ShapedSwitch(KernelSwitch):
    options_read = {**KernelSwitch.options_read,
                    "shape_pps": "shaped: the shaper's rate in packets/s",
                    "shape_frame_size": ("shaped: the frame size the shaper's byte rate is "
                                         "computed for")}
    tools = {**KernelSwitch.tools, **TC}
    # kernel_mode softirq by default (see above): the tester's veth peer has no NAPI, and every
    # frame the in-kernel generator sent was lost uncounted (measured); it keeps afpacket
    kernel_tx_ok = False
    spreads_cores = False   # one qdisc, softirq by default: more switch cores would sit idle
    name = "shaped"
    description = "calibration DUT: tc mirred port to port into a tbf shaper at --shape-pps"
    calibration = True

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        super().check_options(options)
        if "shape_pps" in options or "shape_frame_size" in options:
            shaper_from_options({"shape_pps": "1", **options})   # finite and within bounds

    @classmethod
    def check_trial_options(cls, options: Mapping[str, str]) -> None:
        shaper_from_options(options)

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools,
                                     ["VETH", "NET_SCH_INGRESS", "NET_CLS_U32", "NET_ACT_MIRRED",
                                      "NET_SCH_TBF"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    def setup(self) -> None:
        # The answer must be exact: frames reach the shaper from the sender's softirq, one by
        # one. Threaded NAPI (kernel_mode napi, TSO off) hands them over in polls of up to 64,
        # bursts beyond the 0.5 ms bucket: a 60 kpps shaper then passed only 41 kpps lossless.
        self.ctx.options.setdefault("kernel_mode", "softirq")
        self.shaper = shaper_from_options(self.ctx.options)

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        tc = ["tc", "-n", ns]
        shaped: set[str] = set()
        for src_key, dst in self.out_of(paths).items():
            src_if, dst_if = self.attachments[src_key].switch_ifname, dst.switch_ifname
            assert src_if and dst_if
            run([*tc, "qdisc", "replace", "dev", src_if, "clsact"])
            self.register(f"clsact {ns}/{src_if}", self._deleter(src_if, "clsact"))
            run([*tc, "filter", "replace", "dev", src_if, "ingress", "prio", "1", "handle", "800::1",
                 "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
                 "dev", dst_if])
            if dst_if not in shaped:
                run([*tc, "qdisc", "replace", "dev", dst_if, "root", *self.shaper.tbf_args()])
                self.register(f"tbf {ns}/{dst_if}", self._deleter(dst_if, "root"))
                shaped.add(dst_if)

    def _deleter(self, ifname: str, where: str):  # type: ignore[no-untyped-def]
        ns = self.ctx.netns

        def delete() -> None:
            if namespace_exists(ns):
                run(["tc", "-n", ns, "qdisc", "del", "dev", ifname, where], check=False)
        return delete

    def port_counters(self) -> list[PortCounters]:
        """Interface counters plus the shaper's drops (a qdisc drop is not an interface drop)."""
        counters = super().port_counters()
        for c in counters:
            c.tx_dropped += qdisc_drops(self.ctx.netns, c.port)
        return counters

    def forwarding_mode(self) -> str:
        s = self.shaper
        return f"{super().forwarding_mode()}; tbf {s.pps:.0f} pps at {s.frame_size} B"

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section("links", ["ip", "-n", ns, "link", "show"])]
        for att in self.attachments.values():
            assert att.switch_ifname
            parts.append(section(f"{att.host.key}: qdiscs and filters on {att.switch_ifname}",
                                 ["tc", "-n", ns, "-s", "qdisc", "show", "dev", att.switch_ifname]))
            parts.append(section(f"{att.host.key}: ingress filters",
                                 ["tc", "-n", ns, "filter", "show", "dev", att.switch_ifname,
                                  "ingress"]))
        return "\n".join([*parts, self.placement_notes()])
