"""Campaigns: a TOML spec of studies, each a list of values per dimension, validated in full
before anything runs and expanded into the Cartesian product of measurement points.

Why TOML and lists: a study is the tuple (kind, scenario, pairs, switch, size, rate, burst, ...)
of Ara et al. and the workload product of Fang et al.; writing one list per
dimension keeps the spec short and the product obvious. The raw text is kept so that every
result records the exact spec it came from (RFC 8172, RFC 8204).

    [campaign]
    name = "bridge-vs-ovs"          # letters, digits, . _ -; names the results in the store
    description = "optional"
    out = "results/bridge-vs-ovs"   # optional default for `vswbench run --out`

    [[study]]
    kind = ["search", "latency"]    # search | sweep | trial | latency | b2b
    switch = ["bridge", "ovs"]      # or ["*"]: every switch except the calibration device shaped
    scenario = "p2p"                # p2p, p2p-pair, pvp, chain:N, pairs:N, rr; or "chain" with
    size = [64, 1518, "imix"]       #   chain = [N, ...] (likewise "pairs" with pairs = [...])
    fractions = [90]                # latency: percentages of the NDR, one list per point

Every dimension takes a list (a scalar is a one-element list) except `repetitions` (a number),
`fractions` (one list of percentages) and `options` (a table of backend options, or a list of
tables to vary them). Keys that only some kinds use (rate, preset, duration, points, fractions,
trials, max_frames) must suit at least one kind of the study; points of the other kinds ignore
them. `shape_pps` applies to switch "shaped" only. Placements name CPU layouts the runner
resolves: default (tester and switch on separate cores, as `vswbench trial`), s_core, bi, pbp.

Every mistake in a spec is collected and reported at once, one line per mistake, naming the
study (counted from 1, in file order) and the key, a bad value shown cut to a line (values.short);
nothing is created before the spec is valid. The input is bounded (spec_file.py: a regular file
of at most 1 MB, nesting at most 8 deep) and so is the campaign: its points are counted from the
lists' lengths (point_count) before anything is expanded, and more than MAX_POINTS are refused.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from vswbench import scenario as scenarios
from vswbench.campaign.paper import PaperInfo
from vswbench.campaign.paper import parse_paper
from vswbench.campaign.point import DEFAULT_DURATION
from vswbench.campaign.point import Point
from vswbench.campaign.spec_checks import churn_problems
from vswbench.campaign.spec_checks import io_problems
from vswbench.campaign.spec_checks import option_problems
from vswbench.campaign.spec_checks import shape_problems
from vswbench.campaign.spec_file import parse_toml
from vswbench.campaign.spec_file import read_spec_text
from vswbench.campaign.spec_functions import merge_functions
from vswbench.campaign.spec_functions import rule_update_problems
from vswbench.campaign.spec_sockets import SOCKET_KEYS
from vswbench.campaign.spec_sockets import socket_points
from vswbench.campaign.spec_sockets import socket_problems
from vswbench.campaign.spec_sockets import socket_switch_count
from vswbench.campaign.spec_switches import declare_spec_switches
from vswbench.campaign.suites import BUILTIN
from vswbench.campaign.values import ALL_SWITCHES
from vswbench.campaign.values import KINDS
from vswbench.campaign.values import MAX_PROBLEMS
from vswbench.campaign.values import SCALAR_ONLY
from vswbench.campaign.values import SOCKET_KINDS
from vswbench.campaign.values import BadValue
from vswbench.campaign.values import Problems
from vswbench.campaign.values import TooManyProblems
from vswbench.campaign.values import check_value
from vswbench.campaign.values import did_you_mean
from vswbench.campaign.values import parse_budget
from vswbench.campaign.values import short
from vswbench.errors import UsageError
from vswbench.switches.catalog import calibration_switches
from vswbench.switches.catalog import nf_option_problems

# Keys only some kinds use: given for a study none of whose kinds uses it, a key is a mistake.
KIND_KEYS = {"rate": ("trial",), "preset": ("search", "latency", "b2b"),
             "duration": ("trial", "sweep", "latency"), "points": ("sweep",),
             "fractions": ("latency",), "trials": ("b2b",), "max_frames": ("b2b",)}
STUDY_KEYS: tuple[str, ...] = (
              "kind", "scenario", "switch", "size", "rate", "burst", "flows", "chain", "pairs",
              "placement", "repetitions", "preset", "duration", "points", "fractions", "io",
              "options", "shape_pps", "trials", "max_frames", "churn", "profile", "pdr_loss")
# the forwarding function and its table (switches/rules/functions.py): they become the backend
# options function= and table_size= of each point (one options table per combination)
FUNCTION_KEYS = ("function", "table_size")
STUDY_KEYS += FUNCTION_KEYS
# kind rule-update (measure/rule_update.py): N rules installed and removed per point, and the
# changes per second during its forwarding comparison at `rate` (default: half the NDR)
STUDY_KEYS += ("rules", "update_rate")
# kinds stream, rr, crr (measure/sockets.py): the socket client's protocol and message size,
# the links' MTU and offloads, and the service path; flows and duration are shared keys
STUDY_KEYS += SOCKET_KEYS
KIND_KEYS.update({key: SOCKET_KINDS for key in SOCKET_KEYS})
KIND_KEYS.update({"rules": ("rule-update",), "update_rate": ("rule-update",),
                  "rate": (*KIND_KEYS["rate"], "rule-update"),
                  "duration": (*KIND_KEYS["duration"], "rule-update", *SOCKET_KINDS),
                  "preset": (*KIND_KEYS["preset"], "rule-update")})   # of its NDR search
RULE_UPDATE_LOAD = 0.5             # of the NDR, when a rule-update study gives no rate
CAMPAIGN_KEYS = ("name", "description", "out", "budget")

TOP_KEYS = ("campaign", "study", "paper", "reference", "claim", "switch")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# a campaign's points at most, even with --yes (which a campaign of 1,000 needs): 20,000 points are
# days of measuring; counting them costs nothing, expanding a million took 29 s (1e9: the memory)
MAX_POINTS = 20_000


@dataclass(frozen=True)
class Study:
    """One [[study]] with its values validated and normalized (scenarios resolved, "*" expanded,
    rates in pps, fractions as fractions of the NDR)."""
    index: int                                   # 1-based, in file order
    kinds: tuple[str, ...]
    scenarios: tuple[str, ...]
    switches: tuple[str, ...]
    sizes: tuple[int | str, ...]
    rates: tuple[float, ...] = ()
    bursts: tuple[int, ...] = (1,)
    flows: tuple[int, ...] = (1,)
    placements: tuple[str, ...] = ("default",)
    presets: tuple[str, ...] = ("fast",)
    durations: tuple[float, ...] = ()            # () = the kind's default
    points: tuple[int, ...] = (20,)
    fractions: tuple[float, ...] = (0.1, 0.5, 0.9, 1.0)
    ios: tuple[str, ...] = ("afpacket",)
    options: tuple[tuple[tuple[str, str], ...], ...] = ((),)
    shape_pps: tuple[float, ...] = ()
    trials: tuple[int, ...] = (50,)
    max_frames: tuple[int, ...] = (100_000,)
    repetitions: int = 1
    churns: tuple[str | None, ...] = (None,)     # "A/D" flow churn, None = the fixed flows
    profile: bool = False                        # perf profile per point (measure/profiling.py)
    pdr_loss: float | None = None                # the PDR's loss ratio (None: the preset's)
    rules: tuple[int, ...] = (1000,)
    update_rates: tuple[float, ...] = (2.0,)
    protos: tuple[str, ...] = ("tcp",)           # stream, rr, crr (spec_sockets.py)
    msg_sizes: tuple[int, ...] = ()              # () = the kind's default
    mtus: tuple[int, ...] = (1500,)
    offloads: tuple[str, ...] = ("default",)
    services: tuple[bool, ...] = (False,)


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    studies: tuple[Study, ...]
    text: str                                    # the exact spec, recorded with every run
    source: str = "<string>"
    description: str = ""
    out: str | None = None
    paper: PaperInfo | None = None               # [paper], [[reference]], [[claim]] (paper.py)
    budget_s: float | None = None                # [campaign] budget in seconds (None: no decide phase)

    def points(self) -> list[Point]:
        return expand(self)


# -- parsing -----------------------------------------------------------------------------------
def load_spec(path: str | Path) -> CampaignSpec:
    p = Path(path)
    text = read_spec_text(p, "give a TOML file of at most 1 MB, or a built-in suite: "
                             + ", ".join(BUILTIN))
    return parse_spec(text, source=str(p))


def parse_spec(text: str, source: str = "<string>") -> CampaignSpec:
    data = parse_toml(text, source)
    problems, stopped = Problems(), False
    try:
        spec = _checked_spec(data, text, source, problems)
    except TooManyProblems:
        spec, stopped = None, True
    if spec is not None:
        return spec
    if len(problems) == 1:
        raise UsageError(f"campaign spec {source}: {problems[0]}")
    lines = [*problems] + ([f"(checking stopped after these {MAX_PROBLEMS}: fix them and run it "
                            "again)"] if stopped else [])
    raise UsageError(f"campaign spec {source} has {'more than ' if stopped else ''}"
                     f"{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in lines))


def _checked_spec(data: dict[str, Any], text: str, source: str,
                  problems: Problems) -> CampaignSpec | None:
    """The spec of parsed TOML `data`, or None with its mistakes in `problems`."""
    for key in data:
        if key not in TOP_KEYS:
            problems.append(f"unknown top-level key {short(key)}{did_you_mean(key, TOP_KEYS)}: "
                            "a spec has one [campaign] table and [[study]] tables (and a "
                            "paper spec [paper], [[reference]], [[claim]]; [switch.NAME])")
    declare_spec_switches(data, source, problems)
    paper = parse_paper(data, problems)
    name, description, out, budget = _campaign_head(data.get("campaign"), problems)
    studies = _studies(data.get("study"), problems)
    if problems:
        return None
    return CampaignSpec(name, tuple(studies), text, source, description, out, paper, budget)


def _campaign_head(head: Any, problems: Problems) -> tuple[Any, Any, Any, float | None]:
    """[campaign]'s name, description, out and budget (as given: checked into `problems`)."""
    if not isinstance(head, dict):
        problems.append("[campaign] is missing: add [campaign] with name = \"...\"")
        return "", "", None, None
    for key in head:
        if key not in CAMPAIGN_KEYS:
            problems.append(f"[campaign], unknown key {short(key)}"
                            f"{did_you_mean(key, CAMPAIGN_KEYS)}: the keys are "
                            f"{', '.join(CAMPAIGN_KEYS)}")
    name = head.get("name", "")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        problems.append(f"[campaign], name: {short(name)} is not a name: use 1-64 letters, "
                        "digits, '.', '_' or '-', starting with a letter or digit")
    description = head.get("description", "")
    if not isinstance(description, str):
        problems.append("[campaign], description: must be a string")
    out = head.get("out")
    if out is not None and not (isinstance(out, str) and out.strip()):
        problems.append("[campaign], out: must be a directory path (a string)")
    return name, description, out, parse_budget(head.get("budget"), problems)


def _studies(raw_studies: Any, problems: Problems) -> list[Study]:
    """The [[study]] tables, checked until their points together pass MAX_POINTS."""
    studies: list[Study] = []
    if not isinstance(raw_studies, list) or not raw_studies:
        problems.append("no [[study]]: add at least one [[study]] table with kind and switch")
        return studies
    total = 0
    for i, raw in enumerate(raw_studies, 1):
        study = _study(i, raw, problems)
        if study is not None:
            studies.append(study)
            total += point_count(study)
        if len(studies) > 1 and total > MAX_POINTS:     # the rest is not checked
            problems.append(f"studies 1 to {i} make {total:,} points together, more than "
                            f"the {MAX_POINTS:,} a campaign may have: shrink their lists or "
                            "split the campaign into several specs")
            break
    return studies


def _values(i: int, key: str, raw: Any, problems: list[str]) -> list[Any] | None:
    where = f"study {i}, {key}"
    if key in SCALAR_ONLY and isinstance(raw, list):
        problems.append(f"{where}: takes one number, not a list")
        return None
    if key == "options" and isinstance(raw, dict):
        raw = [raw]
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        problems.append(f"{where}: empty list: give at least one value")
        return None
    if key == "fractions" and any(isinstance(v, list) for v in values):
        problems.append(f"{where}: one list of percentages per study, e.g. fractions = [50, 90]")
        return None
    out, ok = [], True
    for v in values:
        try:
            out.append(check_value(key, v))
        except BadValue as e:
            problems.append(f"{where}: {e}")
            ok = False
    return list(dict.fromkeys(out)) if ok else None


def _study(i: int, raw: Any, problems: list[str]) -> Study | None:
    if not isinstance(raw, dict):
        problems.append(f"study {i}: must be a table ([[study]] followed by key = value lines)")
        return None
    before = len(problems)
    for key in raw:
        if key not in STUDY_KEYS:
            problems.append(f"study {i}, unknown key {short(key)}{did_you_mean(key, STUDY_KEYS)}")
    v = {key: _values(i, key, raw[key], problems) for key in STUDY_KEYS if key in raw}
    kinds = v.get("kind") or []
    problems += _key_problems(i, raw, kinds)
    names = _resolve_scenarios(i, v, raw, problems)
    switches = _every_switch(v.get("switch") or [])
    merge_functions(i, v, raw, problems)
    study = _made_study(i, v, kinds, names, switches)
    count = point_count(study)
    if count > MAX_POINTS:       # before the checks that walk the lists' products
        problems.append(f"study {i}: {count:,} points (the product of its lists' lengths), more "
                        f"than the {MAX_POINTS:,} a campaign may have: shrink its lists or split "
                        "it into several studies or specs")
        return None
    problems += _combination_problems(study, raw, v)
    return None if len(problems) > before else study


def _key_problems(i: int, raw: dict[str, Any], kinds: list[str]) -> list[str]:
    """kind or switch missing, a key none of the study's kinds uses, a trial without rate."""
    problems = [f"study {i}, {key}: missing: add {key} = [...]"
                + (f" ({', '.join(KINDS)})" if key == "kind" else " (or [\"*\"])")
                for key in ("kind", "switch") if key not in raw]
    for key, users in KIND_KEYS.items():
        if key in raw and kinds and not set(users) & set(kinds):
            problems.append(f"study {i}, {key}: only kind {' or '.join(users)} uses it, and "
                            f"this study's kinds are {', '.join(kinds)}: remove {key} or add "
                            "such a kind")
    if "trial" in kinds and "rate" not in raw:
        problems.append(f"study {i}, rate: kind trial needs rate = [...] (pps, e.g. \"100k\")")
    return problems


def _every_switch(switches: list[str]) -> list[str]:
    """The switches with "*" expanded to every switch of the catalog, ranked."""
    if ALL_SWITCHES not in switches:
        return switches
    from vswbench.switches.catalog import ranked_switches

    every = ranked_switches()
    return list(dict.fromkeys(s for x in switches for s in (every if x == "*" else [x])))


def _made_study(i: int, v: dict[str, list[Any] | None], kinds: list[str], names: list[str],
                switches: list[str]) -> Study:
    """The study of the checked values `v`, each key not given its default."""
    def get(key: str) -> tuple[Any, ...] | None:
        values = v.get(key)
        return tuple(values) if values else None
    return Study(i, tuple(kinds), tuple(names), tuple(switches), get("size") or (64,),
                 get("rate") or (), get("burst") or (1,), get("flows") or (1,),
                 get("placement") or ("default",), get("preset") or ("fast",),
                 get("duration") or (), get("points") or (20,),
                 get("fractions") or Study.fractions, get("io") or ("auto",),
                 get("options") or ((),), get("shape_pps") or (), get("trials") or (50,),
                 get("max_frames") or (100_000,), (v.get("repetitions") or [1])[0],
                 get("churn") or (None,),
                 bool((v.get("profile") or [False])[0]), (v.get("pdr_loss") or [None])[0],
                 get("rules") or (1000,), get("update_rate") or (2.0,),
                 get("proto") or ("tcp",), get("msg_size") or (), get("mtu") or (1500,),
                 get("offloads") or ("default",), get("service") or (False,))


def _combination_problems(study: Study, raw: dict[str, Any],
                          v: dict[str, list[Any] | None]) -> list[str]:
    """What the study's switches, scenarios, options and kinds cannot do together."""
    i, kinds = study.index, list(study.kinds)
    switches, names = list(study.switches), list(study.scenarios)
    tables = list(study.options)
    problems = [f"study {i}, options: {p}" for p in nf_option_problems(
        [dict(t) for t in tables], switches, names)]
    problems += shape_problems(i, switches, raw, v.get("size") or [])
    problems += option_problems(i, switches, tables)
    problems += io_problems(i, switches, v.get("io") or [], tables)
    problems += churn_problems(i, v)
    if "b2b" in kinds:
        from vswbench.measure.session import control_capable

        for n in names:
            if not control_capable(scenarios.parse(n)):
                problems.append(f"study {i}, scenario: b2b needs a tester that also receives "
                                f"(p2p, pvp, chain:N, rr), and {n} has separate senders and "
                                "receivers")
    if "rule-update" in kinds:
        problems += rule_update_problems(i, switches)
    problems += socket_problems(i, kinds, names, v.get("switch") or [], v.get("proto") or [])
    return problems


def _resolve_scenarios(i: int, v: dict[str, Any], raw: dict[str, Any],
                       problems: list[str]) -> list[str]:
    """Bare "chain" / "pairs" become chain:N / pairs:N for each value of the chain / pairs key;
    those keys make sense only with them."""
    given = v.get("scenario") if "scenario" in raw else ["p2p"]
    if given is None:
        return []
    names: list[str] = []
    for s in given:
        if s in ("chain", "pairs"):
            counts = v.get(s)
            if s not in raw:
                problems.append(f"study {i}, scenario: {s!r} needs {s} = [N, ...] "
                                f"(or write \"{s}:N\")")
            names += [scenarios.parse(f"{s}:{n}").name for n in counts or []]
        else:
            names.append(s)
    for key in ("chain", "pairs"):
        if key in raw:
            others = [s for s in given if s not in ("chain", "pairs")]
            if key not in given or others:
                problems.append(f"study {i}, {key}: {key} = [N, ...] needs scenario = \"{key}\" "
                                f"({key}:N is built per value)"
                                + (f"; {', '.join(others)} is not a {key}" if others else ""))
    return list(dict.fromkeys(names))


# -- expansion ---------------------------------------------------------------------------------
def expand(spec: CampaignSpec) -> list[Point]:
    """Every study's product in a fixed order: repetition, switch, shape_pps, options, scenario,
    size, flows, burst, placement, io, kind, churn, then the kind's own keys. Kind is near the end so
    a search and the latency that can reuse its NDR run one after the other; repetitions are
    outermost so that a campaign cut short has a full round first. Points that several studies
    produce are kept once (the store keys them by `key`)."""
    seen: dict[str, Point] = {}
    for st in spec.studies:
        for rep, switch in itertools.product(range(st.repetitions), st.switches):
            shapes = st.shape_pps if switch in calibration_switches() else (None,)
            for combo in itertools.product(shapes, st.options, st.scenarios, st.sizes, st.flows,
                                           st.bursts, st.placements, st.ios, st.kinds):
                for churn in st.churns:
                    for point in _kind_points(st, rep, switch, combo):
                        point = replace(point, churn=churn) if churn is not None else point
                        seen.setdefault(point.key, point)
    return list(seen.values())


def point_count(st: Study) -> int:
    """The points `expand` makes of one study, from its lists' lengths (nothing expanded): points
    that several studies share are counted in each, so a campaign's sum is an upper bound."""
    def per_kind(kind: str) -> int:
        n = 1
        for key, values in (("rate", st.rates), ("preset", st.presets),
                            ("duration", st.durations), ("points", st.points),
                            ("trials", st.trials), ("max_frames", st.max_frames)):
            if kind in KIND_KEYS[key]:
                n *= max(1, len(values))
        if kind in SOCKET_KINDS:
            n *= math.prod(max(1, len(x)) for x in (st.protos, st.msg_sizes, st.mtus,
                                                    st.offloads, st.services))
        return n * (len(st.rules) * len(st.update_rates) if kind == "rule-update" else 1)
    devices = calibration_switches()
    frame_kinds = [k for k in st.kinds if k not in SOCKET_KINDS]
    switches = sum(len(st.shape_pps) if s in devices else 1 for s in st.switches)
    common = st.repetitions * math.prod(len(x) for x in (
        st.options, st.flows, st.placements, st.churns))
    # socket points take their size from msg_size and no io or burst (spec_sockets.py)
    frames = switches * len(st.scenarios) * math.prod(
        len(x) for x in (st.sizes, st.bursts, st.ios)) * sum(per_kind(k) for k in frame_kinds)
    sockets = sum(socket_switch_count(st.switches, s) for s in st.scenarios) * sum(
        per_kind(k) // (max(1, len(st.protos)) if k == "crr" else 1)
        for k in st.kinds if k in SOCKET_KINDS)
    return common * (frames + sockets)


def _kind_points(st: Study, rep: int, switch: str, combo: tuple[Any, ...]) -> list[Point]:
    shape, options, scen, size, flows, burst, placement, io, kind = combo

    def uses(key: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
        return values if kind in KIND_KEYS[key] else (None,)
    durations = st.durations or (DEFAULT_DURATION.get(kind),)
    out = []
    for rate, preset, duration, points, trials, max_frames in itertools.product(
            uses("rate", st.rates or (None,)), uses("preset", st.presets),
            uses("duration", durations),
            uses("points", st.points), uses("trials", st.trials),
            uses("max_frames", st.max_frames)):
        fractions = st.fractions if kind in KIND_KEYS["fractions"] else None
        point = Point(kind, switch, scen, size, rate, burst, flows, placement, preset,
                      duration, points, fractions, io, options, shape, trials, max_frames,
                      rep, st.index, profile=st.profile,
                      pdr_loss=st.pdr_loss if kind in KIND_KEYS["preset"] else None)
        if kind in SOCKET_KINDS:
            out += socket_points(st, point)
        elif kind == "rule-update":
            out += [replace(point, rules=n, update_rate=u)
                    for n, u in itertools.product(st.rules, st.update_rates)]
        else:
            out.append(point)
    return out


def builtin(name: str) -> CampaignSpec:
    if name not in BUILTIN:
        raise UsageError(f"unknown built-in suite {name!r}{did_you_mean(name, BUILTIN)}: "
                         f"choose from {', '.join(BUILTIN)}, or give a spec file")
    return parse_spec(BUILTIN[name], source=f"built-in suite {name}")
