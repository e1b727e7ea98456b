"""Every switch backend by name (an explicit table: backends are classes handed in), what other
packages need of all of them (the suites' "*", the calibration baseline, the daemons the profile
classifier knows, the tools doctor checks, the roles of the names `clean` removes, the lists the
integration tests run), and the checks of chain option nf that need the whole table. Adding a
backend: its module and its entry in BACKENDS."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from functools import lru_cache

from vswbench.errors import UsageError
from vswbench.run.ids import RUN_ROLES
from vswbench.run.ids import run_name_re
from vswbench.scenario import parse
from vswbench.switches.base import Switch
from vswbench.switches.bpf import TcBpfSwitch
from vswbench.switches.bpf import XdpSwitch
from vswbench.switches.chain import nf as chain_nf
from vswbench.switches.cni import BACKENDS as CNI_BACKENDS
from vswbench.switches.dpdk import Memif
from vswbench.switches.dpdk import Testpmd
from vswbench.switches.external import Declaration
from vswbench.switches.external import ExternalSwitch
from vswbench.switches.external import load_file
from vswbench.switches.external import make_class
from vswbench.switches.kernel import BridgeSwitch
from vswbench.switches.kernel import DockerBridge
from vswbench.switches.kernel import KernelSwitch
from vswbench.switches.kernel import MacvlanSwitch
from vswbench.switches.kernel import RouterFlowtable
from vswbench.switches.kernel import RouterSwitch
from vswbench.switches.kernel import ShapedSwitch
from vswbench.switches.kernel import TcMirredSwitch
from vswbench.switches.kernel import VethSwitch
from vswbench.switches.ovs import Ovs
from vswbench.switches.ovs import OvsAfxdp
from vswbench.switches.ovs import OvsDpdk

BACKENDS: tuple[type[Switch], ...] = (
    VethSwitch, BridgeSwitch, DockerBridge, RouterSwitch, RouterFlowtable, MacvlanSwitch, Ovs,
    OvsAfxdp, TcBpfSwitch, TcMirredSwitch, XdpSwitch, ShapedSwitch, Memif, Testpmd, OvsDpdk,
    *CNI_BACKENDS)


# switches the user declared ([switch.NAME] in a spec, --switch-file): added by the command
# line or the campaign runner through add_user_switches, never by an import
_USER: dict[str, type[ExternalSwitch]] = {}


def all_switches() -> dict[str, type[Switch]]:
    """name -> backend class, for every backend this package has and every switch the user
    declared in this process."""
    return {**{cls.name: cls for cls in BACKENDS}, **_USER}


def add_user_switches(declarations: Iterable[Declaration]) -> list[str]:
    """Make each declared switch a backend (switches/external.py); a name declared twice with
    two different declarations is refused. The names."""
    names = []
    for decl in declarations:
        known = _USER.get(decl.name)
        if known is not None and known.declaration != decl:
            raise UsageError(f"switch {decl.name} is declared twice ({decl.source} and "
                             f"{known.declaration.source}); give one another name")
        _USER[decl.name] = make_class(decl)
        names.append(decl.name)
    return names


def load_switch_file(path: str) -> list[str]:
    """--switch-file: its [switch.NAME] tables added as backends; their names."""
    return add_user_switches(load_file(path, builtin=[cls.name for cls in BACKENDS]))


def calibration_switches() -> list[str]:
    """The known-answer devices (shaped): not switches to rank, left out of switch = ["*"]."""
    return [cls.name for cls in BACKENDS if cls.calibration]


def ranked_switches() -> list[str]:
    """What switch = ["*"] means (the suites): every backend but the calibration devices and
    the container networks (the runtimes' wirings of the mechanisms ranked here)."""
    return sorted(cls.name for cls in BACKENDS if not cls.calibration
                  and not cls.container_network)


def baseline_switch(io: str) -> str:
    """The backend with no switch in the path over the port kind of engine io `io` (veth for the
    kernel I/O paths, memif for DPDK): where the tester's ceiling is measured."""
    kind = "dpdk" if io == "dpdk" else "kernel"
    return next(cls.name for cls in BACKENDS if cls.direct and cls.port_kind == kind)


def matrix_switches() -> list[str]:
    """Every backend that forwards (all but the calibration devices), sorted: the integration
    tests' trial matrix (tests/integration/test_trial_matrix.py)."""
    return sorted(cls.name for cls in BACKENDS if not cls.calibration)


def kernel_switches() -> list[str]:
    """The ranked switches built on KernelSwitch (the kernel forwards between veth or macvlan
    ports in the switch namespace), in the catalog's order: tests/integration/
    test_switch_kernel.py builds each and sends both ways."""
    ranked = set(ranked_switches())
    return [cls.name for cls in BACKENDS if cls.name in ranked and issubclass(cls, KernelSwitch)]


def role_patterns() -> dict[str, str]:
    """Every role (a regex of what follows the run id in a name) a run gives its objects, with
    what carries it: the testbed's (run/ids.py RUN_ROLES) and each backend's link_roles (a
    --switch-file switch's too: ExternalSwitch's), which `vswbench clean` recognises."""
    return _roles(BACKENDS)


def _roles(backends: tuple[type[Switch], ...]) -> dict[str, str]:
    roles = dict(RUN_ROLES)
    classes: tuple[type[Switch], ...] = (*backends, ExternalSwitch)
    for cls in classes:
        for pattern, what in cls.link_roles.items():
            roles.setdefault(pattern, what)
    return roles


@lru_cache(maxsize=4)
def _run_name_re(backends: tuple[type[Switch], ...]) -> re.Pattern[str]:
    return run_name_re(_roles(backends))


def run_name_parts(name: str) -> tuple[str, str] | None:
    """(run id, role) of a name made exactly as a run makes it (run id + one of role_patterns,
    nothing after), else None: `vsbcafebabe` and `vsbbeefeth0` are not a run's names."""
    match = _run_name_re(BACKENDS).match(name)
    return (match.group(1), match.group(2)) if match else None


def is_run_name(name: str) -> bool:
    return run_name_parts(name) is not None


def daemon_comms() -> tuple[str, ...]:
    """The thread-name prefixes of every backend's daemons (the profile classifier's "daemon")."""
    return tuple(dict.fromkeys(comm for cls in BACKENDS for comm in cls.daemons))


def backend_tools() -> dict[str, str]:
    """Every program a backend runs -> which backends need it and its package (doctor's rows)."""
    users: dict[str, list[str]] = {}
    packages: dict[str, str] = {}
    for cls in BACKENDS:
        for tool, package in cls.tools.items():
            users.setdefault(tool, []).append(cls.name)
            packages.setdefault(tool, package)
    return {tool: f"switch {', '.join(names)} ({packages[tool]})" for tool, names in users.items()}


def nf_option_problems(options: Iterable[Mapping[str, str]], switches: Sequence[str],
                    scenarios: Sequence[str]) -> list[str]:
    """A campaign study's problems with option nf: one line per bad value or combination."""
    classes = all_switches()
    found: list[str] = []
    for table in options:
        if chain_nf.OPTION not in table and chain_nf.POLL_OPTION not in table:
            continue
        try:
            kind = chain_nf.nf_kind(table)
            chain_nf.nf_poll(table)
        except UsageError as exc:
            found.append(str(exc))
            continue
        for switch in switches:
            for name in scenarios:
                problem = (chain_nf.nf_problem(kind, parse(name), switch)
                           or chain_nf.poll_problem(table, kind, parse(name), classes.get(switch)))
                if problem:
                    found.append(problem)
    return list(dict.fromkeys(found))


def nf_unavailable(options: Mapping[str, str]) -> str | None:
    """Why the elements of option nf cannot be built on this machine (nf=ovs without Open
    vSwitch, nf=ovs-afxdp without AF_XDP), with the fix; None when they can (or the value is
    bad: validation says so)."""
    kind = options.get(chain_nf.OPTION)
    if kind not in chain_nf.OVS_KINDS:
        return None
    backend = all_switches()["ovs" if kind == chain_nf.OVS else "ovs-afxdp"]
    state = backend.availability()
    if state.ok:
        return None
    return f"nf={kind} cannot be built here: {state.reason} (fix: {state.fix})"
