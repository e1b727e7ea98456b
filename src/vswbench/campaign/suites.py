"""The built-in campaign suites, as TOML texts (parsed and validated by campaign/spec.py)."""

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
