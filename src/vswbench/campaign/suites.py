"""The built-in campaign suites, as TOML texts (parsed and validated by campaign/spec.py), and
`adhoc`: quick's text for the switches and sizes given on the command line."""

from __future__ import annotations

import json
from collections.abc import Sequence

# switch = ["*"] is every switch but the calibration device; the runner skips those unavailable
# on the machine. quick is the README's main command: the fast search's NDR then latency at 90 %
# of it (a runner can take the NDR from the search point: search_twin). standard uses the quick
# preset too: 88 searches with `fast` (21 s per undecided load) would take hours, not 30 minutes.
QUICK = """\
[campaign]
name = "quick"
description = "Every switch, p2p, 64 and 1518 bytes: conditional throughput, NDR and PDR (MLRsearch, brief goals), latency at 90 % of it, then each group's switches paired in rounds of MRR samples that rank them"
# at most 7 minutes on two cores: each group's testbeds built once, its searches and latency
# trials, then the group's share of what the budget leaves in paired rounds (at least
# MIN_ROUNDS: campaign/rounds_phase.py), which decide the order.
budget = "6m30s"

[[study]]
kind = ["search", "latency"]
switch = ["*"]
scenario = "p2p"
size = [64, 1518]
preset = "brief"
fractions = [90]
duration = 1
"""  # noqa: E501 (a TOML string value: one line)


STANDARD = """\
[campaign]
name = "standard"
description = "quick plus pvp, 512 bytes and IMIX, latency at 50 and 90 % of NDR, a load sweep at 64 bytes"

[[study]]
kind = ["search", "latency"]
switch = ["*"]
scenario = ["p2p", "pvp"]
size = [64, 512, 1518, "imix"]
preset = "quick"
fractions = [50, 90]
duration = 1

[[study]]
kind = "sweep"
switch = ["*"]
scenario = "p2p"
size = 64
points = 10
duration = 1
"""

BUILTIN: dict[str, str] = {"quick": QUICK, "standard": STANDARD}
_QUICK_BUDGET = "6m30s"          # QUICK's budget and sizes, as its text has them
_QUICK_SIZES = (64, 1518)


ADHOC_NAME = "adhoc"
MIN_ADHOC_BUDGET_S = 60.0


def adhoc(switches: Sequence[str], sizes: Sequence[int | str]) -> str:
    """The campaign `vswbench run --switches bridge,xdp --sizes 64` runs: the quick suite's text
    (its studies, preset, latency fraction, paired rounds) with these switches and sizes, its
    budget quick's per switch and size (quick spends its budget over every switch of "*" at its
    two sizes) times theirs, at least MIN_ADHOC_BUDGET_S. Names and sizes are the caller's to
    check (campaign/spec.py parses the text and names what is wrong)."""
    from vswbench.campaign.values import parse_budget
    from vswbench.switches.catalog import ranked_switches

    quick_s = parse_budget(_QUICK_BUDGET, []) or MIN_ADHOC_BUDGET_S
    per = quick_s / (max(1, len(ranked_switches())) * len(_QUICK_SIZES))
    budget = max(MIN_ADHOC_BUDGET_S, per * len(switches) * len(sizes))
    what = f"{', '.join(switches)} at {', '.join(f'{s}' for s in sizes)}"
    text = QUICK
    for old, new in (('name = "quick"', f'name = "{ADHOC_NAME}"'),
                     (f'budget = "{_QUICK_BUDGET}"', f"budget = {round(budget)}"),
                     ('switch = ["*"]', f"switch = {json.dumps(list(switches))}"),
                     (f"size = {json.dumps(list(_QUICK_SIZES))}",
                      f"size = {json.dumps(list(sizes))}"),
                     ('description = "Every switch, p2p, 64 and 1518 bytes:',
                      f"description = {json.dumps('quick for ' + what)[:-1]}:")):
        if text.count(old) != 1:       # QUICK changed: this must follow it (a unit test runs it)
            raise AssertionError(f"the quick suite's text has no single {old!r}")
        text = text.replace(old, new)
    return text
