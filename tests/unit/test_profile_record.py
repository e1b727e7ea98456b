"""measure/profile_record.PerfProfile and host/cpustat.CoreUsage read a trial's stored profile and
cores back (TrialResult.perf_profile, TrialResult.core_usage): the values as stored, the stored
order, and defaults for what is missing or malformed."""

from __future__ import annotations

from tests.unit.test_cli_trial_print import PROFILE
from vswbench.measure.profile_record import CpuCheck
from vswbench.measure.profile_record import PerfProfile
from vswbench.measure.trial_result import TrialResult


def test_a_stored_profile_reads_back_as_stored() -> None:
    p = TrialResult.from_json({"profile": PROFILE}).perf_profile
    assert p is not None and (p.event, p.hz, p.seconds) == ("cpu-clock", 997, 1.2345)
    assert [c.cpu for c in p.cores] == ["0", "1"] and p.warnings == ("perf lost 3 chunks (made up)",)
    busy, idle = p.cores
    assert busy.samples == 1200 and busy.category_share("receive") == PROFILE["cores"]["0"][
        "categories"]["receive"]
    assert busy.top_functions[2].function == "vsb_gen" and not busy.top_functions[2].kernel
    assert busy.own is not None and busy.own.share == 0.75
    assert [f.function for f in busy.own.top_kernel_functions][:2] == ["br_forward", "[bpf]"]
    assert idle.own is None and idle.top_comms == () and idle.samples == 0
    check = p.cpu_check
    assert [(c.cpu, c.differ) for c in check.cores] == [("0", False), ("1", True)]
    assert (check.cycles_per_packet_scheduler, check.cycles_per_packet_perf, check.differ) == (
        5678.9, 6543.2, True)


def test_a_malformed_profile_reads_as_defaults() -> None:
    p = PerfProfile.from_json({"hz": 997.5, "seconds": "x", "cores": {"0": 3, "1": {
        "samples": True, "categories": {"idle": "1"}, "top_functions": [7, {"share": 0.5}],
        "testbed": {}}}, "cpu_check": {"per_core": {"1": None}}, "warnings": "no list"})
    assert (p.event, p.hz, p.seconds, p.warnings) == ("", 997.5, 0.0, ())
    (core,) = p.cores
    assert (core.cpu, core.samples, core.category_share("idle"), core.own) == ("1", 0, 0.0, None)
    assert [(f.function, f.kernel, f.share) for f in core.top_functions] == [("", False, 0.5)]
    assert p.cpu_check == CpuCheck()
    assert TrialResult.from_json({}).perf_profile is None


def test_stored_cores_read_back_as_core_usage() -> None:
    r = TrialResult.from_json({"cpu": {"3": {"busy": 0.25, "busy_s": 1.5, "softirq": "x"}}})
    (cpu, usage), = r.core_usage.items()
    assert (cpu, usage.cpu, usage.busy, usage.busy_s, usage.softirq) == ("3", 3, 0.25, 1.5, 0.0)
