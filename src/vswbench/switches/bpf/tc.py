"""`tc-bpf`: clsact on every switch-side veth end and a cls_bpf program (direct action) that
bpf_redirect()s each frame to the egress interface of its path. No bridge, no maps: the program
(src/vswbench/bpf/tc_redirect.bpf.c) is compiled with clang at forward() time, one object per egress
ifindex (-DOUT_IFINDEX=N), into the run's temp dir (ctx.temp_dir), and loaded with
`tc filter add dev IF ingress bpf da obj FILE sec tc`.

Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it. TX checksum offload is turned off on
the host ends (frames redirected out of the stack otherwise reach UDP receivers with bad
checksums). Placement: GRO + threaded NAPI on the switch-side ends, thread pinned to the
switch CPU (kernel_mode=napi).
"""
from __future__ import annotations

import json
from pathlib import Path

from vswbench.errors import VswbenchError
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.switches.base import Availability
from vswbench.switches.bpf.redirect import BPF_DIR
from vswbench.switches.bpf.redirect import BpfRedirectSwitch
from vswbench.switches.bpf.redirect import bpf_missing
from vswbench.switches.bpf.redirect import compile_argv
from vswbench.switches.kernel.availability import TC
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.counters import section

__all__ = ["BPF_DIR", "TcBpfSwitch", "compile_argv"]   # BPF_DIR, compile_argv: moved to bpfobj


class TcBpfSwitch(BpfRedirectSwitch):
    name = "tc-bpf"
    description = "clsact + cls_bpf bpf_redirect port to port"
    host_tx_csum = False
    tools = {**BpfRedirectSwitch.tools, **TC}

    SOURCE = "tc_redirect.bpf.c"
    PREFIX = "tc"

    @classmethod
    def availability(cls) -> Availability:
        missing = (basic_availability(cls.tools,
                                      ["VETH", "NET_SCH_INGRESS", "NET_CLS_BPF", "NET_CLS_ACT",
                                       "BPF_SYSCALL"])
                   or bpf_missing(cls.SOURCE))
        return Availability(False, *missing) if missing else Availability(True)

    def attach_program(self, ifname: str, obj: Path) -> None:
        ns = self.ctx.netns
        tc = ["tc", "-n", ns]
        run([*tc, "qdisc", "replace", "dev", ifname, "clsact"])

        def delete(dev: str = ifname) -> None:
            if namespace_exists(ns):
                run([*tc, "qdisc", "del", "dev", dev, "clsact"], check=False)

        self.register(f"clsact {ns}/{ifname}", delete)
        run([*tc, "filter", "replace", "dev", ifname, "ingress", "prio", "1", "handle", "1",
             "bpf", "da", "obj", str(obj), "sec", "tc"])

    def prog_id(self, ifname: str) -> int:
        filters = json.loads(run(["tc", "-n", self.ctx.netns, "-j", "filter", "show", "dev",
                                  ifname, "ingress"]) or "[]")
        for f in filters:
            prog = (f.get("options") or {}).get("prog") or {}
            if "id" in prog:
                return int(prog["id"])
        raise VswbenchError(f"{self.name}: no BPF program on {ifname}'s ingress")

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section("links", ["ip", "-n", ns, "link", "show"])]
        for att in self.attachments.values():
            assert att.switch_ifname
            parts.append(section(f"{att.host.key}: tc filters on {att.switch_ifname}",
                                 ["tc", "-n", ns, "-s", "filter", "show", "dev", att.switch_ifname,
                                  "ingress"]))
        return "\n".join([*parts, self.placement_notes()])
