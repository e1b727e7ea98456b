"""The points where a command stops checking its input and starts acting on the machine: a run
scope (state file, cleanup registry), a namespace, the switch's availability check, the engine's
probe, a campaign's runner, `clean`'s scan, the agent's loop. `guard_build` replaces each by a
function that raises BuildReached, which the CLI's error boundary does not catch (it is not an
Exception): a test that hands a command bad input sees it escape if anything was about to be built
before the input was refused. `reached` lists the points reached, in order."""

from __future__ import annotations

from typing import Any

import pytest


class BuildReached(BaseException):
    """A command went past its input checks (BaseException: the boundary lets it through)."""


BOUNDARIES: tuple[tuple[str, str], ...] = (
    ("vswbench.run.scope", "run_scope"),
    ("vswbench.measure.demo", "run_scope"),
    ("vswbench.measure.demo", "probe"),
    ("vswbench.measure.plan", "ensure_runnable"),
    ("vswbench.measure.method", "ensure_runnable"),
    ("vswbench.host.netns.Namespace", "__enter__"),
    ("vswbench.campaign.runner.CampaignRunner", "run"),
    ("vswbench.campaign.remote.AgentRunner", "run"),
    ("vswbench.testbed.leftovers", "plan_clean"),
    ("vswbench.campaign.agent", "serve"),
    ("vswbench.engine.probe", "probe"),
    ("vswbench.host.doctor", "run_doctor"),
    ("vswbench.measure.plan", "switch_rows"),
)


def _target(dotted: str) -> Any:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def guard_build(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace every boundary; returns the list each reached boundary is appended to."""
    reached: list[str] = []
    for owner, name in BOUNDARIES:
        where = f"{owner}.{name}"

        def stop(*args: Any, _where: str = where, **kwargs: Any) -> Any:
            reached.append(_where)
            raise BuildReached(_where)

        monkeypatch.setattr(_target(owner), name, stop)
    # the last check of a plan asks the engine's probe whether the kernel generator works here:
    # the same answer everywhere, without running the engine
    monkeypatch.setattr(_target("vswbench.measure.plan"), "xdplive_problem",
                        lambda: "not probed in the unit tests")
    return reached
