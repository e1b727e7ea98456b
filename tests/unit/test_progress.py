"""The progress bar of `vswbench run` (issue 44, part 6): its total is the spec's points from
the start and never grows (a decide phase's repetitions are counted apart: test_decide.py); its
estimate counts the fewest rounds of the groups still to pair and never falls below what the
budget has left."""

from __future__ import annotations

import time

import pytest

from vswbench.campaign.grouped import fewest_rounds_s
from vswbench.campaign.rounds_phase import ROUND_OVERHEAD_S
from vswbench.campaign.rounds_phase import grouped
from vswbench.campaign.runner import Progress
from vswbench.campaign.spec import builtin
from vswbench.campaign.spec import expand
from vswbench.measure.rounds import SAMPLE_SECONDS
from vswbench.results.paired import MIN_ROUNDS


def test_the_estimate_counts_points_rounds_and_the_budget() -> None:
    prog = Progress(10, remaining_s=30.0, rounds_left_s=12.0)
    assert prog.eta_s() == pytest.approx(42.0)
    prog.deadline = time.monotonic() + 300
    assert 295 < prog.eta_s() <= 300                  # a budget is spent whatever is left
    prog.deadline = time.monotonic() - 5              # past it: the rounds still to come
    assert prog.eta_s() == pytest.approx(42.0)
    assert Progress(1, remaining_s=-3.0).eta_s() == 0.0


def test_a_groups_fewest_rounds() -> None:
    groups = grouped(p for p in expand(builtin("quick")) if p.kind != "stream")
    kernel64 = next(g for g in groups if g[0].size == 64 and g[0].switch == "bridge")
    members = len({p.switch for p in kernel64})
    assert fewest_rounds_s(kernel64) == pytest.approx(
        MIN_ROUNDS * members * (SAMPLE_SECONDS + ROUND_OVERHEAD_S))
    assert fewest_rounds_s([kernel64[0]]) == 0.0      # one switch: no rounds


def test_the_bar_counts_down_between_reports_and_after_the_last_point() -> None:
    from rich.progress import Progress as Bar

    from vswbench.cli.campaign import _Elapsed
    from vswbench.cli.campaign import _Left

    now = time.monotonic()
    bar = Bar()
    task_id = bar.add_task("campaign quick", total=8, began=now - 65, ends=now + 30, extra="")
    bar.update(task_id, completed=8, extra=" (+2 repeated)")     # every point done: rounds go on
    task = bar.tasks[0]
    assert task.finished
    assert _Left().render(task).plain in ("~0:29 left (+2 repeated)", "~0:30 left (+2 repeated)")
    assert _Elapsed().render(task).plain in ("0:01:05", "0:01:06")   # still running
    bar.update(task_id, ends=now - 5)
    assert _Left().render(bar.tasks[0]).plain.startswith("~0:00 left")
