"""Scenarios pvp-vm and chain-vm:N without root: parsing, the plan's VM commands (the process that
stands for the guest's engine, its taps and MACs), QEMU's command line, refusals (exit 2)."""
import sys
from pathlib import Path

import pytest

from tests.unit.fake_testbed import wired_plan
from vswbench.cli import app as cli
from vswbench.engine.params import TrialParams as Traffic
from vswbench.errors import UsageError
from vswbench.host.vm_guest import INIT
from vswbench.host.vm_guest import MODULES
from vswbench.host.vm_guest import Guest
from vswbench.host.vm_nf import TCG_LABEL
from vswbench.host.vm_nf import qemu_argv
from vswbench.run.ids import RunId
from vswbench.scenario import Role
from vswbench.scenario import parse
from vswbench.scenario import vm_hosts
from vswbench.switches.base import Placement
from vswbench.testbed.vm import accel_problem
from vswbench.testbed.vm import vm_accel

RID = RunId("vsb1a2b")


class _Bridge:
    name, l3, direct, port_kind = "bridge", False, False, "kernel"


class _Testpmd:
    name, l3, direct, port_kind = "testpmd", False, False, "dpdk"


class _Memif:
    name, l3, direct, port_kind = "memif", False, True, "dpdk"


def test_parse_vm_scenarios():
    s = parse("pvp-vm")
    assert s.name == "pvp-vm" and vm_hosts(s) == ("nf1",)
    assert [h.name for h in s.hosts] == ["tester", "nf1"]
    assert [(h.src, h.dst) for h in s.hops] == [("tester.p0", "nf1.in"), ("nf1.out", "tester.p1")]
    c = parse("chain-vm:3")
    assert c.name == "chain-vm:3" and vm_hosts(c) == ("nf1", "nf2", "nf3")
    assert parse("chain-vm:1").name == "pvp-vm"
    assert vm_hosts(parse("pvp")) == ()
    for bad in ("chain-vm:0", "chain-vm:5"):
        with pytest.raises(UsageError, match="N must be 1..4"):
            parse(bad)


def test_vm_engine_command():
    plan, wiring = wired_plan("pvp-vm", _Bridge, Placement(0, 1, (1,)), RID)
    cmds = {c.label: c for c in plan.engine_commands(wiring, Traffic(64, 5000, 3))}
    nf = cmds["nf1"]
    assert nf.role == Role.NF and nf.long_running
    assert nf.program == sys.executable and nf.ready_timeout > 15 and nf.stop_timeout > 5
    args = list(nf.args)
    assert args[:2] == ["-m", "vswbench.host.vm_nf"]
    assert args[args.index("--netns") + 1] == "vsb1a2bnf1"
    assert args[args.index("--name") + 1] == "vsb1a2bnf1"
    assert args[args.index("--accel") + 1] == "tcg"
    taps = [args[i + 1] for i, a in enumerate(args) if a == "--tap"]
    assert taps == ["vsb1a2bn1t0", "vsb1a2bn1t1"]
    macs = [args[i + 1] for i, a in enumerate(args) if a == "--mac"]
    assert macs == [wiring.ports["nf1.in"].mac, wiring.ports["nf1.out"].mac]
    guest = args[args.index("--") + 1:]
    # the guest's fwd: back to the tester's p0, ahead to its p1; sleeps when idle
    assert guest[:5] == ["--rewrite-mac", "--dst-mac", wiring.ports["tester.p0"].mac,
                         "--dst-mac", wiring.ports["tester.p1"].mac]
    assert "--no-busy-poll" in guest and "--netns" not in guest and "--cpu" not in guest
    # the tester addresses the VM's port as it would a container's
    assert cmds["tester"].args[0] == "loop"


def test_vm_accel_option():
    assert vm_accel({}) == "tcg" and vm_accel({"vm_accel": "KVM"}) == "kvm"
    with pytest.raises(UsageError, match="expected tcg or kvm"):
        vm_accel({"vm_accel": "xen"})
    assert accel_problem("tcg") is None


def test_kvm_refused_without_device(monkeypatch):
    import vswbench.testbed.vm as vm

    monkeypatch.setattr(vm, "kvm_problem", lambda: "/dev/kvm is missing (no KVM here)")
    vm.accel_problem.cache_clear()
    try:
        why = vm.accel_problem("kvm")
    finally:
        vm.accel_problem.cache_clear()
    assert why and "/dev/kvm is missing" in why and "--vm-accel tcg" in why


def test_dpdk_switch_gives_the_vm_its_vhost_user_sockets():
    plan, wiring = wired_plan("pvp-vm", _Testpmd, Placement(0, 1, (1,)), RID)
    vdevs = {k: f"virtio_user{i},path=/tmp/vsb-{RID}-x/p{i}.sock,queues=1,mac=02:76:73:1a:2b:0{i}"
             for i, k in enumerate(wiring.ports)}
    wiring = type(wiring)({k: type(p)(p.key, p.netns, vdevs[k], p.cidr, p.mac)
                           for k, p in wiring.ports.items()})
    nf = next(c for c in plan.engine_commands(wiring, Traffic(64, 5000, 3)) if c.label == "nf1")
    args = list(nf.args)
    socks = [args[i + 1] for i, a in enumerate(args) if a == "--vhost-user"]
    assert socks == [f"/tmp/vsb-{RID}-x/p2.sock", f"/tmp/vsb-{RID}-x/p3.sock"]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--mac"] == [
        "02:76:73:1a:2b:02", "02:76:73:1a:2b:03"]
    assert "--tap" not in args and "--eal-args" not in args


def test_memif_direct_refused():
    with pytest.raises(UsageError, match="testpmd"):
        wired_plan("pvp-vm", _Memif, Placement(0, 1, (1,)), RID)


def test_qemu_argv():
    guest = Guest(Path("/c/vsb-guest-k.vmlinuz"), Path("/c/vsb-guest-k.initrd.gz"), "k", "p")
    argv = qemu_argv(guest, name="vsb1a2bnf1", accel="tcg", taps=["t0", "t1"],
                     macs=["02:00:00:00:00:01", "02:00:00:00:00:02"],
                     fwd_args=["--rewrite-mac", "--duration", "63"])
    text = " ".join(argv)
    assert "-name vsb1a2bnf1,process=vsb1a2bnf1" in text and "-accel tcg" in text
    assert "tap,id=n0,ifname=t0,script=no,downscript=no,vhost=off" in text
    assert "virtio-net-pci,netdev=n1,mac=02:00:00:00:00:02" in text
    assert "vsbfwd=--rewrite-mac,--duration,63" in text and "console=ttyS0" in text
    kvm = " ".join(qemu_argv(guest, name="x", accel="kvm", taps=["t0"], macs=["m"], fwd_args=[]))
    assert "vhost=on" in kvm
    vu = " ".join(qemu_argv(guest, name="x", accel="tcg", taps=[], macs=["m"], fwd_args=[],
                            vhost_user=["/s0"]))
    assert "memory-backend-memfd,id=mem,size=512M,share=on" in vu and "-numa node,memdev=mem" in vu
    assert "socket,id=v0,path=/s0" in vu and "vhost-user,id=n0,chardev=v0" in vu
    assert "vectors=0" in vu   # QEMU 7.2 under TCG crashes setting up MSI-X for vhost
    assert TCG_LABEL == "emulated VM (TCG): functional check, not a performance figure"


def test_init_script_loads_virtio_net_and_reports():
    assert MODULES[-1] == "virtio_net" and MODULES.index("virtio") < MODULES.index("virtio_pci")
    assert "insmod /lib/modules/$m.ko" in INIT and "poweroff -f" in INIT
    assert '\\"type\\":\\"guest\\"' in INIT and "fwd --io afpacket --port eth0 --port eth1" in INIT


@pytest.fixture
def nothing_created(monkeypatch):
    import vswbench.run.scope

    def no_run(*a, **k):
        raise AssertionError("nothing may be created for bad input")

    monkeypatch.setattr(vswbench.run.scope, "run_scope", no_run)


@pytest.mark.parametrize("argv, needles", [
    (["--switch", "memif", "--scenario", "pvp-vm"], ["memif", "testpmd"]),
    (["--switch", "bridge", "--scenario", "pvp", "--vm-accel", "kvm"],
     ["--vm-accel applies to scenarios pvp-vm and chain-vm:N"]),
    (["--switch", "bridge", "--scenario", "chain-vm:7"], ["N must be 1..4"]),
    (["--switch", "bridge", "--scenario", "pvp-vm", "--option", "vm_accel=xen"],
     ["expected tcg or kvm"]),
])
def test_bad_vm_input_exits_2(capsys, nothing_created, argv, needles):
    code = cli.main(["trial", *argv, "--rate", "5k", "--duration", "1"])
    captured = capsys.readouterr()
    text = " ".join((captured.out + captured.err).split())
    assert code == 2, text
    assert all(n in text for n in needles), text
    assert "Traceback" not in text


def test_report_first_screen_labels_emulated_vm_scenarios():
    from vswbench.report.first_screen import emulated_vm
    from vswbench.report.first_screen import summary_section
    from vswbench.report.verdict import Verdict

    def verdict(scenario: str, variant: str = "") -> Verdict:
        return Verdict(scenario, 64, variant, "kernel", (), (), None, "line")

    html = summary_section([], [], [verdict("pvp-vm"), verdict("pvp")], [])
    assert f"pvp-vm: {TCG_LABEL}" in html
    assert TCG_LABEL not in summary_section([], [], [verdict("pvp")], [])
    assert emulated_vm("chain-vm:2", "") and not emulated_vm("pvp-vm", "vm_accel=kvm")


def test_calibration_of_a_vm_scenario_is_its_container_twin():
    from vswbench.switches.chain.nf import calibration_target

    p = Placement(0, 1, (1,))
    assert calibration_target({}, parse("pvp-vm"), p)[0].name == "pvp"
    assert calibration_target({}, parse("chain-vm:3"), p)[0].name == "chain:3"
