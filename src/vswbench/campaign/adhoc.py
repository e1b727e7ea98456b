"""`vswbench run --switches bridge,xdp --sizes 64`: an ad-hoc campaign from the command line,
the quick suite's methodology for the switches and sizes given (campaign/suites.py `adhoc`).
The names are checked against the catalog and the sizes as a spec's are, each problem naming
its flag and the choices, before anything is made."""

from __future__ import annotations

from vswbench.campaign.spec import CampaignSpec
from vswbench.campaign.spec import parse_spec
from vswbench.campaign.suites import adhoc
from vswbench.campaign.values import ALL_SWITCHES
from vswbench.campaign.values import BadValue
from vswbench.campaign.values import _size
from vswbench.campaign.values import _switch
from vswbench.errors import UsageError

DEFAULT_SIZES = "64,1518"


def _items(flag: str, raw: str) -> list[str]:
    items = [x.strip() for x in raw.split(",")]
    if not raw.strip() or any(not x for x in items):
        raise UsageError(f"{flag} {raw!r}: give a comma-separated list without empty items, "
                         f"e.g. {flag} " + ("bridge,xdp" if flag == "--switches" else "64,1518"))
    return list(dict.fromkeys(items))


def adhoc_campaign(switches: str | None, sizes: str | None) -> CampaignSpec:
    """The campaign of --switches (default: every switch, "*") at --sizes (default quick's)."""
    names = _items("--switches", switches if switches is not None else ALL_SWITCHES)
    problems = []
    for name in names:
        try:
            _switch(name)
        except BadValue as exc:
            problems.append(f"--switches: {exc}")
    values: list[int | str] = []
    for raw in _items("--sizes", sizes if sizes is not None else DEFAULT_SIZES):
        try:
            values.append(_size(int(raw) if raw.isdigit() else raw))
        except BadValue as exc:
            problems.append(f"--sizes: {exc}")
    if problems:
        raise UsageError("\n".join(problems))
    return parse_spec(adhoc(names, list(dict.fromkeys(values))),
                      source="--switches/--sizes (the quick suite's methodology)")
