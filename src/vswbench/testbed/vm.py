"""Network functions in virtual machines (scenarios pvp-vm, chain-vm:N): what the plan needs.

A VM network function keeps the NF's namespace and its two veth ports on the switch, as a
container NF does; in that namespace host/vm_nf.py starts QEMU with two virtio-net ports on taps
`<run id><abbr>t<j>` (vsb1a2bn1t0, ...), joins tap and veth by tc mirred, and runs the engine's
fwd inside the guest. So every kernel switch reaches the VM through the taps; the guest's NICs
carry the veth ports' MACs, so nothing on the switch side can tell the VM from a container.

Backend option `vm_accel` (`--vm-accel`): tcg (the default: QEMU's emulation, its own tap backend;
a functional check, never a performance figure) or kvm (vhost-net; refused with exit 2 where
/dev/kvm is missing or a guest does not boot under KVM: host/vm_nf.py boot_probe).
DPDK switches (ovs-dpdk, testpmd) reach the guest by their vhost-user ports (option dpdk_port=vhost,
their default): QEMU's vhost-user netdev connects to the switch's socket, the guest's memory a
shared memfd (no hugepages).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping

from vswbench.errors import UsageError
from vswbench.host.vm_nf import boot_probe
from vswbench.host.vm_nf import kvm_problem
from vswbench.run.ids import RunId
from vswbench.scenario import Scenario
from vswbench.scenario import vm_hosts
from vswbench.switches.base import Switch

OPTION = "vm_accel"
ACCELS = ("tcg", "kvm")
BOOT_TIMEOUT_S = 60.0      # TCG boots in about 3 s here; a loaded 2-core host takes longer
READY_TIMEOUT_S = BOOT_TIMEOUT_S + 15
STOP_TIMEOUT_S = 40.0      # the stop line, the guest engine's final record, power-off


def vm_accel(options: Mapping[str, str]) -> str:
    value = options.get(OPTION, "tcg").strip().lower() or "tcg"
    if value not in ACCELS:
        raise UsageError(f"--vm-accel {value!r}: expected tcg or kvm")
    return value


def vm_problem(scenario: Scenario, switch_cls: type[Switch], nf: str) -> str | None:
    """Why this VM scenario cannot run with this switch or nf option, or None."""
    if not vm_hosts(scenario):
        return None
    if switch_cls.port_kind == "dpdk" and switch_cls.direct:
        return (f"scenario {scenario.name} on {switch_cls.name}: engines joined directly by "
                "memif have no switch to give the VM a vhost-user port; use testpmd or ovs-dpdk")
    if nf != "fwd":
        return f"scenario {scenario.name}: option nf={nf} does not apply (the VM runs fwd)"
    return None


@functools.cache
def accel_problem(accel: str) -> str | None:
    """Why this accelerator cannot run the guest here, or None: KVM needs /dev/kvm and a guest
    that boots under it (one boot, once per process; nested KVM here hangs after the kernel is
    decompressed). TCG is always offered: its guests fail their points with the reason."""
    if accel != "kvm":
        return None
    why = kvm_problem()
    if why is None:
        boots, what = boot_probe("kvm")
        why = None if boots else f"a guest does not boot under KVM here: {what}"
    return (f"--vm-accel kvm: {why}; use --vm-accel tcg (emulated: a functional check, not a "
            "performance figure)") if why else None


def tap_name(run_id: RunId, abbr: str, j: int) -> str:
    return run_id.ifname(f"{abbr}t{j}")


def vm_command(*, run_id: RunId, host: str, abbr: str, netns: str, ports: list[str],
               macs: list[str], cpu: int | None, accel: str, guest_args: list[str],
               dpdk: bool = False) -> tuple[str, list[str]]:
    """(program, arguments) of the process that stands for a VM network function's engine.
    Kernel switches: `ports` are the NF's veths, each joined to a tap. DPDK switches: `ports` are
    the engine-side vdev strings (virtio_user,path=SOCKET,mac=MAC): QEMU connects its vhost-user
    netdev to SOCKET, the switch's vhost-user server, with the vdev's MAC."""
    args = ["-m", "vswbench.host.vm_nf", "--netns", netns, "--name", run_id.name(host),
            "--accel", accel, "--boot-timeout", f"{BOOT_TIMEOUT_S:g}"]
    for j, (port, mac) in enumerate(zip(ports, macs, strict=True)):
        if dpdk:
            fields = dict(f.split("=", 1) for f in port.split(",")[1:] if "=" in f)
            args += ["--vhost-user", fields["path"], "--mac", fields.get("mac", mac)]
        else:
            args += ["--port", port, "--tap", tap_name(run_id, abbr, j), "--mac", mac]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    return sys.executable, [*args, "--", *guest_args]
