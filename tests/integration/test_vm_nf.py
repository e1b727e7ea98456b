"""Scenario pvp-vm: the network function a QEMU guest (TCG here: emulated, a functional check).

A short `vswbench trial --switch bridge --scenario pvp-vm` forwards every frame through the guest
(the tester's counts, the guest engine's and the guest kernel's agree), is labelled emulated and
leaves nothing behind, and so does `--switch testpmd` over vhost-user; with the VM killed by
SIGKILL mid-trial the trial fails naming the kill and
the console, and `vswbench clean --prefix <run id>` leaves nothing (no namespace, tap, QEMU, state
file or temp dir); with vswbench itself killed, clean stops the VM (its PID is in the run state).
Each test boots one or two guests (about 3 s each under TCG): keep them few.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import processes_mentioning
from vswbench.errors import CommandError
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.host.vm_guest import current
from vswbench.host.vm_nf import TCG_LABEL
from vswbench.run.state import state_dir

VSWBENCH = Path(sys.executable).parent / "vswbench"


@pytest.fixture(scope="module")
def guest() -> None:
    if current() is None:
        pytest.skip("no VM guest built (./setup.sh builds it)")
    if not shutil.which("qemu-system-x86_64"):
        pytest.skip("qemu-system-x86 not installed (./setup.sh installs it)")


def _run_id_from(line: str) -> str:
    return line.split()[1].rstrip(":") if line.startswith("run vsb") else ""


def _leftovers(run_id: str) -> dict[str, list[str]]:
    return {"namespaces": [ns for ns in list_namespaces() if ns.startswith(run_id)],
            "links": [str(link["ifname"]) for link in ip_json("link", "show")
                      if str(link["ifname"]).startswith(run_id)],
            "processes": processes_mentioning(run_id),
            "temp dirs": [str(p) for p in Path("/tmp").glob(f"vsb-{run_id}*")],
            "state file": [str(p) for p in state_dir().glob(f"{run_id}*")]}


def _qemu_pid(run_id: str) -> int | None:
    try:
        data = json.loads((state_dir() / f"{run_id}.json").read_text())
    except (OSError, ValueError):
        return None
    for p in data["processes"]:
        if any("qemu-system" in a for a in p["argv"]):
            return int(p["pid"])
    return None


def _start(duration: int) -> tuple[subprocess.Popen[str], str, int]:
    """A pvp-vm trial, its run id and its QEMU's PID once the guest forwards."""
    proc = subprocess.Popen([str(VSWBENCH), "trial", "--switch", "bridge", "--scenario",
                             "pvp-vm", "--rate", "2k", "--duration", str(duration),
                             "--warmup", "0"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    run_id = ""
    while not run_id and time.monotonic() < deadline:
        run_id = _run_id_from(proc.stderr.readline())
    assert run_id, "the trial never printed its run id"
    pid = None
    while pid is None:
        assert proc.poll() is None, "the trial ended before the VM started"
        assert time.monotonic() < deadline, "no QEMU in the run state"
        pid = _qemu_pid(run_id)
        time.sleep(0.2)
    while not _guest_forwards(run_id):   # polled: the boot takes 3 s quiet, over 8 s loaded
        assert proc.poll() is None, "the trial ended before the guest forwarded"
        assert time.monotonic() < deadline, "the guest never sent a frame back"
        time.sleep(0.2)
    return proc, run_id, pid


def _guest_forwards(run_id: str) -> bool:
    """Has the guest sent a frame out of one of its taps (`<run id><abbr>t<j>`, in whichever
    of the run's namespaces or the root one)? Its engine sends nothing but forwarded frames."""
    for ns in [None, *(n for n in list_namespaces() if n.startswith(run_id))]:
        try:
            links = ip_json("-s", "-d", "link", "show", netns=ns)
        except CommandError:   # the namespace went away between the listing and the read
            continue
        for link in links:
            kind = link.get("linkinfo", {}).get("info_kind")
            if (str(link["ifname"]).startswith(run_id) and kind == "tun"
                    and link["stats64"]["rx"]["packets"] > 0):
                return True
    return False


def test_pvp_vm_forwards_through_the_emulated_guest(root, engine, guest):
    proc = subprocess.run([str(VSWBENCH), "trial", "--switch", "bridge", "--scenario", "pvp-vm",
                           "--rate", "2k", "--duration", "2", "--warmup", "0", "--json"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    run_id = next(r for r in map(_run_id_from, proc.stderr.splitlines()) if r)
    r = json.loads(proc.stdout)
    vm = r["vm"]["nf1"]
    ports = vm["guest_ports"]
    summary = f"tx {r['tx_frames']} rx {r['rx_frames']} vm {vm}"
    assert r["tx_frames"] > 0 and r["rx_frames"] == r["tx_frames"], summary
    assert vm["engine_forwarded"] == r["tx_frames"], summary
    assert ports["eth0"]["rx_packets"] == ports["eth1"]["tx_packets"] == r["tx_frames"], summary
    assert vm["accel"] == "tcg" and vm["label"] == TCG_LABEL
    assert TCG_LABEL in r["warnings"]
    assert not any(_leftovers(run_id).values()), _leftovers(run_id)


def test_pvp_vm_through_testpmd_over_vhost_user(root, engine, guest):
    from vswbench.switches.catalog import all_switches

    avail = all_switches()["testpmd"].availability()
    if not avail.ok:
        pytest.skip(f"testpmd: {avail.reason}")
    proc = subprocess.run([str(VSWBENCH), "trial", "--switch", "testpmd", "--scenario", "pvp-vm",
                           "--rate", "2k", "--duration", "2", "--warmup", "0", "--json"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    vm = r["vm"]["nf1"]
    ports = vm["guest_ports"]
    summary = f"tx {r['tx_frames']} rx {r['rx_frames']} vm {vm}"
    assert r["tx_frames"] > 0 and r["rx_frames"] == r["tx_frames"], summary
    assert ports["eth0"]["rx_packets"] == ports["eth1"]["tx_packets"] == r["tx_frames"], summary
    assert vm["mechanism"].startswith("vhost-user") and vm["label"] == TCG_LABEL


def test_vm_killed_mid_trial_fails_the_trial_and_clean_leaves_nothing(root, engine, guest):
    proc, run_id, pid = _start(30)
    os.kill(pid, signal.SIGKILL)   # the VM's QEMU, by the PID the run recorded
    killed = time.monotonic()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode not in (0, None), err
    # the trial fails as soon as its network function does, not at the end of its 30 s
    assert time.monotonic() - killed < 15, err
    assert "SIGKILL" in err and "console" in err, err
    clean = subprocess.run([str(VSWBENCH), "clean", "--prefix", run_id], capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    left = _leftovers(run_id)
    assert not any(left.values()), f"left behind by run {run_id}: {left}\n{clean.stdout}"


def test_vswbench_killed_then_clean_stops_the_vm(root, engine, guest):
    proc, run_id, pid = _start(30)
    proc.kill()    # SIGKILL, our own child: the VM and its wrapper outlive it
    proc.wait()
    assert os.path.exists(f"/proc/{pid}"), "the VM should outlive the killed run"
    clean = subprocess.run([str(VSWBENCH), "clean", "--prefix", run_id], capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _leftovers(run_id)
    assert not any(left.values()), f"left behind by run {run_id}: {left}\n{clean.stdout}"
