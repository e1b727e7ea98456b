import os
import signal
import time

import pytest

from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import Terminated
from vswbench.run.registry import cleanup_scope
from vswbench.run.registry import tearing_down
from vswbench.run.registry import unwinding_signals


class FakeResource:
    """Records creation and removal in a shared journal."""

    def __init__(self, name, journal, registry, fail=False):
        self.name, self.journal, self.registry, self.fail = name, journal, registry, fail
        self.reg = None

    def __enter__(self):
        self.journal.append(f"+{self.name}")
        self.reg = self.registry.register(self.name, self.remove)
        return self

    def remove(self):
        self.journal.append(f"-{self.name}")
        if self.fail:
            raise RuntimeError(f"{self.name} refused to go")

    def __exit__(self, *exc):
        self.reg.release()


def wait_for_signal_delivery():
    # The handler runs between bytecodes of the main thread: give it bytecodes to run.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.001)
    pytest.fail("signal was not delivered")


def test_teardown_reverse_order():
    journal, registry = [], CleanupRegistry(log=lambda m: None)
    for name in "abc":
        FakeResource(name, journal, registry).__enter__()
    registry.teardown()
    assert journal == ["+a", "+b", "+c", "-c", "-b", "-a"]
    assert len(registry) == 0


def test_release_runs_once_and_unregisters():
    journal, registry = [], CleanupRegistry(log=lambda m: None)
    with FakeResource("a", journal, registry):
        with FakeResource("b", journal, registry):
            pass
        assert registry.pending() == ["a"]
    registry.teardown()
    assert journal == ["+a", "+b", "-b", "-a"]


def test_failure_does_not_stop_the_rest():
    journal, logged = [], []
    registry = CleanupRegistry(log=logged.append)
    FakeResource("a", journal, registry).__enter__()
    FakeResource("b", journal, registry, fail=True).__enter__()
    FakeResource("c", journal, registry).__enter__()
    failures = registry.teardown()
    assert journal[-3:] == ["-c", "-b", "-a"]
    assert [f.description for f in failures] == ["b"]
    assert "b" in logged[0]


def test_discard_forgets_without_running():
    journal, registry = [], CleanupRegistry()
    reg = registry.register("x", lambda: journal.append("ran"))
    reg.discard()
    registry.teardown()
    assert journal == []


@pytest.mark.parametrize("sig,exc,code", [(signal.SIGTERM, Terminated, "SIGTERM"),
                                          (signal.SIGHUP, Terminated, "SIGHUP"),
                                          (signal.SIGINT, KeyboardInterrupt, None)])
def test_signal_unwinds_and_tears_down(sig, exc, code):
    journal = []
    with pytest.raises(exc) as info, cleanup_scope(CleanupRegistry(log=lambda m: None)) as registry:
        FakeResource("ns-a", journal, registry).__enter__()
        with FakeResource("veth", journal, registry), FakeResource("engine", journal, registry):
            FakeResource("leftover", journal, registry).__enter__()
            os.kill(os.getpid(), sig)
            wait_for_signal_delivery()
    if code is not None:   # SIGTERM takes Ctrl-C's path: a KeyboardInterrupt naming the signal
        assert isinstance(info.value, KeyboardInterrupt) and info.value.signal_name == code
    # with-blocks unwind innermost first; the registry removes what is left, newest first
    assert journal == ["+ns-a", "+veth", "+engine", "+leftover",
                       "-engine", "-veth", "-leftover", "-ns-a"]


def test_handlers_restored_after_scope():
    before = signal.getsignal(signal.SIGTERM)
    with cleanup_scope():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_signal_during_teardown_does_not_cut_it_short():
    journal, logged = [], []
    registry = CleanupRegistry(log=logged.append)

    def slow_undo():
        assert tearing_down()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs here and must not raise
        journal.append("first undone")

    registry.register("second", lambda: journal.append("second undone"))
    registry.register("first", slow_undo)
    with unwinding_signals():
        registry.teardown()
    assert journal == ["first undone", "second undone"]
    assert not tearing_down()
