"""Scenario tester-dut: the engine on the tester "host" (its namespace and CPU), the switch on
the DUT "host" (the switch's namespace and CPU), the veth wire between. A trial through a bridge
at 10 kpps is lossless, and its CPU figures (`cpu`, cycles per packet) are the DUT's cores only,
the tester's apart (`tester_cpu`); the tester's ports receive through threaded NAPI on the
tester's CPU, so the frames the switch sends them are not taken in the DUT's context."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from vswbench.engine.params import TrialParams
from vswbench.host.netns import list_namespaces
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import make_placement
from vswbench.measure.trial import run_trial
from vswbench.run.scope import run_scope
from vswbench.scenario import parse
from vswbench.switches.catalog import all_switches
from vswbench.switches.kernel.napi import napi_thread_pids
from vswbench.testbed.build import Testbed

pytestmark = pytest.mark.integration
SPEC = TrialParams(64, rate_pps=10_000, duration=2.0, warmup=0.5)


def _affinity(pid: int) -> set[int]:
    return os.sched_getaffinity(pid)


def test_tester_dut_bridge_lossless_dut_cpu_only(root, engine):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("tester and DUT need a CPU each")
    cls = all_switches()["bridge"]
    placement = make_placement(TrialOptions(switch="bridge", scenario="tester-dut"))
    tester, dut = placement.tester_cpu, placement.switch_cpu
    assert tester is not None and dut is not None and tester != dut
    with run_scope() as run:
        prefix = str(run.id)
        with Testbed(parse("tester-dut"), cls, run, placement) as tb:
            napi = {hp.ifname: napi_thread_pids(hp.ifname) for hp in tb.plan.host_ports}
            assert all(napi.values()), napi
            assert all(_affinity(pid) == {tester} for pids in napi.values() for pid in pids)
            assert tb.tester_napi.modes and not tb.tester_napi.notes, tb.tester_napi
            result = run_trial(tb, SPEC)
    assert not [ns for ns in list_namespaces() if ns.startswith(prefix)], "namespaces left"
    assert not list(Path("/tmp").glob(f"vsb-{prefix}*")), "temp dirs left"
    summary = f"tx {result.tx_frames} rx {result.rx_frames} warnings {result.warnings}"
    assert result.scenario == "tester-dut"
    assert result.tx_frames >= 0.9 * SPEC.rate_pps * SPEC.duration, summary
    assert result.lost == 0 and result.loss_ratio == 0, summary
    assert set(result.cpu) == {str(dut)}, result.cpu
    assert result.tester_cpu is not None and set(result.tester_cpu) == {str(tester)}
    busy_s = result.cpu[str(dut)]["busy_s"]
    assert result.cycles_per_packet == pytest.approx(busy_s * result.tsc_hz / result.rx_frames)
    assert result.forwarding_mode.startswith(f"napi-threaded cpu{dut}")
