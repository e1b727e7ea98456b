"""The SSH path without other machines: an sshd (Debian openssh-server) inside a vsb namespace is
the DUT "host", the controller runs in a second namespace, a veth between them is the wire
(198.18.250.0/24). Keys are made per test. The same campaign runs locally and through the agent;
then the three faults: the wire goes down mid-trial, the agent or its sshd is killed, the host is
unreachable at start. Each must give an error naming the host, keep the points finished so far,
and leave nothing of the run on either "host"."""
from __future__ import annotations

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
DUT_IP, TST_IP, PORT = "198.18.250.2", "198.18.250.1", 2222

QUICK = """[campaign]
name = "agent-{tag}"
[[study]]
kind = "trial"
switch = "bridge"
scenario = "p2p-pair"
rate = ["5k"]
duration = 0.5
"""
SLOW = QUICK + """[[study]]
kind = "trial"
switch = "bridge"
scenario = "remote"
rate = ["5k"]
duration = 12
"""


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=60).stdout


def namespaces_of(prefix: str) -> list[str]:
    return [line.split()[0] for line in sh("ip", "netns", "list").splitlines()
            if line.startswith(prefix)]


class Lab:
    """Two namespaces (tester: the controller, dut: sshd), the wire, keys and an inventory."""

    def __init__(self) -> None:
        self.rid = str(new_run_id())
        self.tst, self.dut = f"{self.rid}tst", f"{self.rid}dut"
        self.dir = Path(tempfile.mkdtemp(prefix=f"vsb-{self.rid}-ssh-"))
        self.sshd: subprocess.Popen[str] | None = None

    def up(self) -> Lab:
        for ns in (self.tst, self.dut):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"{self.rid}sa", "netns", self.tst, "type", "veth", "peer",
           "name", f"{self.rid}sb", "netns", self.dut)
        for ns, ifname, ip in ((self.tst, f"{self.rid}sa", TST_IP), (self.dut, f"{self.rid}sb", DUT_IP)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifname)
            sh("ip", "-n", ns, "link", "set", ifname, "up")
        d = self.dir
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "user_key"))
        shutil.copy(d / "user_key.pub", d / "authorized_keys")
        host_pub = (d / "host_key.pub").read_text().split()
        (d / "known_hosts").write_text(f"[{DUT_IP}]:{PORT} {host_pub[0]} {host_pub[1]}\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)   # sshd's privilege separation dir
        with open(d / "sshd.log", "w") as log:   # sshd writes to its own copy
            self.sshd = subprocess.Popen(
                ["ip", "netns", "exec", self.dut, SSHD, "-D", "-e", "-f", "/dev/null",
                 "-o", f"ListenAddress={DUT_IP}", "-o", f"Port={PORT}",
                 "-o", f"HostKey={d / 'host_key'}",
                 "-o", f"AuthorizedKeysFile={d / 'authorized_keys'}",
                 "-o", f"PidFile={d / 'sshd.pid'}", "-o", "StrictModes=no", "-o", "UsePAM=no",
                 "-o", "PermitRootLogin=prohibit-password", "-o", "PasswordAuthentication=no",
                 "-o", "ClientAliveInterval=1", "-o", "ClientAliveCountMax=3"],
                stdout=subprocess.DEVNULL, stderr=log, text=True)
        deadline = time.monotonic() + 15
        while f"{DUT_IP}:{PORT}" not in sh("ip", "netns", "exec", self.dut, "ss", "-ltn"):
            assert self.sshd.poll() is None, (d / "sshd.log").read_text()
            assert time.monotonic() < deadline, "sshd did not listen"
            time.sleep(0.1)
        return self

    def inventory(self, port: int = PORT) -> Path:
        path = self.dir / f"hosts-{port}.yml"
        engine = os.environ.get("VSWBENCH_ENGINE", str(ROOT / "engine/build/vswbench-engine"))
        path.write_text(
            "all:\n  children:\n    tester:\n      hosts:\n"
            f"        t1: {{ansible_host: {TST_IP}, vswbench_wire: {self.rid}sa}}\n"
            "    dut:\n      hosts:\n        d1:\n"
            f"          ansible_host: {DUT_IP}\n          ansible_port: {port}\n"
            "          ansible_user: root\n"
            f"          ansible_ssh_private_key_file: {self.dir / 'user_key'}\n"
            f"          vswbench_known_hosts: {self.dir / 'known_hosts'}\n"
            f"          vswbench_python: {sys.executable}\n"
            f"          vswbench_wire: {self.rid}sb\n"
            f"          vswbench_env: {{PYTHONPATH: {ROOT / 'src'}, VSWBENCH_ENGINE: {engine}}}\n")
        return path

    def spec(self, text: str, tag: str) -> Path:
        path = self.dir / f"{tag}.toml"
        path.write_text(text.format(tag=tag))
        return path

    def controller(self, spec: Path, out: Path, inventory: Path | None) -> subprocess.Popen[str]:
        argv = [sys.executable, "-m", "vswbench", "run", str(spec), "--out", str(out),
                "--no-report", "--format", "text"]
        argv += ["--inventory", str(inventory)] if inventory else []
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        return subprocess.Popen(["ip", "netns", "exec", self.tst, *argv] if inventory else argv,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def dut_pids(self, needle: str, program: str | None = None) -> list[int]:
        return self.pids(self.dut, needle, program)

    def pids(self, ns: str, needle: str, program: str | None = None) -> list[int]:
        """The processes in `ns` whose command line holds `needle` (and, given `program`, whose
        argv[0] is that program: a shell that merely names it in its environment is not it)."""
        found = []
        for pid in sh("ip", "netns", "pids", ns, check=False).split():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            cmd = b" ".join(argv).decode()
            if program is not None and Path(argv[0].decode()).name != program:
                continue
            if needle in cmd and int(pid) != (self.sshd.pid if self.sshd else -1):
                found.append(int(pid))
        return found

    def down(self) -> None:
        if self.sshd is not None and self.sshd.poll() is None:
            # the listener: by the PID we started (ip netns exec execs sshd in place)
            self.sshd.send_signal(signal.SIGTERM)
            self.sshd.wait(10)
        for ns in (self.tst, self.dut):
            sh("ip", "netns", "delete", ns, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def lab():
    if shutil.which("ssh-keygen") is None or not Path(SSHD).exists():
        pytest.skip("openssh-server is not installed (setup.sh installs it)")
    pytest.importorskip("asyncssh")
    made = Lab()
    try:
        yield made.up()
    finally:
        made.down()


def records(out: Path) -> list[dict]:
    """The points stored so far: key, status, result, run id."""
    from vswbench.results.store import STORE_NAME
    from vswbench.results.store import ResultStore

    if not (out / "results.jsonl").exists():   # written after the store, point by point
        return []
    with ResultStore(out / STORE_NAME, create=False) as store:
        return [{"key": p.key, "status": p.status, "result": p.result, "run_id": p.run_id}
                for p in store.points()]


def run_ids(out: Path) -> set[str]:
    return {str(r.get("run_id")) for r in records(out) if r.get("run_id")}


def leftovers(run_id: str) -> list[str]:
    """The run's namespaces and temp dirs (the agent's vsb-<run id>-agent-*) still there."""
    return namespaces_of(run_id) + [str(p) for p in Path("/tmp").glob(f"vsb-{run_id}-*")]


def wait_clean(run_id: str, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not leftovers(run_id):
            return []
        time.sleep(0.5)
    return leftovers(run_id)


def wait_gone(lab: Lab, needle: str, timeout: float = 30.0) -> list[int]:
    """Poll until no process on the DUT matches `needle`; what is left after `timeout`."""
    deadline = time.monotonic() + timeout
    while lab.dut_pids(needle) and time.monotonic() < deadline:
        time.sleep(0.2)
    return lab.dut_pids(needle)


def test_same_campaign_locally_and_through_the_agent(lab: Lab) -> None:
    spec = lab.spec(QUICK, "same")
    local = lab.controller(spec, lab.dir / "local", None)
    out_l, err_l = local.communicate(timeout=240)
    assert local.returncode == 0, err_l
    agent = lab.controller(spec, lab.dir / "agent", lab.inventory())
    out_a, err_a = agent.communicate(timeout=240)
    assert agent.returncode == 0, err_a
    rl, ra = records(lab.dir / "local"), records(lab.dir / "agent")
    assert [r["key"] for r in rl] == [r["key"] for r in ra] and len(ra) == 1
    assert ra[0]["status"] == rl[0]["status"] == "done"
    assert set(rl[0]["result"]) <= set(ra[0]["result"]) | {"switch_stats"}
    assert ra[0]["result"]["achieved_pps"] > 0
    from vswbench.results.store import STORE_NAME
    from vswbench.results.store import ResultStore

    with ResultStore(lab.dir / "agent" / STORE_NAME, create=False) as store:
        prints = [r.fingerprint for r in store.runs()]
    hosts = prints[-1]["hosts"]
    assert set(hosts) == {"tester t1", "dut d1"} and hosts["dut d1"]["kernel_release"]
    for rid in run_ids(lab.dir / "agent"):
        assert wait_clean(rid, 10) == []


def test_unreachable_host_at_start(lab: Lab) -> None:
    proc = lab.controller(lab.spec(QUICK, "unreach"), lab.dir / "u", lab.inventory(port=2223))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert "dut d1" in err and f"{DUT_IP}:2223" in err
    assert not (lab.dir / "u").exists()     # nothing created: not even the results directory


def started_at(pid: int) -> float:
    """When `pid` started, in seconds of wall-clock time (/proc/<pid>/stat's start time)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def second_trial_running(lab: Lab, out: Path) -> bool:
    """A DUT stall monitor (argv[0] the engine) started after the first point was stored: the
    campaign's one run id names both points' monitors, so the start time tells them apart."""
    if not records(out):
        return False
    stored = (out / "results.jsonl").stat().st_mtime
    for pid in lab.pids(lab.dut, "stallmon", "vswbench-engine"):
        try:
            if started_at(pid) > stored:
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False


def _fault(lab: Lab, tag: str, act) -> tuple[str, list[dict]]:
    """Run SLOW through the agent; after its first point is stored and the second one's trial
    has begun on the DUT, `act`; return the controller's stderr and the stored records."""
    out = lab.dir / tag
    proc = lab.controller(lab.spec(SLOW, tag), out, lab.inventory())
    deadline = time.monotonic() + 180
    # the second point's trial: the DUT's stall monitor started after the first point was
    # stored. Waiting for any DUT process naming vswbench-engine also
    # matched the first point's agent shell (the name is in its environment) while it exited:
    # killing that left the second point to finish (CI, stop 48)
    while not second_trial_running(lab, out):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the second point's trial never started"
        time.sleep(0.2)
    act()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    stored = records(out)
    assert stored[0]["status"] == "done"           # the point finished before is kept
    assert all(r["status"] != "done" for r in stored[1:])
    for rid in run_ids(out):
        assert wait_clean(rid) == [], f"{rid} left namespaces or temp dirs behind"
    # the agent removes its testbed, then exits: poll for its exit as wait_clean polls for the
    # testbed (the namespaces can be gone a moment before the process is)
    assert wait_gone(lab, "vswbench agent") == [], "the agent outlived its session"
    return err, stored


def test_wire_down_mid_trial(lab: Lab) -> None:
    err, _ = _fault(lab, "wire", lambda: sh("ip", "-n", lab.tst, "link", "set",
                                           f"{lab.rid}sa", "down"))
    assert "dut d1" in err


def test_agent_killed(lab: Lab) -> None:
    def kill() -> None:
        for pid in lab.dut_pids("vswbench agent"):
            os.kill(pid, signal.SIGKILL)
    err, _ = _fault(lab, "agentkill", kill)
    assert "dut d1" in err and "agent" in err


def test_sshd_of_the_agent_killed(lab: Lab) -> None:
    def kill() -> None:   # the session's sshd (a child of our listener), not the listener
        for pid in lab.dut_pids("sshd"):
            os.kill(pid, signal.SIGKILL)
    err, _ = _fault(lab, "sshdkill", kill)
    assert "dut d1" in err


def test_playbook_check_against_the_namespace_host(lab: Lab) -> None:
    """deploy/playbook.yml over real SSH (ansible_connection=ssh) to the namespace sshd, tag
    `check` only: the agent answers there. The install tag (copy + setup.sh: apt-get) is not
    run on the test machine: it would reinstall this machine's packages under the other tests."""
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e .[test])")
    inv = lab.inventory()
    extra = (f"ansible_connection=ssh ansible_python_interpreter={sys.executable} "
             f"vswbench_python={sys.executable}")
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_LOCAL_TEMP": str(lab.dir),
           "ANSIBLE_REMOTE_TEMP": str(lab.dir / "remote"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_PIPELINING": "True",   # a module's run in one SSH session, not three
           "ANSIBLE_SSH_ARGS": (f"-F /dev/null -o UserKnownHostsFile={lab.dir / 'known_hosts'} "
                                "-o ControlMaster=no -o IdentitiesOnly=yes")}
    proc = subprocess.run(["ip", "netns", "exec", lab.tst, playbook, "-i", str(inv),
                           "--limit", "dut", "--tags", "check", "-e", extra,
                           str(ROOT / "deploy/playbook.yml")],
                          capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "d1" in proc.stdout and "failed=0" in proc.stdout
