"""`tc-bpf`: clsact on every switch-side veth end and a cls_bpf program (direct action) that
bpf_redirect()s each frame to the egress interface of its path. No bridge, no maps: the program
(src/vswbench/bpf/tc_redirect.bpf.c) is compiled with clang at forward() time, one object per egress
ifindex (-DOUT_IFINDEX=N), into the run's temp dir (ctx.temp_dir), and loaded with
`tc filter add dev IF ingress bpf da obj FILE sec tc`.

Port plumbing follows the rule of all kernel backends (see switches/napi.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it. TX checksum offload is turned off on
the host ends (design.md: frames redirected out of the stack otherwise reach UDP receivers with
bad checksums). Placement: GRO + threaded NAPI on the switch-side ends, thread pinned to the
switch CPU (kernel_mode=napi).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path as FsPath

from vswbench.netns import namespace_exists, run
from vswbench.switches import register
from vswbench.switches.base import Availability, Path
from vswbench.switches.napi import (KernelSwitch, basic_availability, ifindex, kernel_versions,
                                    section)

BPF_DIR = FsPath(__file__).resolve().parent.parent / "bpf"
BPF_INCLUDE = "/usr/include/x86_64-linux-gnu"   # asm/types.h for -target bpf (design.md)


def compile_argv(source: FsPath, output: FsPath, defines: dict[str, int | str]) -> list[str]:
    """The clang command line that builds one BPF object."""
    return ["clang", "-O2", "-g", "-Wall", "-target", "bpf", f"-I{BPF_INCLUDE}",
            *(f"-D{k}={v}" for k, v in sorted(defines.items())), "-c", str(source),
            "-o", str(output)]


def bpf_missing(source_name: str) -> tuple[str, str] | None:
    """(reason, fix) when the BPF program cannot be built here."""
    if shutil.which("clang") is None:
        return ("clang not found (needed to build the BPF program)", "apt-get install clang")
    if not (BPF_DIR / source_name).is_file():
        return (f"BPF source {BPF_DIR / source_name} missing", "reinstall vswbench from the repo")
    if not FsPath(BPF_INCLUDE, "asm", "types.h").is_file():
        return (f"{BPF_INCLUDE}/asm/types.h missing (kernel UAPI headers for clang -target bpf)",
                "apt-get install linux-libc-dev libbpf-dev")
    if not FsPath("/usr/include/bpf/bpf_helpers.h").is_file():
        return ("/usr/include/bpf/bpf_helpers.h missing", "apt-get install libbpf-dev")
    return None


class BpfBuilder:
    """Compiles per-egress objects into the run's temp dir (or a private one, registered)."""

    def __init__(self, switch: KernelSwitch, source_name: str, prefix: str) -> None:
        self.switch, self.source, self.prefix = switch, BPF_DIR / source_name, prefix
        self.built: dict[int, FsPath] = {}
        self._dir: FsPath | None = None

    def directory(self) -> FsPath:
        if self._dir is None:
            ctx = self.switch.ctx
            if ctx.temp_dir:
                self._dir = FsPath(ctx.temp_dir)
            else:
                self._dir = FsPath(tempfile.mkdtemp(prefix=ctx.run_id.name("-bpf-")))
                path = self._dir
                self.switch.register(f"temp dir {path}",
                                     lambda: shutil.rmtree(path, ignore_errors=True))
        return self._dir

    def object_for(self, out_ifindex: int) -> FsPath:
        if out_ifindex not in self.built:
            out = self.directory() / f"{self.switch.ctx.run_id}-{self.prefix}-{out_ifindex}.o"
            run(compile_argv(self.source, out, {"OUT_IFINDEX": out_ifindex}), timeout=120)
            self.built[out_ifindex] = out
        return self.built[out_ifindex]


@register
class TcBpfSwitch(KernelSwitch):
    name = "tc-bpf"
    description = "clsact + cls_bpf bpf_redirect port to port"
    host_tx_csum = False

    SOURCE = "tc_redirect.bpf.c"

    @classmethod
    def availability(cls) -> Availability:
        missing = (basic_availability(["ip", "tc", "ethtool", "taskset"],
                                      ["VETH", "NET_SCH_INGRESS", "NET_CLS_BPF", "NET_CLS_ACT",
                                       "BPF_SYSCALL"])
                   or bpf_missing(cls.SOURCE))
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions(clang=True)

    def setup(self) -> None:
        self.builder = BpfBuilder(self, self.SOURCE, "tc")

    def forward(self, paths: list[Path]) -> None:
        ns = self.ctx.netns
        for src_key, dst in self.out_of(paths).items():
            src_if, dst_if = self.attachments[src_key].switch_ifname, dst.switch_ifname
            assert src_if and dst_if
            obj = self.builder.object_for(ifindex(ns, dst_if))
            tc = ["tc", "-n", ns]
            run([*tc, "qdisc", "replace", "dev", src_if, "clsact"])

            def delete(dev: str = src_if) -> None:
                if namespace_exists(ns):
                    run([*tc, "qdisc", "del", "dev", dev, "clsact"], check=False)

            self.register(f"clsact {ns}/{src_if}", delete)
            run([*tc, "filter", "replace", "dev", src_if, "ingress", "prio", "1", "handle", "1",
                 "bpf", "da", "obj", str(obj), "sec", "tc"])

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section("links", ["ip", "-n", ns, "link", "show"])]
        for att in self.attachments.values():
            assert att.switch_ifname
            parts.append(section(f"{att.host.key}: tc filters on {att.switch_ifname}",
                                 ["tc", "-n", ns, "-s", "filter", "show", "dev", att.switch_ifname,
                                  "ingress"]))
        return "\n".join([*parts, self.placement_notes()])
