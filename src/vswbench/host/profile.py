"""CPU profiles from `perf script`: folded stacks per core, the categories that explain
switching, top functions (pure functions; host/perf.py runs perf).

Folded stacks are the format flamegraph.pl and speedscope read: one line per distinct stack,
`comm;root;...;leaf COUNT`, kernel frames marked with the suffix `_[k]` (stackcollapse-perf.pl
--kernel). A sample's category is decided by its stack (Emmerich et al. Fig. 9/10): a leaf in a
switch daemon's user space is "daemon", in the engine's (tester, NFs) "tester"; else the frame
nearest the leaf that matches a category's function names decides (a memcpy inside the bridge
counts as a copy, the bridge's own work as switching); stacks that match nothing are "other".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from typing import Any

KERNEL_SUFFIX = "_[k]"
CATEGORIES = ("daemon", "receive", "transmit", "switching", "scheduler", "copies", "idle",
              "tester", "other")
CATEGORY_LABELS = {
    "daemon": "switch daemon user space", "receive": "NAPI/softirq receive",
    "transmit": "transmit", "switching": "bridge/OVS/BPF/route", "scheduler":
    "scheduler/context switch", "copies": "copies", "idle": "idle",
    "tester": "tester user space", "other": "other"}
# The thread names (comm, at most 15 characters) of switch daemons, whose user space is "daemon",
# are handed in (`daemons`: comm prefixes): each backend names its own (switches/catalog.py
# daemon_comms).
# the frame nearest the leaf that matches one of these decides (checked in this order per frame)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # the tester's own BPF programs (the in-kernel generator and sink, engine/): not switching
    ("tester", re.compile(r"^bpf_prog_[0-9a-f]+_vsb_(gen|sink)")),
    ("copies", re.compile(r"(memcpy|memmove|copy_user|copy_to_user|copy_from_user|"
                          r"_copy_to_iter|_copy_from_iter|copy_page|skb_copy|csum_partial_copy|"
                          r"rep_movs|clear_user|memset)")),
    ("idle", re.compile(r"^(cpuidle_|default_idle|do_idle|pv_native_safe_halt|acpi_idle|"
                        r"mwait_idle|cpu_startup_entry|default_enter_idle|arch_cpu_idle|"
                        r"native_safe_halt|poll_idle)")),
    ("switching", re.compile(r"^(br_|__br_|nbp_|fdb_|ovs_|dp_netdev|miniflow|dpcls|emc_|smc_|"
                             r"odp_|bpf_prog_|bpf_redirect|xdp_do_|__xdp_|bpf_xdp|"
                             r"dev_map_|tcf_|tc_run|mirred|ip_forward|ip_route_input|fib_|"
                             r"nf_hook|nft_|macvlan_)")),
    ("scheduler", re.compile(r"^(__switch_to|__schedule|schedule|finish_task_switch|"
                             r"pick_next_task|try_to_wake_up|wake_up_|__wake_up|context_switch|"
                             r"enqueue_task|dequeue_task|update_curr|sched_|switch_mm|"
                             r"ttwu_|yield|do_sched_yield|__x64_sys_sched_yield)")),
    ("transmit", re.compile(r"(dev_queue_xmit|dev_hard_start_xmit|veth_xmit|sch_direct_xmit|"
                            r"packet_snd|tpacket_snd|packet_sendmsg|xsk_|__sys_sendto|"
                            r"sendmsg|sendmmsg|_xmit_|xmit_one|qdisc_run|veth_xdp_xmit|"
                            r"xdp_test_run|bpf_test_run)")),
    ("receive", re.compile(r"(napi|net_rx_action|netif_receive|__netif_receive|veth_poll|"
                           r"veth_xdp_rcv|gro_|ip_rcv|ip_local_deliver|udp_rcv|udp_queue_rcv|"
                           r"__udp4_lib_rcv|packet_rcv|tpacket_rcv|handle_softirqs|"
                           r"__do_softirq|do_softirq|net_rx|process_backlog|"
                           r"recvmsg|recvmmsg|eth_type_trans|skb_release|kfree_skb|"
                           r"consume_skb|build_skb|napi_alloc)")),
)


def classify_frames(comm: str, frames: list[str], daemons: tuple[str, ...] = ()) -> str:
    """The category of one sample: frames root first, leaf last; kernel frames end in `_[k]`;
    `daemons`: the comm prefixes of switch daemons."""
    if not frames:
        return "other"
    leaf = frames[-1]
    if not leaf.endswith(KERNEL_SUFFIX) and comm.startswith(daemons):
        return "daemon"
    if not leaf.endswith(KERNEL_SUFFIX) and comm.startswith("vswbench-engin"):
        return "tester"
    for frame in reversed(frames):
        name = frame[:-len(KERNEL_SUFFIX)] if frame.endswith(KERNEL_SUFFIX) else frame
        for category, pattern in _PATTERNS:
            if pattern.search(name):
                return category
    return "other"


def classify_folded(line: str, daemons: tuple[str, ...] = ()) -> tuple[str, int]:
    """(category, count) of one folded line `comm;f1;...;leaf COUNT`."""
    stack, count = split_folded(line)
    parts = stack.split(";")
    return classify_frames(parts[0], parts[1:], daemons), count


def split_folded(line: str) -> tuple[str, int]:
    stack, _, count = line.rstrip().rpartition(" ")
    try:
        return stack, int(count)
    except ValueError:
        raise ValueError(f"not a folded-stack line (`stack COUNT`): {line[:80]!r}") from None


@dataclass
class CoreProfile:
    """One core's samples: folded stacks (stack -> samples), categories and top functions;
    first/last: the sample times perf printed (seconds), when it printed them."""
    cpu: int
    samples: int = 0
    folded: Counter[str] = field(default_factory=Counter)
    first: float | None = None
    last: float | None = None
    own: CoreProfile | None = None     # the samples of the run's own threads (fold_perf_script)

    def saw(self, t: float) -> None:
        self.first = t if self.first is None else min(self.first, t)
        self.last = t if self.last is None else max(self.last, t)

    def add(self, comm: str, frames: list[str], count: int = 1) -> None:
        self.samples += count
        self.folded[";".join([_clean(comm), *frames])] += count

    def categories(self, daemons: tuple[str, ...] = ()) -> dict[str, float]:
        """Share of this core's samples per category (every category, 0.0 if none); `daemons`:
        the comm prefixes of switch daemons."""
        counts: Counter[str] = Counter()
        for stack, n in self.folded.items():
            parts = stack.split(";")
            counts[classify_frames(parts[0], parts[1:], daemons)] += n
        total = sum(counts.values()) or 1
        return {c: round(counts[c] / total, 4) for c in CATEGORIES}

    def top_functions(self, n: int = 10, *, kernel_only: bool = False) -> list[dict[str, Any]]:
        """The leaf functions with the most samples (self time): name, kernel or not, share."""
        leaves: Counter[str] = Counter()
        for stack, count in self.folded.items():
            leaf = stack.rsplit(";", 1)[-1]
            if kernel_only and not leaf.endswith(KERNEL_SUFFIX):
                continue
            leaves[leaf] += count
        total = self.samples or 1
        return [{"function": f.removesuffix(KERNEL_SUFFIX), "kernel": f.endswith(KERNEL_SUFFIX),
                 "samples": c, "share": round(c / total, 4)} for f, c in leaves.most_common(n)]

    def top_comms(self, n: int = 8) -> list[dict[str, Any]]:
        """The threads (comm) with the most samples: on a shared machine, who else ran here."""
        comms: Counter[str] = Counter()
        for stack, count in self.folded.items():
            comms[stack.split(";", 1)[0]] += count
        total = self.samples or 1
        return [{"comm": c, "samples": k, "share": round(k / total, 4)}
                for c, k in comms.most_common(n)]

    def folded_lines(self, limit: int = 0) -> list[str]:
        """`stack COUNT` lines, most samples first; with a limit the rest is one line
        `[other stacks] COUNT` so the counts still add up."""
        items = self.folded.most_common()
        kept = items[:limit] if limit else items
        lines = [f"{s} {c}" for s, c in kept]
        rest = sum(c for _, c in items[len(kept):])
        if rest:
            lines.append(f"[other stacks] {rest}")
        return lines


def _clean(name: str) -> str:
    """A frame or comm without the characters the folded format uses (';', ' ', newline)."""
    return name.replace(";", ":").replace(" ", "_").replace("\n", "") or "[unknown]"


_HEADER = re.compile(r"^(?P<comm>.*?)\s+(?P<tid>-?\d+)(?:/\d+)?\s+\[(?P<cpu>\d+)\]"
                     r"(?:\s+(?P<time>\d+\.\d+):)?")


def fold_perf_script(text: str, own_tids: set[int] | None = None) -> dict[int, CoreProfile]:
    """Parse `perf script -F comm,tid,cpu,time,ip,sym,dso` output (a header line per sample,
    then its call chain leaf first, a blank line) into one CoreProfile per CPU; samples of the
    threads in `own_tids` also go into each core's `own` profile."""
    cores: dict[int, CoreProfile] = {}
    frames: list[str] = []
    comm, cpu, frames, when, tid = None, -1, [], None, -1

    def flush() -> None:
        if comm is not None and cpu >= 0:
            core = cores.setdefault(cpu, CoreProfile(cpu))
            stack = list(reversed(frames)) or ["[unknown]"]
            core.add(comm, stack)
            if when is not None:
                core.saw(when)
            if own_tids is not None and tid in own_tids:
                if core.own is None:
                    core.own = CoreProfile(cpu)
                core.own.add(comm, stack)

    for line in text.splitlines():
        if not line.strip():
            flush()
            comm, cpu, frames, when, tid = None, -1, [], None, -1
            continue
        if not line[0].isspace():
            flush()
            m = _HEADER.match(line)
            comm, cpu, frames = (m["comm"].strip(), int(m["cpu"]), []) if m else (None, -1, [])
            when = float(m["time"]) if m and m["time"] else None
            tid = int(m["tid"]) if m else -1
            continue
        if comm is None:
            continue
        frames.append(_frame(line))
    flush()
    return cores


def _frame(line: str) -> str:
    """`\\tffffffff81e0fafd cpuidle_enter+0x2d ([kernel.kallsyms])` -> `cpuidle_enter_[k]`."""
    parts = line.strip().split(None, 1)
    rest = parts[1] if len(parts) > 1 else "[unknown]"
    dso = ""
    if rest.endswith(")") and " (" in rest:
        rest, _, dso = rest.rpartition(" (")
        dso = dso[:-1]
    name = re.sub(r"\+0x[0-9a-f]+$", "", rest.strip()) or "[unknown]"
    if name == "[unknown]" and dso and dso != "[unknown]":
        name = f"[{dso.rsplit('/', 1)[-1]}]"
    ip = parts[0]
    kernel = (dso.startswith("[kernel") or dso.endswith(".ko") or name.startswith("bpf_prog_")
              or (len(ip) == 16 and ip.startswith("ffff")))
    return _clean(name) + (KERNEL_SUFFIX if kernel else "")


def parse_folded(lines: list[str], cpu: int = 0) -> CoreProfile:
    """A CoreProfile from folded lines (an export, or a test's recorded sample)."""
    core = CoreProfile(cpu)
    for line in lines:
        if not line.strip():
            continue
        stack, count = split_folded(line)
        core.folded[stack] += count
        core.samples += count
    return core
