"""`testpmd`: DPDK testpmd in io forwarding mode as the switch (the "DPDK basic forwarding" of Ara
et al.): one polling lcore on the switch CPU moves frames between port pairs, untouched.

Every host port is a DPDK link (dpdk/ports.py): by default vhost-user (testpmd's net_vhost server,
the engine's virtio_user), or memif with `--option dpdk_port=memif`. testpmd forwards port 2k to
2k+1 and back (--port-topology=paired), so its vdevs are given in the order of the scenario's
links: p2p (tester.p0, tester.p1), pvp (tester.p0, nf1.in) (nf1.out, tester.p1), pairs:N (sN, rN).

testpmd runs interactively with a pipe on its stdin: `show port stats all` gives the per-port
counters; `show fwd stats all` with --record-core-cycles the cycles its lcore spent on bursts that
carried frames (the useful part of a core that polls at 100 % whatever the load).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from vswbench.errors import VswbenchError
from vswbench.host.netns import in_netns
from vswbench.run.state import open_state
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import BusyCycles
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.base import link_pairs
from vswbench.switches.dpdk.interactive import InteractiveProcess
from vswbench.switches.dpdk.ports import DPDK_PORT_HELP
from vswbench.switches.dpdk.ports import DPDK_THREADS
from vswbench.switches.dpdk.ports import DpdkLink
from vswbench.switches.dpdk.ports import dpdk_availability
from vswbench.switches.dpdk.ports import eal_common
from vswbench.switches.dpdk.ports import parse_transport
from vswbench.switches.dpdk.ports import port_mac
from vswbench.switches.dpdk.ports import remove_runtime_dir

TESTPMD = "dpdk-testpmd"
FIX = "apt-get install dpdk-dev (it ships dpdk-testpmd and the PMDs), or run ./setup.sh"
PROMPT = "testpmd> "
MEMORY_MB = 512
START_TIMEOUT = 30.0

_NIC_RE = re.compile(
    r"NIC statistics for port (\d+)\s*#+\s*\n\s*RX-packets:\s*(\d+)\s+RX-missed:\s*(\d+).*?\n"
    r"\s*RX-errors:\s*(\d+)\s*\n\s*RX-nombuf:\s*(\d+)\s*\n\s*TX-packets:\s*(\d+)\s+"
    r"TX-errors:\s*(\d+)", re.S)
_FWD_RE = re.compile(r"Forward statistics for port (\d+)\s*-+\s*\n\s*RX-packets:\s*(\d+)\s+"
                     r"RX-dropped:\s*(\d+).*?\n\s*TX-packets:\s*(\d+)\s+TX-dropped:\s*(\d+)", re.S)
_CYCLES_RE = re.compile(r"(?:busy|total) cycles=(\d+) / total \S+ packets=(\d+)")


def parse_port_stats(text: str) -> dict[int, tuple[int, int, int, int, int]]:
    """`show port stats all` -> {port: (rx, rx_missed, rx_errors + rx_nombuf, tx, tx_errors)}."""
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3)),
                              int(m.group(4)) + int(m.group(5)), int(m.group(6)), int(m.group(7)))
            for m in _NIC_RE.finditer(text)}


def parse_fwd_stats(text: str) -> tuple[dict[int, tuple[int, int]], BusyCycles | None]:
    """`show fwd stats all` -> ({port: (rx_dropped, tx_dropped)}, busy cycles and packets)."""
    drops = {int(m.group(1)): (int(m.group(3)), int(m.group(5))) for m in _FWD_RE.finditer(text)}
    m = _CYCLES_RE.search(text)
    if m:
        return drops, BusyCycles(int(m.group(1)), int(m.group(2)))
    # no frame forwarded yet: testpmd prints no cycles line
    return drops, (BusyCycles(0, 0) if "Accumulated forward statistics" in text else None)


def _bare_prompt(lines: list[str]) -> bool:
    return any(line.strip() == PROMPT.strip() for line in lines)


class Testpmd(Switch):
    name = "testpmd"
    link_roles = {"tp": "its DPDK file prefix (dpdk/testpmd.py)"}
    idle_polls = True                   # testpmd's forwarding lcore polls its ports
    options_read = DPDK_PORT_HELP
    tools = {TESTPMD: "dpdk-dev"}
    daemons = ("dpdk-testpmd", "testpmd", *DPDK_THREADS)
    description = "DPDK testpmd io forwarding between port pairs (vhost-user or memif ports)"
    port_kind = "dpdk"
    ingress_ring_frames = 1024   # memif rsize 2^10, virtio_user queue_size 1024 (dpdk/ports.py)

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.transport = parse_transport(ctx.options, "vhost")
        self.socket_dir = Path(ctx.temp_dir or "/tmp") / "testpmd"
        self.links: dict[str, DpdkLink] = {}
        self.port_of: dict[str, int] = {}       # host port key -> testpmd port number
        self.prefix = ctx.run_id.name("tp")
        self.proc: InteractiveProcess | None = None
        self.argv: list[str] = []

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        parse_transport(options, "vhost")

    @classmethod
    def availability(cls) -> Availability:
        return dpdk_availability(TESTPMD, FIX)

    @classmethod
    def versions(cls) -> dict[str, str]:
        try:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "dpdk-dev"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        return {"dpdk-testpmd": out} if out else {}

    def setup(self) -> None:
        self.socket_dir.mkdir(parents=True, exist_ok=True)

    def attach(self, port: HostPort) -> Attachment:
        index = len(self.attachments)
        link = DpdkLink(port.key, index, str(self.socket_dir / f"p{index}.sock"),
                        port_mac(index, self.ctx.run_id), self.transport)
        self.links[port.key] = link
        att = Attachment(port, None, host_mac=link.mac, dpdk_port=link.engine_vdev)
        self.attachments[port.key] = att
        return att

    def _cpu(self) -> int:
        cpu = self.ctx.placement.switch_cpu
        return cpu if cpu is not None else 0

    def forward(self, paths: list[ForwardPath]) -> None:
        order = [key for pair in link_pairs(paths, "testpmd's paired ports") for key in pair]
        missing = set(self.links) - set(order)
        if missing:
            raise VswbenchError(f"testpmd: ports {', '.join(sorted(missing))} are on no path")
        vdevs: list[str] = []
        for number, key in enumerate(order):
            self.port_of[key] = number
            vdevs += ["--vdev", self.links[key].switch_vdev(number)]
        cpu = self._cpu()
        # The main lcore only reads commands; the forwarding lcore polls. Both on the switch CPU.
        # stdbuf: testpmd prints with stdio, fully buffered into a pipe; its prompt and echo are
        # written directly. Line buffering keeps a command's output ahead of the next prompt.
        self.argv = in_netns(self.ctx.netns, [
            "stdbuf", "-oL", TESTPMD, "--lcores", f"0@{cpu},1@{cpu}", "--main-lcore", "0",
            *eal_common(self.prefix, MEMORY_MB), "--log-level=4", *vdevs, "--",
            "-i", "--forward-mode=io", "--port-topology=paired", "--nb-cores=1",
            "--total-num-mbufs=16384", "--record-core-cycles", "--auto-start",
            "--disable-link-check"])
        self.ctx.registry.register(f"DPDK runtime dir of {self.prefix}",
                                   lambda: remove_runtime_dir(self.prefix))
        self.proc = InteractiveProcess(self.argv, "dpdk-testpmd", self.ctx.registry,
                                       open_state(str(self.ctx.run_id)))
        # The prompt ends no line: an empty line sent now is echoed behind it once testpmd reads
        # commands, i.e. once its ports are configured and forwarding has started.
        self.proc.command("", _bare_prompt, timeout=START_TIMEOUT)

    def _query(self, command: str) -> str:
        """The output of one command. An empty line follows it: its bare prompt, echoed once the
        command's output is complete, marks the end."""
        if self.proc is None:
            raise VswbenchError("testpmd: forward() has not run")

        return "\n".join(self.proc.command(command + "\n", _bare_prompt))

    def teardown(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
        remove_runtime_dir(self.prefix)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def daemon_pids(self) -> dict[str, int]:
        return {"testpmd": self.proc.pid} if self.proc is not None and self.proc.running() else {}

    # -- inspection ------------------------------------------------------------------------------
    def config_dump(self) -> str:
        ports = "\n".join(f"port {n}: {key} <- {self.links[key].switch_vdev(n)}"
                          for key, n in sorted(self.port_of.items(), key=lambda kv: kv[1]))
        return f"== dpdk-testpmd\n{' '.join(self.argv)}\n== ports (paired 0-1, 2-3, ...)\n{ports}\n"

    def port_counters(self) -> list[PortCounters]:
        return self.sample()[0]

    def sample(self) -> tuple[list[PortCounters], BusyCycles | None]:
        """One `show port stats all` and one `show fwd stats all` for counters and cycles."""
        stats = parse_port_stats(self._query("show port stats all"))
        drops, busy = parse_fwd_stats(self._query("show fwd stats all"))
        counters = []
        for key, n in sorted(self.port_of.items(), key=lambda kv: kv[1]):
            if n not in stats:
                raise VswbenchError(f"testpmd: no statistics for port {n} ({key})")
            rx, missed, rx_err, tx, tx_err = stats[n]
            rx_drop, tx_drop = drops.get(n, (0, 0))
            counters.append(PortCounters(f"port{n}:{key}", rx, tx, missed + rx_drop, tx_drop,
                                         rx_err, tx_err))
        return counters, busy

    def busy_cycles(self) -> BusyCycles | None:
        _, busy = parse_fwd_stats(self._query("show fwd stats all"))
        return busy

    def tester_cpu_free(self) -> bool:
        return True         # its poll loop on its own core; the tester's core runs the tester only

    def forwarding_mode(self) -> str:
        return f"testpmd io fwd, lcore on cpu{self._cpu()} ({self.transport} ports)"


__all__ = ["Testpmd", "parse_fwd_stats", "parse_port_stats"]
