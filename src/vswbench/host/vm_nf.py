"""A network function in a virtual machine, seen from the trial as an engine process.

`python -m vswbench.host.vm_nf --netns NS --port P0 --port P1 --tap T0 --tap T1 --mac M0 --mac M1
--name NAME --accel tcg|kvm -- FWD_ARGS...` starts QEMU in the NF's namespace with two virtio-net
ports on tap devices T0, T1 (QEMU's own tap backend under TCG; vhost-net under KVM), joins each tap
to the namespace's port (P0, P1: the veth the switch reaches) by tc mirred both ways, and boots the
cached guest (host/vm_guest.py), whose init runs `vswbench-engine fwd FWD_ARGS` between eth0 and
eth1. On stdout it speaks the engine's protocol: first `{"type":"vm",...}` (QEMU's PID, the
accelerator, the mechanism), then the guest engine's records relayed from the serial console, its
final record carrying `guest` (the guest kernel's port counters) and `vm`. SIGTERM: a line on the
console stops the guest's engine (its final record), the guest powers off. The guest must print its
start record within --boot-timeout seconds, else the point fails with the console's last lines.
QEMU dies with this process (PR_SET_PDEATHSIG); its name, process name and taps carry NAME.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from vswbench.host.vm_guest import READY_LINE
from vswbench.host.vm_guest import Guest
from vswbench.host.vm_guest import current

TCG_LABEL = "emulated VM (TCG): functional check, not a performance figure"
QEMU = "qemu-system-x86_64"
PR_SET_PDEATHSIG = 1


def mechanism(accel: str, vhost_user: bool = False) -> str:
    if vhost_user:
        return "vhost-user (memfd-shared guest memory)"
    return "vhost-net (tap)" if accel == "kvm" else "emulated tap (QEMU's own tap backend)"


def qemu_argv(guest: Guest, *, name: str, accel: str, taps: list[str], macs: list[str],
              fwd_args: list[str], mode: str = "fwd", memory_mb: int = 512,
              vhost_user: list[str] | None = None) -> list[str]:
    """QEMU's command line (pure): serial console on stdio, no default devices, the guest's
    engine arguments in kernel parameter vsbfwd. With `vhost_user` (sockets of a DPDK switch's
    vhost-user servers) the NICs are vhost-user netdevs and the guest's memory a shared memfd."""
    append = f"console=ttyS0 quiet loglevel=1 panic=-1 ipv6.disable=1 vsbmode={mode}"
    if fwd_args:
        append += " vsbfwd=" + ",".join(fwd_args)
    argv = [QEMU, "-name", f"{name},process={name}", "-accel", accel, "-m", str(memory_mb),
            "-cpu", "max", "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-kernel", str(guest.kernel), "-initrd", str(guest.initrd), "-append", append,
            "-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con"]
    if vhost_user:
        argv += ["-object", f"memory-backend-memfd,id=mem,size={memory_mb}M,share=on",
                 "-numa", "node,memdev=mem"]
        # under TCG, QEMU 7.2 dereferences NULL setting up MSI-X vector notifiers for a vhost
        # device (msix_set_vector_notifiers from vhost_net_start, seen here): INTx instead
        vectors = ",vectors=0" if accel == "tcg" else ""
        for i, (sock, mac) in enumerate(zip(vhost_user, macs, strict=True)):
            argv += ["-chardev", f"socket,id=v{i},path={sock}",
                     "-netdev", f"vhost-user,id=n{i},chardev=v{i}",
                     "-device", f"virtio-net-pci,netdev=n{i},mac={mac},addr={3 + i:#x},romfile="
                     f"{vectors}"]
        return argv
    for i, (tap, mac) in enumerate(zip(taps, macs, strict=True)):
        vhost = "on" if accel == "kvm" else "off"
        argv += ["-netdev", f"tap,id=n{i},ifname={tap},script=no,downscript=no,vhost={vhost}",
                 "-device", f"virtio-net-pci,netdev=n{i},mac={mac},addr={3 + i:#x},romfile="]
    return argv


KVM_DEVICE = "/dev/kvm"
PROBE_TIMEOUT_S = 20.0


def kvm_problem(device: str = KVM_DEVICE) -> str | None:
    """Why KVM cannot be asked for at all, or None (whether a guest boots: boot_probe)."""
    if not os.path.exists(device):
        return f"{device} is missing (no KVM here)"
    if not os.access(device, os.R_OK | os.W_OK):
        return f"{device} is not readable and writable by this user (run as root)"
    return None


def boot_probe(accel: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Boot the cached guest once under `accel` (no network), wait for its init's line:
    (boots, what happened). The QEMU process is named vsbprobe and killed at the deadline."""
    if accel == "kvm" and (why := kvm_problem()):
        return False, why
    guest = current()
    if guest is None:
        return False, "no guest built (./setup.sh builds it)"
    if not shutil.which(QEMU):
        return False, f"{QEMU} missing (apt-get install qemu-system-x86)"
    argv = qemu_argv(guest, name="vsbprobe", accel=accel, taps=[], macs=[], fwd_args=[],
                     mode="probe", memory_mb=256)
    t0 = time.monotonic()
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, preexec_fn=_die_with_parent, check=False)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace")
        said = " ".join(out.split())[-160:] or "nothing"
        return False, (f"no init within {timeout:g} s (the guest hangs; its console said: "
                       f"{said})")
    out = done.stdout.decode(errors="replace")
    for line in out.splitlines():
        if READY_LINE in line:
            return True, (f"boots: init after {line.split()[-1]} s guest time, "
                          f"{time.monotonic() - t0:.1f} s wall")
    err = " ".join(done.stderr.decode(errors="replace").split())[-200:]
    return False, f"QEMU exited {done.returncode} before init: {err or 'no message'}"


def _exe_is_qemu(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/exe").endswith(QEMU)
    except OSError:
        return False


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _emit(record: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _sh(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=10)


def _join(netns: str, port: str, tap: str, deadline: float) -> None:
    """tap up; clsact on both; every frame in on one leaves by the other (u32 match-all: the
    kernel here has no matchall classifier)."""
    while subprocess.run(["ip", "-n", netns, "link", "show", tap], capture_output=True,
                         check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"QEMU made no tap {tap} in {netns}")
        time.sleep(0.05)
    _sh(["ip", "netns", "exec", netns, "sysctl", "-qw", f"net.ipv6.conf.{tap}.disable_ipv6=1"])
    _sh(["ip", "-n", netns, "link", "set", tap, "up"])
    for src, dst in ((port, tap), (tap, port)):
        # a fresh clsact: the filters of an earlier VM on this port (an earlier phase) redirect
        # to a tap that is gone
        subprocess.run(["tc", "-n", netns, "qdisc", "del", "dev", src, "clsact"],
                       capture_output=True, check=False)
        _sh(["tc", "-n", netns, "qdisc", "add", "dev", src, "clsact"])
        _sh(["tc", "-n", netns, "filter", "add", "dev", src, "ingress", "protocol", "all", "prio",
             "1", "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
             "dev", dst])


class Console:
    """QEMU's serial console: JSON records relayed (the final one held for the guest's counters),
    every other line kept (the last 40) and logged."""

    def __init__(self, log: Path | None, vm: dict[str, object]) -> None:
        self.tail: collections.deque[str] = collections.deque(maxlen=40)
        self.log = log.open("a") if log else None
        self.vm = vm
        self.started = threading.Event()
        self.final: dict[str, object] | None = None
        self.guest: dict[str, object] | None = None

    def read(self, stream: object) -> None:
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            line = raw.decode(errors="replace").strip("\r\n\x00 ")
            if self.log:
                self.log.write(line + "\n")
                self.log.flush()
            record = None
            start = line.find('{"type"')
            if start >= 0:
                try:
                    record = json.loads(line[start:])
                except json.JSONDecodeError:
                    record = None
            if not isinstance(record, dict):
                if line:
                    self.tail.append(line)
                continue
            kind = record.get("type")
            if kind == "final":
                self.final = record
            elif kind == "guest":
                self.guest = record
            else:
                _emit(record)
                if kind == "start":
                    self.started.set()

    def flush_final(self) -> bool:
        if self.final is None:
            return False
        self.final["guest"] = self.guest
        self.final["vm"] = self.vm
        _emit(self.final)
        return True

    def last_lines(self, n: int = 15) -> str:
        return "\n".join(list(self.tail)[-n:]) or "(the console printed nothing)"


def _options(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="vswbench.host.vm_nf")
    ap.add_argument("--netns", required=True)
    ap.add_argument("--port", action="append", default=[])
    ap.add_argument("--tap", action="append", default=[])
    ap.add_argument("--mac", action="append", default=[])
    ap.add_argument("--name", required=True)
    ap.add_argument("--accel", choices=("tcg", "kvm"), default="tcg")
    ap.add_argument("--boot-timeout", type=float, default=60.0)
    ap.add_argument("--console-log", default="")
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--vhost-user", action="append", default=[])
    ap.add_argument("fwd_args", nargs="*")
    return ap.parse_args(argv)


class VmRun:
    """One QEMU process and its console, from start to power-off; each step returns the exit
    status of the wrapper when it fails (1, the reason and the console's last lines on stderr),
    None when it went well."""

    def __init__(self, opts: argparse.Namespace, guest: Guest, stop: threading.Event) -> None:
        self.opts, self.stop = opts, stop
        pin = ["taskset", "-c", str(opts.cpu)] if opts.cpu is not None else []
        self.cmd = ["ip", "netns", "exec", opts.netns, *pin, *qemu_argv(
            guest, name=opts.name, accel=opts.accel, taps=opts.tap, macs=opts.mac,
            fwd_args=opts.fwd_args, vhost_user=opts.vhost_user)]
        self.qemu = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        self.vm: dict[str, object] = {"accel": opts.accel,
                                      "mechanism": mechanism(opts.accel, bool(opts.vhost_user)),
                                      "qemu_pid": self.qemu.pid, "guest": guest.key,
                                      "kernel": guest.kernel_package}
        if opts.accel == "tcg":
            self.vm["label"] = TCG_LABEL
        self.console = Console(Path(opts.console_log) if opts.console_log else None, self.vm)
        self.reader = threading.Thread(target=self.console.read, args=(self.qemu.stdout,),
                                       daemon=True)
        self.reader.start()
        self.errors: list[str] = []
        threading.Thread(target=lambda: self.errors.extend(
            self.qemu.stderr.read().decode(errors="replace").splitlines()),  # type: ignore[union-attr]
            daemon=True).start()

    def fail(self, why: str) -> int:
        if self.qemu.poll() is None:
            self.qemu.kill()
        self.qemu.wait()
        self.reader.join(2)
        print(f"{why}; QEMU: {' '.join(self.errors[-3:]) or '-'}; the console's last lines:\n"
              f"{self.console.last_lines()}", file=sys.stderr)
        return 1

    def join_ports(self) -> int | None:
        """The taps QEMU made joined to the VM's ports (and, with vhost-user, QEMU running)."""
        opts, qemu = self.opts, self.qemu
        try:
            deadline = time.monotonic() + 10
            for port, tap in zip(opts.port, opts.tap, strict=True):
                _join(opts.netns, port, tap, deadline)
            while opts.vhost_user and not _exe_is_qemu(qemu.pid):
                if qemu.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("QEMU did not start")
                time.sleep(0.05)
        except (RuntimeError, subprocess.SubprocessError) as exc:
            return self.fail(f"the VM's ports: {exc}")
        _emit({"type": "vm", **self.vm, "argv": self.cmd})   # QEMU runs (it made the taps)
        return None

    def wait_boot(self) -> int | None:
        """Until the guest's engine said it started."""
        boot_deadline = time.monotonic() + self.opts.boot_timeout
        while not self.console.started.is_set():
            if self.stop.is_set():
                return self.fail("stopped before the guest's engine started")
            if self.qemu.poll() is not None:
                return self.fail(f"QEMU ended (status {self.qemu.returncode}) before the "
                                 "guest's engine started")
            if time.monotonic() > boot_deadline:
                return self.fail(f"the guest did not start its engine within "
                                 f"{self.opts.boot_timeout:g} s (no boot, or a silent console)")
            self.console.started.wait(0.1)
        return None

    def power_off(self) -> int | None:
        """After the stop signal: the stop line to the guest, and QEMU's end within 30 s."""
        qemu = self.qemu
        if qemu.poll() is not None:
            return None
        try:
            assert qemu.stdin is not None
            qemu.stdin.write(b"q\n")
            qemu.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        try:
            qemu.wait(30)
        except subprocess.TimeoutExpired:
            return self.fail("the guest did not power off within 30 s of the stop line")
        return None

    def finish(self) -> int:
        """The guest's final record out, once QEMU ended by itself."""
        self.reader.join(5)
        if self.qemu.returncode < 0:
            return self.fail(f"the VM (QEMU PID {self.qemu.pid}) was killed by "
                             f"{signal.Signals(-self.qemu.returncode).name}")
        if not self.console.flush_final():
            return self.fail("the guest's engine printed no final record")
        return 0


def main(argv: list[str] | None = None) -> int:
    opts = _options(argv)
    guest = current()
    if guest is None:
        print("no VM guest built: run ./setup.sh (python -m vswbench.host.vm_guest)",
              file=sys.stderr)
        return 1
    if not shutil.which(QEMU):
        print(f"{QEMU} missing: apt-get install qemu-system-x86", file=sys.stderr)
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    run = VmRun(opts, guest, stop)
    failed = run.join_ports()
    if failed is None:
        failed = run.wait_boot()
    if failed is not None:
        return failed
    while not stop.is_set() and run.qemu.poll() is None:
        stop.wait(0.2)
    failed = run.power_off()
    return failed if failed is not None else run.finish()


if __name__ == "__main__":
    sys.exit(main())
