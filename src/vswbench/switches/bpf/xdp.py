"""`xdp`: native XDP on every switch-side veth end, bpf_redirect() to the egress ifindex of the path
(src/vswbench/bpf/xdp_redirect.bpf.c, one object per egress ifindex built with -DOUT_IFINDEX=N into
the run's temp dir), attached with `ip link set dev IF xdpdrv obj FILE sec xdp`.

Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it. Pitfalls handled (design.md):
  - a frame XDP-redirected into a veth is dropped unless the receiving peer (here the host end of
    the egress veth) has GRO on or an XDP program: the host ends get GRO on;
  - redirected frames skip the stack's checksum completion: TX checksum offload is off on the host
    ends.
Placement: an XDP program already makes veth receive through NAPI; threaded NAPI pinned to the
switch CPU in kernel_mode=napi. Every switch-side end gets a program (ports that no path leaves
from get none, and frames arriving there go up the switch namespace's stack and die).
"""
from __future__ import annotations

from pathlib import Path

from vswbench.engine.probe import probe
from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine
from vswbench.errors import VswbenchError
from vswbench.host.netns import ip
from vswbench.host.netns import ip_json
from vswbench.host.netns import namespace_exists
from vswbench.switches.base import Availability
from vswbench.switches.bpf.redirect import BpfRedirectSwitch
from vswbench.switches.bpf.redirect import bpf_missing
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.counters import section


def native_xdp_veth() -> tuple[str, str] | None:
    """(reason, fix) when the engine's probe says native XDP cannot attach to a veth; None when it
    can or when there is no engine to ask."""
    try:
        raw = probe(find_engine(), timeout=20).raw
    except (EngineNotFound, VswbenchError, OSError):
        return None
    kernel = raw.get("kernel") or {}
    if kernel.get("native_xdp_veth") is False:
        why = kernel.get("native_xdp_veth_reason") or "unknown reason"
        return (f"kernel cannot attach native XDP to veth: {why}",
                "use a kernel with veth native XDP (4.19+, CONFIG_BPF_SYSCALL, CONFIG_VETH)")
    return None


class XdpSwitch(BpfRedirectSwitch):
    name = "xdp"
    description = "native XDP bpf_redirect port to port on veth"
    host_tx_csum = False
    host_gro = True

    SOURCE = "xdp_redirect.bpf.c"
    PREFIX = "xdp"

    jumbo_refused = ("its XDP program has no frags support, and veth refuses such a program "
                     "above an MTU of about 3.5 KiB (one page): frames up to 1518 B only; use "
                     "tc-bpf or bridge for larger frames")

    @classmethod
    def availability(cls) -> Availability:
        missing = (basic_availability(cls.tools,
                                      ["VETH", "BPF_SYSCALL", "BPF_JIT"])
                   or bpf_missing(cls.SOURCE) or native_xdp_veth())
        return Availability(False, *missing) if missing else Availability(True)

    def attach_program(self, ifname: str, obj: Path) -> None:
        ns = self.ctx.netns
        ip("link", "set", "dev", ifname, "xdpdrv", "obj", str(obj), "sec", "xdp", netns=ns)

        def detach(dev: str = ifname) -> None:
            if namespace_exists(ns):
                ip("link", "set", "dev", dev, "xdpdrv", "off", netns=ns, check=False)

        self.register(f"xdp {ns}/{ifname}", detach)

    def prog_id(self, ifname: str) -> int:
        links = ip_json("link", "show", "dev", ifname, netns=self.ctx.netns)
        prog = ((links[0].get("xdp") or {}).get("prog") or {}) if links else {}
        if "id" not in prog:
            raise VswbenchError(f"{self.name}: no XDP program on {ifname}")
        return int(prog["id"])

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section(f"{att.host.key}: {att.switch_ifname}",
                         ["ip", "-n", ns, "-d", "link", "show", "dev", str(att.switch_ifname)])
                 for att in self.attachments.values()]
        return "\n".join([*parts, self.placement_notes()])
