"""deploy/lab/lab.yml against two DUTs emulated by namespaces, each with its own sshd, reached
over SSH from a tester namespace that runs ansible-playbook (as test_agent_ssh.py does for one):

    tst [la1] 198.18.250.1 ---- 198.18.250.2 [lb1] dut1 (sshd :2222)
    tst [la2] 198.18.251.1 ---- 198.18.251.2 [lb2] dut2 (sshd :2222)

Plays 2 and 3 (tag campaign): a two-point campaign on both DUTs at once, the stores fetched and
merged, the report written; play 1 (install: copy + setup.sh) is skipped, it would reinstall
this machine's own packages. Then the merged store holds both hosts' points, each with its host
and fingerprint, and the report names both hosts. Keys per test; everything is removed after."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from vswbench.run.ids import new_run_id

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
PORT = 2222
SPEC = """[campaign]
name = "lab-{tag}"
[[study]]
kind = "trial"
switch = "bridge"
scenario = "p2p-pair"
rate = ["5k", "10k"]
duration = 0.5
"""


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=60).stdout


class TwoDuts:
    def __init__(self) -> None:
        self.rid = str(new_run_id())
        self.tst = f"{self.rid}tst"
        self.duts = [f"{self.rid}d1", f"{self.rid}d2"]
        self.ips = [("198.18.250.1", "198.18.250.2"), ("198.18.251.1", "198.18.251.2")]
        self.dir = Path(tempfile.mkdtemp(prefix=f"vsb-{self.rid}-lab-"))
        self.sshd: list[subprocess.Popen[str]] = []

    def up(self) -> TwoDuts:
        for ns in (self.tst, *self.duts):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        d = self.dir
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "user_key"))
        shutil.copy(d / "user_key.pub", d / "authorized_keys")
        host_pub = (d / "host_key.pub").read_text().split()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        known = []
        for i, (dut, (tip, dip)) in enumerate(zip(self.duts, self.ips, strict=True), 1):
            a, b = f"{self.rid}la{i}", f"{self.rid}lb{i}"
            sh("ip", "link", "add", a, "netns", self.tst, "type", "veth", "peer", "name", b,
               "netns", dut)
            for ns, ifname, ip in ((self.tst, a, tip), (dut, b, dip)):
                sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifname)
                sh("ip", "-n", ns, "link", "set", ifname, "up")
            known.append(f"[{dip}]:{PORT} {host_pub[0]} {host_pub[1]}")
            with open(d / f"sshd{i}.log", "w") as log:   # sshd writes to its own copy
                self.sshd.append(subprocess.Popen(
                    ["ip", "netns", "exec", dut, SSHD, "-D", "-e", "-f", "/dev/null",
                     "-o", f"ListenAddress={dip}", "-o", f"Port={PORT}",
                     "-o", f"HostKey={d / 'host_key'}",
                     "-o", f"AuthorizedKeysFile={d / 'authorized_keys'}",
                     "-o", f"PidFile={d / f'sshd{i}.pid'}", "-o", "StrictModes=no",
                     "-o", "UsePAM=no", "-o", "PermitRootLogin=prohibit-password",
                     "-o", "PasswordAuthentication=no"],
                    stdout=subprocess.DEVNULL, stderr=log, text=True))
        (d / "known_hosts").write_text("\n".join(known) + "\n")
        for i, (dut, (_, dip)) in enumerate(zip(self.duts, self.ips, strict=True)):
            deadline = time.monotonic() + 15
            while f"{dip}:{PORT}" not in sh("ip", "netns", "exec", dut, "ss", "-ltn"):
                assert self.sshd[i].poll() is None, (d / f"sshd{i + 1}.log").read_text()
                assert time.monotonic() < deadline, "sshd did not listen"
                time.sleep(0.1)
        return self

    def inventory(self) -> Path:
        engine = os.environ.get("VSWBENCH_ENGINE", str(ROOT / "engine/build/vswbench-engine"))
        lines = ["all:", "  children:", "    tester:", "      hosts:",
                 "        t1: {ansible_host: 198.18.250.1}", "    dut:", "      hosts:"]
        for name, (_, dip) in zip(("d1", "d2"), self.ips, strict=True):
            lines += [f"        {name}:", f"          ansible_host: {dip}",
                      f"          ansible_port: {PORT}", "          ansible_user: root",
                      f"          ansible_ssh_private_key_file: {self.dir / 'user_key'}",
                      f"          vswbench_python: {sys.executable}",
                      f"          vswbench_env: {{PYTHONPATH: {ROOT / 'src'}, "
                      f"VSWBENCH_ENGINE: {engine}}}"]
        path = self.dir / "hosts.yml"
        path.write_text("\n".join(lines) + "\n")
        return path

    def down(self) -> None:
        for p in self.sshd:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)   # the listener we started, by its PID
                p.wait(10)
        for ns in (self.tst, *self.duts):
            sh("ip", "netns", "delete", ns, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def duts():
    if shutil.which("ssh-keygen") is None or not Path(SSHD).exists():
        pytest.skip("openssh-server is not installed (setup.sh installs it)")
    made = TwoDuts()
    try:
        yield made.up()
    finally:
        made.down()


@pytest.mark.timeout(600)
def test_lab_playbook_two_duts_merge_and_report(duts: TwoDuts) -> None:
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e .[test])")
    spec = duts.dir / "spec.toml"
    spec.write_text(SPEC.format(tag=duts.rid))
    out = duts.dir / "out"
    extra = {"ansible_python_interpreter": sys.executable,
             "lab_spec": str(spec), "lab_out": str(out), "lab_run": duts.rid,
             "lab_python": sys.executable, "lab_env": {"PYTHONPATH": str(ROOT / "src")}}
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_LOCAL_TEMP": str(duts.dir),
           "ANSIBLE_REMOTE_TEMP": str(duts.dir / "remote"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_PIPELINING": "True",   # a module's run in one SSH session, not three
           "ANSIBLE_SSH_ARGS": (f"-F /dev/null -o UserKnownHostsFile={duts.dir / 'known_hosts'} "
                                "-o ControlMaster=no -o IdentitiesOnly=yes")}
    t0 = time.monotonic()
    proc = subprocess.run(["ip", "netns", "exec", duts.tst, playbook, "-i", str(duts.inventory()),
                           "--tags", "campaign", "-e", json.dumps(extra),
                           str(ROOT / "deploy/lab/lab.yml")],
                          capture_output=True, text=True, timeout=540, env=env)
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "d1" in proc.stdout and "d2" in proc.stdout and "failed=0" in proc.stdout
    from vswbench.results.store import ResultStore

    with ResultStore(out / "merged" / "results.sqlite", create=False) as store:
        runs, points = store.runs(), store.points()
    assert sorted(r.fingerprint["host"] for r in runs) == ["d1", "d2"]
    assert all(r.fingerprint.get("kernel_release") for r in runs)
    assert len(points) == 4 and all(p.status == "done" for p in points), points
    rates: dict[str, set[str]] = {}
    for p in points:
        rates.setdefault(p.params["host"], set()).add(str(p.params["rate"]))
        assert p.key.endswith("@" + p.params["host"])
    assert set(rates) == {"d1", "d2"} and all(len(r) == 2 for r in rates.values()), rates
    html = (out / "merged" / "report.html").read_text()
    assert "on host d1 (hostname" in html and "on host d2 (hostname" in html
    # the DUTs' run directories are gone
    for name in ("d1", "d2"):   # the playbook's name: 8 hex digits of the host's name's sha1
        gone = Path(f"/tmp/vsb-{duts.rid}-lab-{hashlib.sha1(name.encode()).hexdigest()[:8]}")
        assert not gone.exists(), (gone, took)
