"""BPF objects of the redirect backends (tc-bpf, xdp): the clang build of a program
(src/vswbench/bpf/*.bpf.c), one object per egress ifindex (-DOUT_IFINDEX=N) in the run's temp dir
(ctx.temp_dir), and BpfRedirectSwitch, their common base: every port a path leaves from gets the
object that redirects to the path's egress port, attached by the subclass's attach_program()."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from vswbench.host.netns import run
from vswbench.switches.base import ForwardPath
from vswbench.switches.kernel import KernelSwitch, ifindex, kernel_versions

BPF_DIR = Path(__file__).resolve().parent.parent / "bpf"
BPF_INCLUDE = "/usr/include/x86_64-linux-gnu"   # asm/types.h for -target bpf (design.md)


def compile_argv(source: Path, output: Path, defines: dict[str, int | str]) -> list[str]:
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
    if not Path(BPF_INCLUDE, "asm", "types.h").is_file():
        return (f"{BPF_INCLUDE}/asm/types.h missing (kernel UAPI headers for clang -target bpf)",
                "apt-get install linux-libc-dev libbpf-dev")
    if not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        return ("/usr/include/bpf/bpf_helpers.h missing", "apt-get install libbpf-dev")
    return None


class BpfBuilder:
    """Compiles per-egress objects into the run's temp dir (or a private one, registered)."""

    def __init__(self, switch: KernelSwitch, source_name: str, prefix: str) -> None:
        self.switch, self.source, self.prefix = switch, BPF_DIR / source_name, prefix
        self.built: dict[int, Path] = {}
        self._dir: Path | None = None

    def directory(self) -> Path:
        if self._dir is None:
            ctx = self.switch.ctx
            if ctx.temp_dir:
                self._dir = Path(ctx.temp_dir)
            else:
                # /tmp/vsb-<run id>-bpf-*: the name `vswbench clean` looks for (testbed/leftovers.py)
                self._dir = Path(tempfile.mkdtemp(prefix=f"vsb-{ctx.run_id}-bpf-"))
                path = self._dir
                self.switch.register(f"temp dir {path}",
                                     lambda: shutil.rmtree(path, ignore_errors=True))
        return self._dir

    def object_for(self, out_ifindex: int) -> Path:
        if out_ifindex not in self.built:
            out = self.directory() / f"{self.switch.ctx.run_id}-{self.prefix}-{out_ifindex}.o"
            run(compile_argv(self.source, out, {"OUT_IFINDEX": out_ifindex}), timeout=120)
            self.built[out_ifindex] = out
        return self.built[out_ifindex]


class BpfRedirectSwitch(KernelSwitch):
    """Port-to-port forwarding by a BPF program built from SOURCE (objects named <run>-PREFIX-N.o)
    on each switch-side ingress end; subclasses say how a program is attached (and undone)."""

    SOURCE: str
    PREFIX: str

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions(clang=True)

    def setup(self) -> None:
        self.builder = BpfBuilder(self, self.SOURCE, self.PREFIX)

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        for src_key, dst in self.out_of(paths).items():
            src_if, dst_if = self.attachments[src_key].switch_ifname, dst.switch_ifname
            assert src_if and dst_if
            self.attach_program(src_if, self.builder.object_for(ifindex(ns, dst_if)))

    def attach_program(self, ifname: str, obj: Path) -> None:
        """Attach BPF object `obj` to switch-side end `ifname` in ctx.netns, registering its undo."""
        raise NotImplementedError
