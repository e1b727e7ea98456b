import json
import time

import pytest

from vswbench.engine.process import EngineError
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import run_engine
from vswbench.run.registry import CleanupRegistry
from vswbench.run.state import RunState
from vswbench.run.state import load_all


def test_run_engine_collects_final(fake_engine):
    result = run_engine(["gen"], engine=fake_engine, timeout=10)
    assert result.returncode == 0
    assert [r.type for r in result.records] == ["start", "final"]
    assert result.final.tx_frames == 100


def test_first_record_times_mark_when_the_traffic_began(fake_engine):
    """A trial's stall window opens at the driver's "start" record (measure/trial.py run_trial),
    not when the process was launched: an engine that takes 0.3 s to set up must not move it."""
    launched = time.monotonic_ns()
    with EngineProcess(["slow-start"], engine=fake_engine) as proc:
        proc.wait(timeout=10)
        start, final = proc.first_seen_ns("start"), proc.first_seen_ns("final")
    assert start is not None and final is not None and proc.first_seen_ns("interval") is None
    assert start - launched >= 0.3e9
    assert final - start >= 0.2e9


def test_not_supported_is_exit_3_with_stderr(fake_engine):
    with pytest.raises(EngineError) as info:
        run_engine(["unsupported"], engine=fake_engine, timeout=10)
    assert info.value.not_supported and info.value.exit_code == 3
    assert info.value.returncode == 3
    assert "no AF_XDP" in str(info.value) and "no AF_XDP" in info.value.stderr


def test_usage_error_is_reported(fake_engine):
    with pytest.raises(EngineError) as info:
        run_engine(["usage"], engine=fake_engine, timeout=10)
    assert info.value.returncode == 2 and info.value.exit_code == 1
    assert "--bogus" in str(info.value)


def test_non_json_output_is_an_error(fake_engine):
    with pytest.raises(EngineError, match="not a record"):
        run_engine(["garbage"], engine=fake_engine, timeout=10)


def test_missing_final_record(fake_engine):
    result = run_engine(["silent-exit"], engine=fake_engine, timeout=10)
    with pytest.raises(EngineError, match="no final record"):
        _ = result.final


def test_long_running_stopped_by_sigterm_gives_final(fake_engine):
    registry = CleanupRegistry()
    with EngineProcess(["sink"], engine=fake_engine, registry=registry) as sink:
        start = sink.wait_for_record("start", timeout=10)
        assert start.data["mode"] == "sink"
        assert len(registry) == 1
        result = sink.stop()
    assert len(registry) == 0
    assert result.check().final.rx_frames == 42
    assert not sink.running


def test_context_exit_stops_engine(fake_engine):
    with EngineProcess(["sink"], engine=fake_engine) as sink:
        sink.wait_for_record("start", timeout=10)
        pid = sink.pid
    assert sink.proc.returncode == 0
    assert sink.result().final.rx_frames == 42
    assert pid > 0


def test_wait_timeout_stops_and_marks(fake_engine):
    with EngineProcess(["sink"], engine=fake_engine) as sink:
        sink.wait_for_record("start", timeout=10)
        result = sink.wait(timeout=0.2)
    assert result.timed_out and result.final.rx_frames == 42


def test_sigkill_only_after_timeout(fake_engine):
    proc = EngineProcess(["stubborn"], engine=fake_engine, stop_timeout=0.3)
    with proc:
        proc.wait_for_record("start", timeout=10)
        t0 = time.monotonic()
        result = proc.stop()
    assert time.monotonic() - t0 >= 0.3
    assert result.returncode == -9
    with pytest.raises(EngineError, match="SIGKILL"):
        result.check()


def test_wait_for_record_when_engine_exits_early(fake_engine):
    with (EngineProcess(["unsupported"], engine=fake_engine) as proc,
          pytest.raises(EngineError) as info):
        proc.wait_for_record("start", timeout=10)
    assert info.value.not_supported


def test_wait_for_record_times_out(fake_engine):
    with (EngineProcess(["sink"], engine=fake_engine) as proc,
          pytest.raises(EngineError, match="no 'never' record")):
        proc.wait_for_record("never", timeout=0.2)


def test_pipes_do_not_deadlock(fake_engine):
    result = run_engine(["noisy"], engine=fake_engine, timeout=60)
    assert len(result.of_type("interval")) == 20000
    assert result.final.tx_frames == 1


def test_state_file_records_and_forgets_pid(fake_engine):
    state = RunState.create("vsb0abc")
    registry = CleanupRegistry()
    with EngineProcess(["sink"], engine=fake_engine, registry=registry, state=state) as sink:
        sink.wait_for_record("start", timeout=10)
        saved = json.loads(state.path.read_text())
        assert [p["pid"] for p in saved["processes"]] == [sink.pid]
        assert saved["processes"][0]["start_time"] is not None
    assert json.loads(state.path.read_text())["processes"] == []
    assert [s.run_id for s in load_all()] == ["vsb0abc"]
    state.remove()
    assert load_all() == []


def test_a_failed_network_function_ends_the_phase_at_once(fake_engine):
    """measure/trial.py: while a driver runs, a server (network function, receiver) that fails
    fails the phase with its own error, not after the driver's duration; one that runs on does
    not, and the driver's result comes back when it ends."""
    from vswbench.measure.trial import _wait_watching

    with EngineProcess(["sink"], engine=fake_engine) as driver, \
            EngineProcess(["usage"], engine=fake_engine) as failing:
        began = time.monotonic()
        with pytest.raises(EngineError, match="--bogus"):
            _wait_watching(driver, {"nf1": failing}, timeout=30)
        assert time.monotonic() - began < 10   # the driver would run for 30 s
    with EngineProcess(["gen"], engine=fake_engine) as driver, \
            EngineProcess(["sink"], engine=fake_engine) as server:
        assert _wait_watching(driver, {"nf1": server}, timeout=30).final.tx_frames == 100
        assert server.running
