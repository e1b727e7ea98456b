"""The OVS studies on real namespaces (Emmerich et al., Fig. 6 and 7), through the testbed and the
control-mode session that campaigns use:

- flow_table=exact with 1000 flows delivers >= 99 % at 5 kpps and OVS holds about one datapath
  flow per flow (with the default port rules the same 1000 flows share one datapath flow);
- clones=3 delivers at the tester, and both extra ports sent and their sink received the copies;
- nothing is left behind (namespaces, OVS daemons, run state, temporary directories);
- bad option values exit 2 with the reason, before anything is created.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vswbench.engine.params import TrialParams
from vswbench.host.netns import list_namespaces
from vswbench.measure.session import ControlSession
from vswbench.run.scope import run_scope
from vswbench.run.state import process_start_time
from vswbench.run.state import state_dir
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.ovs.switch import Ovs
from vswbench.testbed.build import Testbed

RATE, SECONDS, FLOWS = 5000.0, 2.0, 1000
PLACEMENT = Placement(0, 1, (1,))


@pytest.fixture
def ovs(root, engine) -> type[Ovs]:
    avail = Ovs.availability()
    if not avail.ok:
        pytest.skip(f"ovs not available: {avail.reason} (fix: {avail.fix})")
    return Ovs


@contextmanager
def session(options: dict[str, str], flows: int, seen: list[tuple[str, list[int]]]
            ) -> Iterator[tuple[Testbed, ControlSession]]:
    """An ovs p2p testbed and its session; records the run id and the OVS daemons' PIDs."""
    with (run_scope() as run,
          Testbed(parse("p2p"), Ovs, run, PLACEMENT, options, flows=flows) as tb):
        assert isinstance(tb.switch, Ovs) and tb.switch.ovs is not None
        seen.append((str(run.id), tb.switch.ovs.pids()))
        with ControlSession(tb, TrialParams(64, flows=flows)) as s:
            s.warm_up(RATE, 0.5)
            yield tb, s


def assert_nothing_left(seen: list[tuple[str, list[int]]]) -> None:
    for run_id, pids in seen:
        assert pids and not [p for p in pids if process_start_time(p) is not None], pids
        assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]
        assert not list(Path("/tmp").glob(f"vsb-{run_id}-*"))
        assert not (state_dir() / f"{run_id}.json").exists()


@pytest.mark.timeout(180)
def test_exact_rules_make_one_datapath_flow_per_flow(ovs) -> None:
    seen: list[tuple[str, list[int]]] = []
    with session({"flow_table": "exact"}, FLOWS, seen) as (tb, s):
        assert tb.switch is not None
        assert "smac+sip" in s.driver.argv                     # the engine varies MAC and IP
        trial = s.measure(RATE, SECONDS).result
        stats = tb.switch.stats()
    where = f"{trial.tx_frames} sent, {trial.lost} lost; OVS: {stats}"
    assert trial.tx_frames == RATE * SECONDS and trial.loss_ratio <= 0.01, where
    assert stats["exact_rules"] == FLOWS, where
    # measured here: exactly 1000 datapath flows, every one installed by a successful upcall
    assert stats["datapath_flows"] >= 0.98 * FLOWS, where
    assert stats["cache"]["miss_with_success_upcall"] >= 0.98 * FLOWS, where   # type: ignore
    assert stats["cache"]["miss_with_failed_upcall"] == 0, where              # type: ignore
    # the default port rules: the same 1000 flows (UDP source ports) share one datapath flow
    with session({}, FLOWS, seen) as (tb, s):
        assert tb.switch is not None
        s.measure(RATE, 1.0)
        port_stats = tb.switch.stats()
    assert port_stats["datapath_flows"] <= 2, port_stats
    assert_nothing_left(seen)


@pytest.mark.timeout(180)
def test_clones_reach_the_tester_and_the_extra_ports(ovs) -> None:
    seen: list[tuple[str, list[int]]] = []
    with session({"clones": "3"}, 1, seen) as (tb, s):
        assert isinstance(tb.switch, Ovs)
        before = tb.switch.stats()["clone_ports"]
        trial = s.measure(RATE, 1.0).result
        after = tb.switch.stats()["clone_ports"]
        assert tb.switch.sink_netns in list_namespaces()
        rules = tb.switch.config_dump()
    assert trial.loss_ratio <= 0.01, f"{trial.lost} of {trial.tx_frames} lost"
    assert isinstance(before, dict) and isinstance(after, dict) and len(after) == 2
    assert "actions=output:2,output:3,output:4" in rules
    for port, counts in after.items():
        sent = counts["ovs_tx_packets"] - before[port]["ovs_tx_packets"]
        got = counts["sink_rx_packets"] - before[port]["sink_rx_packets"]
        assert sent >= 0.99 * trial.tx_frames and got == sent, (port, before, after)
    assert_nothing_left(seen)


@pytest.mark.timeout(60)
def test_bad_options_exit_2_before_anything(root, tmp_path) -> None:
    """The values are checked while planning (plan_trial, parse_spec), before a run id exists:
    nothing of a run can be created. (Namespaces are not compared before and after: other runs
    may share the machine.)"""
    cli = [sys.executable, "-m", "vswbench"]
    for option, message in (("clones=0", "clones must be a whole number"),
                            ("flow_table=bogus", "flow_table must be port")):
        proc = subprocess.run([*cli, "trial", "--switch", "ovs", "--option", option],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    spec = tmp_path / "bad.toml"
    spec.write_text('[campaign]\nname = "bad"\n[[study]]\nkind = "search"\nswitch = "ovs"\n'
                    'options = {clones = 0}\n')
    out = tmp_path / "out"
    proc = subprocess.run([*cli, "run", str(spec), "--out", str(out)], capture_output=True,
                          text=True, timeout=30, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2 and "study 1, options: ovs: clones must be" in proc.stderr, \
        proc.stderr
    assert not out.exists()
