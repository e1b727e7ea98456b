"""BPF objects of the redirect backends (tc-bpf, xdp): the clang build of a program
(src/vswbench/bpf/*.bpf.c), one object per egress ifindex (-DOUT_IFINDEX=N) in the run's temp dir
(ctx.temp_dir), and BpfRedirectSwitch, their common base: every port a path leaves from gets the
object that redirects to the path's egress port, attached by the subclass's attach_program().
Function l3 (switches/rules/functions.py): the objects are built with -DVSB_LPM (bpf/lpm.h) and
each program's LPM trie gets the routing table's prefixes through the bpf() syscall (lpm_map.py);
its rule updates are map updates."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from vswbench.errors import UsageError
from vswbench.host.netns import run
from vswbench.run.state import open_state
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import RuleMechanism
from vswbench.switches.bpf.lpm_map import UPDATE_VALUE
from vswbench.switches.bpf.lpm_map import LpmMap
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.iface import ifindex
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.switches.rules.functions import FunctionOptions
from vswbench.switches.rules.functions import acl_denied
from vswbench.switches.rules.functions import check_flows
from vswbench.switches.rules.functions import l3_prefixes

BPF_DIR = Path(__file__).resolve().parents[2] / "bpf"   # src/vswbench/bpf: the programs
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

    def __init__(self, switch: KernelSwitch, source_name: str, prefix: str,
                 defines: dict[str, int | str] | None = None) -> None:
        self.switch, self.source, self.prefix = switch, BPF_DIR / source_name, prefix
        self.defines = dict(defines or {})
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
                state = open_state(str(ctx.run_id))
                if state is not None:   # wherever $TMPDIR put it: clean finds it through this
                    state.add_temp_dir(str(path))
        return self._dir

    def object_for(self, out_ifindex: int) -> Path:
        if out_ifindex not in self.built:
            out = self.directory() / f"{self.switch.ctx.run_id}-{self.prefix}-{out_ifindex}.o"
            run(compile_argv(self.source, out, {"OUT_IFINDEX": out_ifindex, **self.defines}),
                timeout=120)
            self.built[out_ifindex] = out
        return self.built[out_ifindex]


class BpfRedirectSwitch(FunctionOptions, KernelSwitch):
    """Port-to-port forwarding by a BPF program built from SOURCE (objects named <run>-PREFIX-N.o)
    on each switch-side ingress end; subclasses say how a program is attached (and undone)."""

    SOURCE: str
    PREFIX: str
    functions = frozenset({"l2", "l3"})
    tools = {**KernelSwitch.tools, "clang": "clang"}
    lpm_maps: list[LpmMap]

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions(clang=True)

    def setup(self) -> None:
        lpm = self.function.name == "l3"
        self.builder = BpfBuilder(self, self.SOURCE, self.PREFIX, {"VSB_LPM": 1} if lpm else {})
        self.lpm_maps = []
        self.install_seconds = 0.0

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        fn = self.function
        check_flows(fn, self.ctx.flows)
        for src_key, dst in self.out_of(paths).items():
            src_if, dst_if = self.attachments[src_key].switch_ifname, dst.switch_ifname
            assert src_if and dst_if
            self.attach_program(src_if, self.builder.object_for(ifindex(ns, dst_if)))
            if fn.name == "l3":
                table = LpmMap(self.prog_id(src_if))
                self.register(f"LPM map fd of {src_if}", table.close)
                self.install_seconds += table.update([p.network for p in
                                                      l3_prefixes(fn.table_size)])
                self.lpm_maps.append(table)

    def rule_mechanisms(self) -> list[RuleMechanism]:
        if not getattr(self, "lpm_maps", None):
            raise UsageError(f"switch {self.name}: its rule updates are updates of the LPM map "
                             "of function l3: give --function l3 (or function = \"l3\")")
        return [MapUpdates(self.lpm_maps[0])]

    def stats(self) -> dict[str, object]:
        fn = self.function
        if fn.name == "l2":
            return {}
        return {"function": fn.name, "table_size": fn.table_size,
                "install_seconds": round(self.install_seconds, 4)}

    def prog_id(self, ifname: str) -> int:
        """The id of the program attached to switch-side end `ifname`."""
        raise NotImplementedError

    def attach_program(self, ifname: str, obj: Path) -> None:
        """Attach BPF object `obj` to switch-side end `ifname` in ctx.netns, registering its undo."""
        raise NotImplementedError


class MapUpdates(RuleMechanism):
    """n /32 entries (198.19.128.0 up, never the traffic's) in a program's LPM trie, a bpf()
    syscall each, and their deletion."""
    name = "bpf map updates"

    def __init__(self, table: LpmMap) -> None:
        self.table, self.installed = table, 0

    def install(self, n: int) -> float:
        self.installed = n
        return self.table.update([f"{a}/32" for a in acl_denied(n)], value=UPDATE_VALUE)

    def remove(self) -> float:
        seconds = self.table.delete([f"{a}/32" for a in acl_denied(self.installed)])
        self.installed = 0
        return seconds
