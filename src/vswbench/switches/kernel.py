"""KernelSwitch, the base class of the kernel switch backends (veth, bridge, router, macvlan,
tc-bpf, xdp), and their shared forwarding-placement helpers.

1. Forwarding placement: a veth has no queue of its own, so by default
   a frame crosses veth -> switch -> veth -> receiver synchronously in the *sender's* softirq and
   the switch never drops anything. In mode "napi" (the default, ctx.options["kernel_mode"]) each
   switch-side veth end gets GRO on (so veth receives through NAPI), threaded NAPI
   (/sys/class/net/IF/threaded = 1, written inside the interface's namespace), and its
   `napi/IF-<id>` kernel thread pinned to ctx.placement.switch_cpu with taskset. Where the switch
   has no veth of its own (macvlan), RPS on the receiving port moves the receive work instead.
   Mode "softirq" leaves the kernel's default. The result is recorded as a short string, e.g.
   "napi-threaded cpu1 fifo", "rps cpu1" or "sender-softirq".
   The napi threads run SCHED_FIFO at priority 50 (option napi_priority, default "fifo"), as
   PREEMPT_RT kernels run threaded interrupt and NAPI work: receive work done in softirq preempts
   every thread, and a threaded NAPI of normal priority lost that. Measured here: kdamond.0 (the
   VM's DAMON thread, woken every 0.5 s) held the CPU for 4 ms while a veth's napi thread waited
   (`perf sched timehist`, sch delay 3.9 ms), longer than veth's 256-frame ring lasts at
   200 kpps: 9 of 10 one-second trials lost frames. napi_priority=normal keeps the old way.

2. Port plumbing, one rule for all kernel backends: **the backend creates the host end, brings it
   UP and puts HostPort.ip_cidr on it**; Attachment.host_mac is filled once the host end exists.

3. Counters from `ip -s -j link show` and kernel facts (/proc/config.gz, versions).
"""
from __future__ import annotations

import gzip
import json
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vswbench.errors import CommandError, UsageError
from vswbench.host.netns import (add_address, in_netns, ip, mac_address, namespace_exists, run,
                                 run_in, set_up, wait_link_up)
from vswbench.run.registry import Registration
from vswbench.switches.base import (Attachment, ForwardPath, HostPort, PortCounters, Switch,
                                    SwitchContext)

KERNEL_MODES = ("napi", "softirq")
NAPI_PRIORITIES = ("fifo", "normal")
NAPI_FIFO_PRIORITY = 50   # PREEMPT_RT's default for threaded interrupt handlers and NAPI
SENDER_SOFTIRQ = "sender-softirq"


# ---------------------------------------------------------------- kernel facts and versions

def kernel_config(option: str, config: Path = Path("/proc/config.gz")) -> str | None:
    """'y', 'm', 'n' for CONFIG_<option>, or None when the kernel does not publish its config."""
    try:
        text = gzip.decompress(config.read_bytes()).decode(errors="replace")
    except OSError:
        return None
    return parse_kernel_config(text, option)


def parse_kernel_config(text: str, option: str) -> str:
    name = option if option.startswith("CONFIG_") else f"CONFIG_{option}"
    for line in text.splitlines():
        if line.startswith(name + "="):
            return line.split("=", 1)[1].strip()
        if line.strip() == f"# {name} is not set":
            return "n"
    return "n"


def missing_kernel_options(options: Iterable[str]) -> list[str]:
    """Options known to be absent (an unpublished config counts as present: we cannot tell)."""
    return [opt for opt in options if kernel_config(opt) not in (None, "y", "m")]


def missing_tools(tools: Iterable[str]) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def basic_availability(tools: Iterable[str], options: Iterable[str]) -> tuple[str, str] | None:
    """(reason, fix) when root, a tool or a kernel option is missing; None when all is there."""
    if os.geteuid() != 0:
        return ("needs root (creates network namespaces and links)", "run as root")
    tools_missing = missing_tools(tools)
    if tools_missing:
        pkgs = sorted({TOOL_PACKAGES.get(t, t) for t in tools_missing})
        return (f"{', '.join(tools_missing)} not found", f"apt-get install {' '.join(pkgs)}")
    opts = missing_kernel_options(options)
    if opts:
        names = ", ".join(f"CONFIG_{o}" for o in opts)
        return (f"kernel {platform.release()} lacks {names}", f"use a kernel built with {names}")
    return None


TOOL_PACKAGES = {"ip": "iproute2", "tc": "iproute2", "bridge": "iproute2", "ethtool": "ethtool",
                 "taskset": "util-linux", "clang": "clang", "tee": "coreutils"}


def tool_version(argv: list[str], pattern: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    m = re.search(pattern, proc.stdout + proc.stderr)
    return m.group(1) if m else "unknown"


def kernel_versions(clang: bool = False) -> dict[str, str]:
    out = {"kernel": platform.release(),
           "iproute2": tool_version(["ip", "-V"], r"iproute2-([\w.]+)")}
    if clang:
        out["clang"] = tool_version(["clang", "--version"], r"clang version ([\w.]+)")
    return out


# ---------------------------------------------------------------- interface helpers

def read_sys(netns: str | None, relpath: str) -> str:
    """Read /sys/class/net/<relpath> as seen inside `netns` (ip netns exec remounts /sys)."""
    return run_in(netns, ["cat", f"/sys/class/net/{relpath}"]).strip()


def write_sys(netns: str | None, relpath: str, value: str) -> None:
    """Write /sys/class/net/<relpath> inside `netns`: tee with the value on stdin, no shell."""
    argv = in_netns(netns, ["tee", f"/sys/class/net/{relpath}"])
    proc = subprocess.run(argv, input=value, capture_output=True, text=True, timeout=10)
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stderr)


def ethtool_k(netns: str | None, ifname: str, **features: bool) -> None:
    args = [x for k, on in features.items() for x in (k, "on" if on else "off")]
    run_in(netns, ["ethtool", "-K", ifname, *args])


def ifindex(netns: str | None, ifname: str) -> int:
    links = json.loads(ip("-j", "link", "show", "dev", ifname, netns=netns))
    return int(links[0]["ifindex"])


# ---------------------------------------------------------------- forwarding placement

PLACEMENT_OPTIONS = {"kernel_mode": KERNEL_MODES, "napi_priority": NAPI_PRIORITIES}  # first: default


def placement_option(options: dict[str, str], key: str) -> str:
    """The value of a placement option (its default when not given); UsageError if not allowed."""
    allowed = PLACEMENT_OPTIONS[key]
    value = options.get(key, allowed[0])
    if value not in allowed:
        raise UsageError(f"--option {key}={value}: expected one of {', '.join(allowed)}")
    return value


def kernel_mode(ctx: SwitchContext) -> str:
    return placement_option(ctx.options, "kernel_mode")


def napi_priority(ctx: SwitchContext) -> str:
    return placement_option(ctx.options, "napi_priority")


def make_fifo(pid: int) -> None:
    """SCHED_FIFO at NAPI_FIFO_PRIORITY for a napi thread (OSError when not permitted)."""
    os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(NAPI_FIFO_PRIORITY))


def napi_thread_pids(ifname: str, proc: Path = Path("/proc")) -> list[int]:
    """PIDs of the threaded-NAPI kernel threads of `ifname` (comm `napi/<ifname>-<napi id>`)."""
    prefix = f"napi/{ifname}-"
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith(prefix) and comm[len(prefix):].isdigit():
            pids.append(int(entry.name))
    return sorted(pids)


def pin(pid: int, cpu: int) -> None:
    run(["taskset", "-p", "-c", str(cpu), str(pid)])


@dataclass
class Placed:
    """What place_napi() / place_rps() achieved; several interfaces fold into one mode string."""
    modes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def mode(self) -> str:
        if not self.modes:
            return SENDER_SOFTIRQ
        distinct = sorted(set(self.modes))
        return distinct[0] if len(distinct) == 1 else "mixed: " + ", ".join(distinct)


SWITCH_CPU = -1   # place_napi(cpu=...): the placement's switch CPU


def place_napi(ctx: SwitchContext, netns: str | None, ifname: str, placed: Placed,
               *, gro: bool = True, cpu: int | None = SWITCH_CPU) -> None:
    """GRO on (veth NAPI), threaded NAPI, napi thread pinned to the switch CPU (or `cpu`; None
    leaves it unpinned) and made SCHED_FIFO (napi_priority). Failures are recorded in `placed`
    (the interface then stays on the sender's softirq, or its thread at normal priority), never
    raised."""
    if kernel_mode(ctx) != "napi":
        return
    fifo = napi_priority(ctx) == "fifo"
    if cpu == SWITCH_CPU:
        cpu = ctx.placement.switch_cpu
    try:
        if gro:
            ethtool_k(netns, ifname, gro=True)
        write_sys(netns, f"{ifname}/threaded", "1")
        pids = napi_thread_pids(ifname)
        if not pids:
            placed.notes.append(f"{ifname}: threaded NAPI set but no napi/{ifname}-* thread")
            return
        if cpu is not None:
            for pid in pids:
                pin(pid, cpu)
        mode = f"napi-threaded cpu{cpu}" if cpu is not None else "napi-threaded"
        if fifo:
            try:
                for pid in pids:
                    make_fifo(pid)
                mode += " fifo"
            except OSError as exc:
                placed.notes.append(f"{ifname}: napi thread not made SCHED_FIFO: {exc}")
        placed.modes.append(mode)
    except CommandError as exc:
        placed.notes.append(f"{ifname}: threaded NAPI not possible: {exc.stderr or exc}")


def place_rps(ctx: SwitchContext, netns: str | None, ifname: str, placed: Placed) -> None:
    """RPS: the receive work of `ifname` (frames queued with netif_rx) runs on the switch CPU."""
    cpu = ctx.placement.switch_cpu
    if kernel_mode(ctx) != "napi" or cpu is None:
        return
    try:
        write_sys(netns, f"{ifname}/queues/rx-0/rps_cpus", format(1 << cpu, "x"))
        placed.modes.append(f"rps cpu{cpu}")
    except CommandError as exc:
        placed.notes.append(f"{ifname}: RPS not possible: {exc.stderr or exc}")


# ---------------------------------------------------------------- host ends

def finish_host_end(port: HostPort, *, tx_csum: bool = True, gro: bool = False) -> str:
    """Offloads, UP, address; returns the host end's MAC. The link itself must exist already."""
    if not tx_csum:
        ethtool_k(port.netns, port.ifname, tx=False)
    if gro:
        ethtool_k(port.netns, port.ifname, gro=True)
    set_up(port.netns, port.ifname)
    if port.ip_cidr:
        add_address(port.netns, port.ifname, port.ip_cidr)
    return mac_address(port.netns, port.ifname)


def create_veth(ctx: SwitchContext, name_a: str, ns_a: str, name_b: str, ns_b: str) -> Registration:
    """A veth pair (name_a in ns_a, name_b in ns_b), registered for removal the moment it exists.

    In kernel_mode napi both ends get TSO off: a veth hands a frame to its peer's NAPI (the
    threaded, pinned receive work of place_napi) only if the sending end has no TSO (veth_xmit:
    veth_skb_is_eligible_for_gro); with TSO on, as created, the frame goes to the sender CPU's
    backlog and the pinned napi thread never runs. Measured: bridge p2p at 100 kpps, napi threads
    0 ticks and the switch CPU 98 % idle, every cycle on the tester's core."""
    ip("link", "add", name_a, "netns", ns_a, "type", "veth", "peer", "name", name_b, "netns", ns_b)

    def delete() -> None:
        if namespace_exists(ns_a):
            ip("link", "del", name_a, netns=ns_a, check=False)
        elif namespace_exists(ns_b):
            ip("link", "del", name_b, netns=ns_b, check=False)

    registration = ctx.registry.register(f"veth {ns_a}/{name_a} - {ns_b}/{name_b}", delete)
    if kernel_mode(ctx) == "napi":
        ethtool_k(ns_a, name_a, tso=False)
        ethtool_k(ns_b, name_b, tso=False)
    return registration


def switch_ifname(ctx: SwitchContext, index: int) -> str:
    return ctx.run_id.ifname(f"sw{index}")


# ---------------------------------------------------------------- counters

def counters_from_link(link: dict[str, Any], port: str | None = None) -> PortCounters:
    """PortCounters from one entry of `ip -s -j link show`."""
    stats = link.get("stats64") or link.get("stats") or {}
    rx, tx = stats.get("rx", {}), stats.get("tx", {})
    return PortCounters(port or str(link.get("ifname", "?")),
                        rx_packets=int(rx.get("packets", 0)), tx_packets=int(tx.get("packets", 0)),
                        rx_dropped=int(rx.get("dropped", 0)), tx_dropped=int(tx.get("dropped", 0)),
                        rx_errors=int(rx.get("errors", 0)), tx_errors=int(tx.get("errors", 0)))


def switch_view(host_end: PortCounters) -> PortCounters:
    """Counters of a host end (veth baseline, macvlan child) turned to the switch's point of view,
    like every other backend's: rx = frames the switch took from the host, tx = frames it gave."""
    c = host_end
    return PortCounters(c.port, rx_packets=c.tx_packets, tx_packets=c.rx_packets,
                        rx_dropped=c.tx_dropped, tx_dropped=c.rx_dropped,
                        rx_errors=c.tx_errors, tx_errors=c.rx_errors)


def read_counters(netns: str | None, ifnames: Iterable[str]) -> list[PortCounters]:
    wanted = list(ifnames)
    if not wanted:
        return []
    links = json.loads(ip("-s", "-j", "link", "show", netns=netns) or "[]")
    by_name = {link.get("ifname"): link for link in links}
    return [counters_from_link(by_name[n], n) for n in wanted if n in by_name]


def section(title: str, argv: list[str]) -> str:
    """One titled block of a config dump; a failing command shows its error instead."""
    try:
        body = run(argv).rstrip()
    except CommandError as exc:
        body = f"({exc})"
    return f"## {title}\n$ {' '.join(argv)}\n{body}\n"


# ---------------------------------------------------------------- base of the veth-port backends

class KernelSwitch(Switch):
    """Life cycle shared by bridge, router, tc-bpf and xdp: every HostPort gets a veth pair whose
    switch-side end (vsb<id>swN) lives in ctx.netns; teardown releases what this instance
    registered, newest first (idempotent); counters come from the switch-side ends."""

    options_read = frozenset(PLACEMENT_OPTIONS)
    kernel_tx_ok = True                 # in napi mode the switch side of each veth has NAPI

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        for key in PLACEMENT_OPTIONS:
            placement_option(options, key)

    @classmethod
    def kernel_tx_problem(cls, options: dict[str, str]) -> str | None:
        if options.get("kernel_mode") == "softirq":
            return ("kernel_mode=softirq: the switch side of the tester's veth has no NAPI, so "
                    "frames the kernel transmits there are dropped uncounted")
        return super().kernel_tx_problem(options)

    host_tx_csum: bool = True    # False: `ethtool -K host-end tx off` (frames leave the stack)
    host_gro: bool = False       # True: GRO on the host end (native XDP redirect needs it)

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.placed = Placed()
        self._regs: list[Registration] = []

    def track(self, reg: Registration) -> Registration:
        self._regs.append(reg)
        return reg

    def register(self, what: str, undo: Callable[[], Any]) -> Registration:
        return self.track(self.ctx.registry.register(what, undo))

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.attachments:
            raise UsageError(f"{self.name}: port {port.key} attached twice")
        swif = switch_ifname(self.ctx, len(self.attachments))
        self.track(create_veth(self.ctx, swif, self.ctx.netns, port.ifname, port.netns))
        host_mac = finish_host_end(port, tx_csum=self.host_tx_csum, gro=self.host_gro)
        set_up(self.ctx.netns, swif)
        wait_link_up(self.ctx.netns, swif)
        wait_link_up(port.netns, port.ifname)
        att = Attachment(port, swif, host_mac=host_mac,
                         switch_mac=mac_address(self.ctx.netns, swif))
        self.attachments[port.key] = att
        self.place_port(att)
        return att

    def place_port(self, att: Attachment) -> None:
        """Move the switch's receive work on this port onto the switch CPU (veth NAPI)."""
        assert att.switch_ifname is not None
        place_napi(self.ctx, self.ctx.netns, att.switch_ifname, self.placed)

    def teardown(self) -> None:
        while self._regs:
            self._regs.pop().release()
        self.attachments.clear()

    def port_counters(self) -> list[PortCounters]:
        names = [a.switch_ifname for a in self.attachments.values() if a.switch_ifname]
        return read_counters(self.ctx.netns, names)

    def forwarding_mode(self) -> str:
        return self.placed.mode()

    def placement_notes(self) -> str:
        lines = [f"forwarding mode: {self.forwarding_mode()}", *self.placed.notes]
        return "## placement\n" + "\n".join(lines) + "\n"

    def attachment(self, key: str) -> Attachment:
        try:
            return self.attachments[key]
        except KeyError:
            raise UsageError(
                f"{self.name}: path names port {key!r}, which is not attached") from None

    def out_of(self, paths: list[ForwardPath]) -> dict[str, Attachment]:
        """src key -> dst attachment; a port whose frames must go to two places is an error."""
        out: dict[str, Attachment] = {}
        for path in paths:
            dst = self.attachment(path.dst)
            self.attachment(path.src)
            if path.src in out and out[path.src] is not dst:
                raise UsageError(f"{self.name}: frames from {path.src} cannot go both to "
                                 f"{out[path.src].host.key} and {path.dst} "
                                 "(port-to-port forwarding)")
            out[path.src] = dst
        return out
