"""Private Open vSwitch daemons for one run: a database, ovsdb-server and ovs-vswitchd.

Nothing here touches a system-wide Open vSwitch: the database file, sockets, pidfiles and logs all
live in one private directory (inside the run's temporary directory), and every OVS command is
pointed at them explicitly. ovs-vswitchd runs inside the switch's namespace, because the netdev
ports of the userspace datapath open their interfaces in the daemon's own namespace.

Each daemon is started in the foreground (no --detach), so the PID we hold is the daemon's own; it is
registered with the cleanup registry and recorded in the run state the moment it exists, so
`vswbench clean` can stop it by PID after the run was killed. Stopping asks politely first
(`ovs-appctl -t CTL exit`), then SIGTERM, then SIGKILL, always by that PID.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from vswbench.errors import CommandError
from vswbench.errors import VswbenchError
from vswbench.host.netns import in_netns
from vswbench.host.netns import run
from vswbench.host.netns import wait_until
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import Registration
from vswbench.run.registry import wait_or_kill
from vswbench.run.state import RunState
from vswbench.run.state import open_state
from vswbench.safefile import open_regular

BINARIES = ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
SCHEMA_DIRS = (Path("/usr/share/openvswitch"), Path("/usr/local/share/openvswitch"))
INSTALL_FIX = "apt-get install openvswitch-switch (or run ./setup.sh)"


class OvsError(VswbenchError):
    pass


def find_schema() -> Path | None:
    for directory in SCHEMA_DIRS:
        schema = directory / "vswitch.ovsschema"
        if schema.is_file():
            return schema
    return None


def missing_binaries() -> list[str]:
    return [name for name in BINARIES if shutil.which(name) is None]


@dataclass(frozen=True)
class OvsPaths:
    """Every file of one private OVS instance, under `root`."""

    root: Path

    @property
    def db(self) -> Path:
        return self.root / "conf.db"

    @property
    def db_sock(self) -> Path:
        return self.root / "db.sock"

    def ctl(self, daemon: str) -> Path:
        return self.root / f"{daemon}.ctl"

    def pidfile(self, daemon: str) -> Path:
        return self.root / f"{daemon}.pid"

    def log(self, daemon: str) -> Path:
        return self.root / f"{daemon}.log"

    def mgmt(self, bridge: str) -> str:
        """The bridge's OpenFlow management socket, as ovs-ofctl wants it."""
        return f"unix:{self.root / bridge}.mgmt"

    @property
    def db_remote(self) -> str:
        return f"unix:{self.db_sock}"

    def env(self) -> dict[str, str]:
        """Environment for OVS programs: every default directory is the private one."""
        env = dict(os.environ)
        for var in ("OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR"):
            env[var] = str(self.root)
        env.pop("OVS_DB", None)
        return env


def make_private_dir(run_id: RunId, registry: CleanupRegistry, temp_dir: str,
                     state: RunState | None) -> tuple[Path, Registration]:
    """A fresh directory for one OVS instance: inside the run's temp dir if it has one, else
    /tmp/vsb-<run id>-ovs-XXXX (found by `vswbench clean` if the run is killed)."""
    if temp_dir:
        path = Path(tempfile.mkdtemp(prefix="ovs-", dir=temp_dir))
    else:
        path = Path(tempfile.mkdtemp(prefix=f"vsb-{run_id}-ovs-"))
        if state is not None:
            state.add_temp_dir(str(path))
    reg = registry.register(f"OVS directory {path}", lambda: shutil.rmtree(path, True))
    return path, reg


def ovs_cmd(paths: OvsPaths, argv: Sequence[str], *, check: bool = True,
            timeout: float = 30.0) -> str:
    """Run an OVS client with the private environment (argv list, never a shell)."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                          env=paths.env())
    if check and proc.returncode != 0:
        raise CommandError(list(argv), proc.returncode, proc.stderr)
    return proc.stdout


@dataclass
class OvsDaemon:
    """One foreground OVS daemon, owned by PID."""

    name: str                       # "ovsdb-server" or "ovs-vswitchd"
    paths: OvsPaths
    argv: list[str]
    registry: CleanupRegistry
    state: RunState | None
    netns: str | None = None
    proc: subprocess.Popen[bytes] | None = None
    _reg: Registration | None = field(default=None, repr=False)

    @property
    def ctl(self) -> Path:
        return self.paths.ctl(self.name)

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise OvsError(f"{self.name} not started")
        return self.proc.pid

    def start(self, ready_timeout: float = 20.0) -> OvsDaemon:
        argv = in_netns(self.netns, self.argv)
        # the daemon writes to its own copy of the file: ours is closed once it has started
        with os.fdopen(open_regular(self.paths.root / f"{self.name}.out", append=True),
                       "wb") as out:
            try:
                # Own process group: a terminal's Ctrl-C reaches only us; we stop the daemon
                # ourselves.
                self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                             stderr=subprocess.STDOUT, env=self.paths.env(),
                                             process_group=0)
            except OSError as exc:
                raise OvsError(f"cannot start {self.name}: {exc}") from exc
        self._reg = self.registry.register(f"{self.name} (PID {self.proc.pid})", self.stop)
        if self.state is not None:
            self.state.add_process(self.proc.pid, argv)
        wait_until(self._ready, timeout=ready_timeout, what=f"{self.name} to open {self.ctl}")
        return self

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise OvsError(f"{self.name} exited with status {self.proc.returncode} while starting:"
                           f"\n{self.log_tail()}")
        return self.ctl.exists()

    def log_tail(self, lines: int = 15) -> str:
        text = ""
        for path in (self.paths.log(self.name), self.paths.root / f"{self.name}.out"):
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """`ovs-appctl exit`, then SIGTERM, then SIGKILL: only ever to our own PID. Idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):   # the signals below stop it
                ovs_cmd(self.paths, ["ovs-appctl", "-t", str(self.ctl), "exit"], check=False,
                        timeout=timeout)
            wait_or_kill(self.proc, timeout)
        if self._reg is not None:
            self._reg.discard()
            self._reg = None
        if self.state is not None:
            self.state.forget_process(self.proc.pid)
            self.state = None


@dataclass
class OvsInstance:
    """ovsdb-server + ovs-vswitchd (the latter inside `netns`), private to one run."""

    run_id: RunId
    registry: CleanupRegistry
    netns: str
    temp_dir: str = ""
    other_config: dict[str, str] = field(default_factory=dict)
    vswitchd_binary: str = "ovs-vswitchd"   # ovs-dpdk: /usr/lib/openvswitch-switch-dpdk/...
    ready_timeout: float = 20.0
    paths: OvsPaths | None = None
    db_server: OvsDaemon | None = None
    vswitchd: OvsDaemon | None = None
    _dir_reg: Registration | None = field(default=None, repr=False)

    def start(self) -> None:
        schema = find_schema()
        if schema is None:
            raise OvsError(f"no vswitch.ovsschema in {', '.join(map(str, SCHEMA_DIRS))}: "
                           f"{INSTALL_FIX}")
        state = open_state(str(self.run_id))
        root, self._dir_reg = make_private_dir(self.run_id, self.registry, self.temp_dir, state)
        paths = self.paths = OvsPaths(root)
        ovs_cmd(paths, ["ovsdb-tool", "create", str(paths.db), str(schema)])
        common = ["--no-chdir", "-vconsole:off", "-vfile:info"]
        self.db_server = OvsDaemon("ovsdb-server", paths, [
            "ovsdb-server", str(paths.db), f"--remote=punix:{paths.db_sock}",
            f"--unixctl={paths.ctl('ovsdb-server')}", f"--pidfile={paths.pidfile('ovsdb-server')}",
            f"--log-file={paths.log('ovsdb-server')}", *common], self.registry, state).start()
        wait_until(paths.db_sock.exists, timeout=10, what=f"{paths.db_sock}")
        settings = [f"other_config:{key}={value}" for key, value in self.other_config.items()]
        self.vsctl("--no-wait", "init", *(["--", "set", "Open_vSwitch", ".", *settings]
                                          if settings else []))
        self.vswitchd = OvsDaemon("ovs-vswitchd", paths, [
            self.vswitchd_binary, paths.db_remote, f"--unixctl={paths.ctl('ovs-vswitchd')}",
            f"--pidfile={paths.pidfile('ovs-vswitchd')}",
            f"--log-file={paths.log('ovs-vswitchd')}", *common], self.registry, state,
            netns=self.netns).start(self.ready_timeout)

    def _paths(self) -> OvsPaths:
        if self.paths is None:
            raise OvsError("Open vSwitch instance not started")
        return self.paths

    def _client(self, argv: list[str], *, check: bool = True, timeout: float = 30.0) -> str:
        """An OVS client call; when it fails because a daemon died, say that (not the client's
        "Connection refused")."""
        try:
            return ovs_cmd(self._paths(), argv, check=check, timeout=timeout)
        except CommandError as exc:
            for daemon in (self.db_server, self.vswitchd):
                if daemon is not None and daemon.proc is not None and not daemon.running():
                    raise OvsError(f"{daemon.name} (pid {daemon.pid}) exited with status "
                                   f"{daemon.proc.returncode}; its log ends:\n"
                                   f"{daemon.log_tail(5)}") from exc
            raise

    def vsctl(self, *args: str, timeout: float = 30.0) -> str:
        paths = self._paths()
        return self._client(["ovs-vsctl", f"--db={paths.db_remote}", f"--timeout={timeout:g}",
                             *args], timeout=timeout + 5)

    def ofctl(self, command: str, bridge: str, *args: str, check: bool = True,
              timeout: float = 30.0, options: Sequence[str] = ()) -> str:
        return self._client(["ovs-ofctl", *options, command, self._paths().mgmt(bridge), *args],
                            check=check, timeout=timeout)

    def appctl(self, *args: str, check: bool = True) -> str:
        return self._client(["ovs-appctl", "-t", str(self._paths().ctl("ovs-vswitchd")), *args],
                            check=check)

    def pin(self, cpu: int) -> None:
        """Pin every thread of ovs-vswitchd to one CPU (threads started later inherit it)."""
        if self.vswitchd is not None:
            run(["taskset", "-a", "-p", "-c", str(cpu), str(self.vswitchd.pid)])

    def require_port_type(self, port_type: str, who: str) -> None:
        """OvsError unless the running ovs-vswitchd offers ports of `port_type` (e.g. afxdp)."""
        types = self.vsctl("get", "Open_vSwitch", ".", "iface_types")
        if port_type not in types:
            raise OvsError(f"{who}: ovs-vswitchd offers no {port_type} ports (iface_types: "
                           f"{types.strip()})")

    def pids(self) -> list[int]:
        return [d.pid for d in (self.db_server, self.vswitchd) if d is not None and d.running()]

    def stop(self) -> None:
        """Daemons first (vswitchd, then the database), then the directory. Idempotent."""
        for daemon in (self.vswitchd, self.db_server):
            if daemon is not None:
                daemon.stop()
        if self._dir_reg is not None:
            self._dir_reg.release()
            self._dir_reg = None


def pmd_on(cpu: int | None) -> dict[str, str]:
    """other_config putting the PMD threads on one CPU (none set when the CPU is unknown)."""
    return {"pmd-cpu-mask": hex(1 << cpu)} if cpu is not None else {}
