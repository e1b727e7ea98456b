"""The perf profile pieces: perf-script folding, the category classifier (on folded stacks
recorded here: a bridge at 200 kpps, `vswbench trial --switch bridge --rate 200k --profile`),
top functions and the summary record."""

from __future__ import annotations

from pathlib import Path

import pytest

from vswbench.host.perf import summarize
from vswbench.host.profile import CATEGORIES
from vswbench.host.profile import classify_folded
from vswbench.host.profile import classify_frames
from vswbench.host.profile import fold_perf_script
from vswbench.host.profile import parse_folded
from vswbench.host.profile import split_folded
from vswbench.switches.catalog import daemon_comms

DATA = Path(__file__).parent.parent / "data" / "profile"
DAEMONS = daemon_comms()   # the backends' daemon threads (ovs-vswitchd, pmd, ...)


def folded(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def test_classifier_on_recorded_bridge_stacks() -> None:
    core = parse_folded(folded("bridge-200k-cpu1.folded"), cpu=1)
    shares = core.categories()
    assert set(shares) == set(CATEGORIES)
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.01)
    # the bridge's NAPI thread core: receive and the bridge's own functions show up
    assert shares["receive"] > 0.05 and shares["switching"] > 0.05
    by_line = {line: classify_folded(line)[0] for line in folded("bridge-200k-cpu1.folded")}
    assert any(cat == "switching" and ";br_" in line for line, cat in by_line.items())


def test_classifier_rules_on_recorded_frames() -> None:
    k = "_[k]"
    idle = ["common_startup_64" + k, "do_idle" + k, "default_idle" + k,
            "pv_native_safe_halt" + k]
    assert classify_frames("swapper", idle) == "idle"
    # NAPI work in the idle task's interrupt exit is receive, not idle
    assert classify_frames("swapper", [*idle, "asm_sysvec" + k, "handle_softirqs" + k,
                                       "net_rx_action" + k, "__napi_poll" + k,
                                       "veth_poll" + k]) == "receive"
    bridge = ["ret_from_fork" + k, "napi_threaded_poll" + k, "__netif_receive_skb" + k,
              "br_handle_frame" + k, "br_nf_pre_routing" + k]
    assert classify_frames("napi/vsb1", bridge) == "switching"
    # a copy inside the bridge is a copy (Emmerich Fig. 10)
    assert classify_frames("napi/vsb1", [*bridge, "skb_copy_bits" + k]) == "copies"
    assert classify_frames("napi/vsb1", [*bridge, "dev_queue_xmit" + k, "veth_xmit" + k]) \
        == "transmit"
    assert classify_frames("ovs-vswitchd", ["main", "dp_netdev_input"], DAEMONS) == "daemon"
    assert classify_frames("pmd-c01/id:3", ["pmd_thread_main", "miniflow_extract"], DAEMONS) \
        == "daemon"
    assert classify_frames("ovs-vswitchd", ["main", "poll" , "do_syscall_64" + k,
                                            "__schedule" + k, "__switch_to" + k],
                           DAEMONS) == "scheduler"
    assert classify_frames("vswbench-engine", ["main", "send_phase"]) == "tester"
    # the in-kernel generator's program (xdplive) and what it calls belong to the tester
    gen = ["__x64_sys_bpf" + k, "bpf_prog_test_run_xdp" + k, "xdp_test_run_batch.constprop.0" + k,
           "bpf_prog_592a5327b54a2b00_vsb_gen" + k, "ktime_get_mono_fast_ns" + k, "read_tsc" + k]
    assert classify_frames("vswbench-engine", gen) == "tester"
    assert classify_frames("vswbench-engine", gen[:3]) == "transmit"
    assert classify_frames("napi/x", ["veth_xdp_rcv" + k, "bpf_prog_1234_xdp_redirect" + k]) \
        == "switching"
    assert classify_frames("python", ["_start", "PyEval"]) == "other"
    assert classify_frames("x", []) == "other"


def test_fold_recorded_perf_script() -> None:
    cores = fold_perf_script((DATA / "perf-script-sample.txt").read_text())
    assert set(cores) <= {0, 1} and cores
    total = sum(c.samples for c in cores.values())
    assert total == (DATA / "perf-script-sample.txt").read_text().count("[00")
    for core in cores.values():
        assert core.first is not None and core.last >= core.first
        for stack in core.folded:
            comm, *frames = stack.split(";")
            assert frames and " " not in stack
        # kernel frames are marked, by dso or by a kernel address
        assert any(f.endswith("_[k]") for s in core.folded for f in s.split(";"))
    # the run's own threads: a separate profile per core
    tids = {int(line.split()[1]) for line in (DATA / "perf-script-sample.txt").read_text()
            .splitlines() if line.startswith("vswbench-engine")}
    mine = fold_perf_script((DATA / "perf-script-sample.txt").read_text(), own_tids=tids)
    own = [c.own for c in mine.values() if c.own is not None]
    assert own and all(s.startswith("vswbench-engine;") for o in own for s in o.folded)
    assert sum(o.samples for o in own) < total
    idle = [s for c in cores.values() for s in c.folded if s.endswith("pv_native_safe_halt_[k]")]
    assert all(s.startswith("swapper;") for s in idle)


def test_top_functions_and_folded_lines_add_up() -> None:
    core = parse_folded(folded("bridge-200k-cpu0.folded"))
    tops = core.top_functions(5)
    assert [t["samples"] for t in tops] == sorted((t["samples"] for t in tops), reverse=True)
    assert all(0 < t["share"] <= 1 for t in tops)
    assert all(t["kernel"] for t in core.top_functions(5, kernel_only=True))
    comms = core.top_comms()
    assert comms[0]["samples"] >= comms[-1]["samples"]
    assert sum(c["samples"] for c in core.top_comms(1000)) == core.samples
    lines = core.folded_lines(limit=10)
    assert len(lines) == 11 and lines[-1].startswith("[other stacks] ")
    assert sum(split_folded(line)[1] for line in lines) == core.samples


def test_summarize_busy_counts_unsampled_idle() -> None:
    """A core whose idle time perf did not sample is not 100 % busy: busy = non-idle samples
    over the samples the window should hold."""
    a = parse_folded(["napi/x;veth_poll_[k] 500"], cpu=1)
    a.first, a.last = 10.0, 11.0
    prof = summarize({1: a}, [1], seconds=5.0, hz=1000)
    core = prof.cores["1"]
    assert core["expected_samples"] == 1001
    assert core["busy"] == pytest.approx(0.5, abs=0.01)
    assert core["categories"]["receive"] == 1.0
    with pytest.raises(ValueError):
        split_folded("no count here")


# -- /proc/softirqs and /proc/interrupts (samples recorded on this VM, one second apart) ------
PROC = Path(__file__).parent.parent / "data" / "proc"


def test_parse_softirqs_recorded() -> None:
    from vswbench.host.irqstat import parse_softirqs

    table = parse_softirqs((PROC / "softirqs.1").read_text())
    assert {"NET_RX", "NET_TX", "TIMER", "SCHED", "HI"} <= set(table)
    assert set(table["NET_RX"]) == {0, 1}
    assert all(v >= 0 for row in table.values() for v in row.values())
    assert parse_softirqs("") == {}


def test_parse_interrupts_recorded() -> None:
    from vswbench.host.irqstat import parse_interrupts

    text = (PROC / "interrupts.1").read_text()
    totals = parse_interrupts(text)
    assert set(totals) == {0, 1}
    loc = next(line for line in text.splitlines() if line.strip().startswith("LOC:"))
    assert totals[0] >= int(loc.split()[1]) and totals[1] >= int(loc.split()[2])
    # ERR/MIS have one total, not per CPU: they must not shift the columns
    assert parse_interrupts("  CPU0 CPU1\n 1: 5 7 IO-APIC x\nERR: 9\nLOC: 1 2 Local\n") \
        == {0: 6, 1: 9}


def test_irq_rates_from_recorded_samples() -> None:
    from vswbench.host.irqstat import IrqCounts
    from vswbench.host.irqstat import irq_rates
    from vswbench.host.irqstat import parse_interrupts
    from vswbench.host.irqstat import parse_softirqs

    def counts(n: str, at: float) -> IrqCounts:
        return IrqCounts(at, parse_softirqs((PROC / f"softirqs.{n}").read_text()),
                         parse_interrupts((PROC / f"interrupts.{n}").read_text()))

    a, b = counts("1", 10.0), counts("2", 12.0)
    rates = irq_rates(a, b)
    assert set(rates) == {"0", "1"}
    for cpu, r in rates.items():
        c = int(cpu)
        assert r["net_rx"] == round((b.softirqs["NET_RX"][c] - a.softirqs["NET_RX"][c]) / 2, 1)
        assert r["interrupts"] == round((b.interrupts[c] - a.interrupts[c]) / 2, 1)
    assert irq_rates(None, b) == {} and irq_rates(b, a) == {}


def test_irq_time_accounting_from_kernel_config(tmp_path) -> None:
    import gzip

    from vswbench.host.sysinfo import irq_time_accounting

    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/osrelease").write_text("6.18.0-test\n")
    assert irq_time_accounting(tmp_path) == "unknown"
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_IRQ_TIME_ACCOUNTING=y\n"))
    assert irq_time_accounting(tmp_path) == "on"
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot/config-6.18.0-test").write_text(
        "CONFIG_X=y\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n")
    assert irq_time_accounting(tmp_path) == "off"      # /boot first
