"""`vswbench ab`: two configurations of a switch measured side by side, and whether B differs.

A side (`Side`) is a switch with its backend options (`--a-opt k=v`, `--b-opt k=v`: a function,
an ACL's size, bridge_fdb, ...) and sysctls of the switch's namespace (`--a-sysctl`, `--b-sysctl`:
net.* keys, set once its testbed is built, before the search; host-wide sysctls are never
touched), and optionally the switch file that declares its switch (`--a-switch-file`,
`--b-switch-file`: your own switch, e.g. two builds of one switch as two files whose setup argv
runs two binaries); the side's spec then declares it as `switch.NAME = "PATH"`, as any campaign can.

Each side is one campaign spec (`ab-A`, `ab-B`, written out as TOML and kept with the run in the
store, its sysctls as comments), a search point repeated `rounds` times, validated as any spec is
(campaign/spec.py, execute.check_points) before anything is built. Then, round after round, the
two sides run in a random order (RMIT, Abedi and Brecht, ICPE 2017; never all of A, then all of
B: two identical systems measured one after the other "differed" by up to 38 % in their study),
each search on a fresh testbed through the campaign runner's own point execution, its host-stall
trials excised as every search's are, and every search written to the store the moment it ends.
results/ab.py judges the two sides' NDRs.

With method "rounds" (the default), both sides' testbeds are built once and kept up
(measure/rounds.py Bench), and each round takes one short sample of each side at the tester's
ceiling (MRR), in a random order: results/ab.py judges the per-round ratios B/A by the paired
signed-rank test with a bootstrap interval (results/paired.py), as the campaign's rounds rank
switches. Pairing in time cancels the host's drift that separate searches carry (on this VM
rates measured minutes apart differ 1.2-2x, while alternating samples keep their order).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.campaign.execute import check_points
from vswbench.campaign.execute import execute_point
from vswbench.campaign.execute import plan_for
from vswbench.campaign.point import Point
from vswbench.campaign.spec import CampaignSpec
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.errors import require_root
from vswbench.results.ab import CAMPAIGNS
from vswbench.results.ab import SIDES
from vswbench.results.store import STORE_NAME
from vswbench.results.store import ResultStore
from vswbench.results.store import now
from vswbench.safefile import check_output_dir

MAX_ROUNDS = 100
SYSCTL_KEY = re.compile(r"net(\.[A-Za-z0-9_-]+)+")
SYSCTL_VALUE = re.compile(r"[A-Za-z0-9_.:, -]{1,64}")
OPTION_KEY = re.compile(r"[a-z][a-z0-9_]{0,40}")


@dataclass(frozen=True)
class Side:
    name: str                                  # "A" or "B"
    switch: str
    options: tuple[tuple[str, str], ...] = ()
    sysctls: tuple[tuple[str, str], ...] = ()
    switch_file: str = ""                      # absolute path of the file declaring `switch`
    shape_pps: float | None = None             # the calibration device's shaper rate (shaped)

    def describe(self) -> str:
        declared = [f"(declared in {self.switch_file})"] if self.switch_file else []
        shaped = [f"at {self.shape_pps:,.0f} pps"] if self.shape_pps else []   # "shaped at ..."
        parts = [self.switch, *declared, *shaped, *(f"{k}={v}" for k, v in self.options),
                 *(f"sysctl {k}={v}" for k, v in self.sysctls)]
        return " ".join(parts)


@dataclass(frozen=True)
class ABPlan:
    a: Side
    b: Side
    scenario: str = "p2p"
    size: int | str = 64
    preset: str = "quick"
    rounds: int = 5
    seed: int | None = None
    method: str = "rounds"                     # "rounds": paired MRR samples; "searches"


def parse_pairs(items: tuple[str, ...] | list[str], flag: str) -> tuple[tuple[str, str], ...]:
    """KEY=VALUE items, each key once; UsageError naming the item otherwise."""
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise UsageError(f"{flag} {item!r}: expected KEY=VALUE, e.g. {flag} "
                             + ("net.core.somaxconn=1024" if "sysctl" in flag else
                                "function=acl"))
        if key in out:
            raise UsageError(f"{flag} {key} is given twice: give each key once")
        out[key] = value
    return tuple(out.items())


def check_sysctls(pairs: tuple[tuple[str, str], ...], flag: str,
                  proc: Path = Path("/proc/sys")) -> None:
    for key, value in pairs:
        if not SYSCTL_KEY.fullmatch(key):
            raise UsageError(f"{flag} {key}: only sysctls of the switch's namespace (net.*) are "
                             "set, e.g. net.ipv4.ip_forward=1")
        if not SYSCTL_VALUE.fullmatch(value):
            raise UsageError(f"{flag} {key}={value!r}: a value of letters, digits and . _ : , - "
                             "(at most 64)")
        if not (proc / key.replace(".", "/")).is_file():
            raise UsageError(f"{flag} {key}: no such sysctl on this kernel "
                             f"({proc / key.replace('.', '/')} does not exist)")


def side_switch(side: str, switch: str | None, switch_file: Path | None) -> tuple[str, str]:
    """(switch, absolute path of its file or "") of side A or B from its flags: with a switch
    file, the switch it declares (or the one `switch` names among several); UsageError naming
    the flag otherwise. The file is read (its declarations checked), nothing is declared yet."""
    flag = f"--{side.lower()}-switch-file"
    if switch_file is None:
        if not switch:
            raise UsageError(f"side {side}: no switch; give --switch, --{side.lower()}-switch or "
                             f"{flag}")
        return switch, ""
    from vswbench.switches.catalog import BACKENDS
    from vswbench.switches.external import load_file

    path = Path(os.path.abspath(switch_file))
    names = [d.name for d in load_file(path, [cls.name for cls in BACKENDS], flag)]
    if switch and switch not in names:
        raise UsageError(f"{flag} {switch_file} declares {', '.join(names)}, not {switch}")
    if not switch and len(names) != 1:
        raise UsageError(f"{flag} {switch_file} declares {', '.join(names)}: name side {side}'s "
                         f"switch with --{side.lower()}-switch")
    return switch or names[0], str(path)


def _toml_string(text: str) -> str:
    return json.dumps(text)        # a TOML basic string for the characters the checks allow


def side_spec(plan: ABPlan, side: Side) -> CampaignSpec:
    """The side's campaign: a search point repeated `rounds` times, as a spec (validated)."""
    for key, value in side.options:
        if not OPTION_KEY.fullmatch(key) or not SYSCTL_VALUE.fullmatch(value):
            raise UsageError(f"--{side.name.lower()}-opt {key}={value}: a key of lowercase "
                             "letters, digits and _, a value of letters, digits and . _ : , -")
    size = plan.size if isinstance(plan.size, int) else _toml_string(str(plan.size))
    declared = ([f"switch.{_toml_string(side.switch)} = {_toml_string(side.switch_file)}"]
                if side.switch_file else [])
    lines = ["# vswbench ab: side " + side.name,
             *(f"# sysctl {k} = {v}" for k, v in side.sysctls), *declared,
             "[campaign]", f'name = "{CAMPAIGNS[side.name]}"', "",
             "[[study]]", 'kind = "search"', f"switch = {_toml_string(side.switch)}",
             f"scenario = {_toml_string(plan.scenario)}", f"size = {size}",
             f"preset = {_toml_string(plan.preset)}", f"repetitions = {plan.rounds}",
             *([f"shape_pps = {side.shape_pps:g}"] if side.shape_pps else [])]
    if side.options:
        table = ", ".join(f"{k} = {_toml_string(v)}" for k, v in side.options)
        lines.append(f"options = {{ {table} }}")
    try:
        return parse_spec("\n".join(lines) + "\n", f"ab side {side.name}")
    except UsageError as exc:      # the spec's first problem, in the words of ab's flags
        found = re.search(r"study 1, (.*)", str(exc))
        raise UsageError(f"side {side.name}: {found.group(1) if found else exc}") from None


def schedule(rounds: int, rng: random.Random) -> list[tuple[int, str]]:
    """(round, side) in the order they run: each round both sides, in a random order."""
    out = []
    for r in range(rounds):
        order = list(SIDES)
        rng.shuffle(order)
        out += [(r, s) for s in order]
    return out


Measure = Callable[[Side, Point, ResultStore], dict[str, Any]]


def measure_here(side: Side, point: Point, store: ResultStore) -> dict[str, Any]:
    """One search of the side on a fresh testbed (the runner's execute_point), the side's
    sysctls set in the switch's namespace first."""
    from vswbench.host.netns import sysctl
    from vswbench.measure.method import method_context

    with method_context(plan_for(point), drain=0.05, progress=lambda m: None) as ctx:
        if side.sysctls:
            sysctl(ctx.testbed.switch_ns, **dict(side.sysctls))
        result = execute_point(ctx, point, store, CAMPAIGNS[side.name])
    return {**result, "ab_side": side.name, "sysctls": dict(side.sysctls)}


@dataclass(frozen=True)
class ABRun:
    store: Path
    order: tuple[tuple[int, str], ...]
    failed: int
    seconds: float


def run_ab(plan: ABPlan, out_dir: Path, *, measure: Measure | None = None,
           fingerprint: Mapping[str, Any] | None = None,
           progress: Callable[[str], None] = lambda m: None, root: bool = True) -> ABRun:
    """Measure both sides, interleaved, into OUT_DIR/results.sqlite (a new store); `measure`
    defaults to measure_here (a test hands in its own)."""
    measure = measure or measure_here
    if not 1 <= plan.rounds <= MAX_ROUNDS:
        raise UsageError(f"--rounds {plan.rounds}: give 1 to {MAX_ROUNDS}")
    sides = {"A": plan.a, "B": plan.b}
    specs = {s: side_spec(plan, sides[s]) for s in SIDES}
    points = {s: expand(specs[s]) for s in SIDES}
    check_points(points["A"] + points["B"])
    for s in SIDES:
        check_sysctls(sides[s].sysctls, f"--{s.lower()}-sysctl")
    if root:
        require_root("an A/B comparison")
    store_path = out_dir / STORE_NAME
    check_output_dir(out_dir, "--out", create=False)
    if store_path.exists() or store_path.is_symlink():
        raise UsageError(f"--out {out_dir} already holds a results store: give `vswbench ab` a "
                         "new --out directory")
    check_output_dir(out_dir, "--out")
    what = ("MRR samples on testbeds kept up" if plan.method == "rounds"
            else f"{plan.preset} searches")
    progress(f"A: {plan.a.describe()}; B: {plan.b.describe()}; {plan.rounds} rounds of {what}, "
             f"each side once a round in a random order; results: {out_dir}")
    rng = random.Random(plan.seed)
    order = schedule(plan.rounds, rng)
    start, failed = time.monotonic(), 0
    if plan.method == "rounds":
        return _run_rounds(plan, sides, points, store_path, rng, fingerprint, progress)
    with ResultStore(store_path) as store, side_runs(store, specs, fingerprint) as runs:
        for n, (r, s) in enumerate(order, start=1):
            point = points[s][r]
            progress(f"round {r + 1}/{plan.rounds}, side {s} ({sides[s].describe()}): "
                     f"search {n}/{len(order)}")
            started = now()
            try:
                result = measure(sides[s], point, store)
            except VswbenchError as exc:
                if isinstance(exc, UsageError):
                    raise
                store.record_point(runs[s], point, None, "failed", str(exc), started=started)
                failed += 1
                progress(f"side {s}: failed: {exc}")
                continue
            store.record_point(runs[s], point, result, "done", started=started)
    return ABRun(store_path, tuple(order), failed, time.monotonic() - start)


def _run_rounds(plan: ABPlan, sides: dict[str, Side], points: dict[str, list[Point]],
                store_path: Path, rng: random.Random, fingerprint: Mapping[str, Any] | None,
                progress: Callable[[str], None]) -> ABRun:
    """Both sides' testbeds up at once, `plan.rounds` rounds of one MRR sample each in a random
    order; each side's samples one rounds point of its campaign, written after every round."""
    from vswbench.campaign.rounds_phase import result_of
    from vswbench.campaign.rounds_phase import rounds_point
    from vswbench.host.netns import sysctl
    from vswbench.measure.rounds import Bench
    from vswbench.measure.rounds import Member
    from vswbench.results.paired import Sample
    from vswbench.results.paired import SwitchRounds
    from vswbench.switches.catalog import all_switches

    start = time.monotonic()
    members = [Member(s, plan_for(points[s][0]),
                      bool(getattr(all_switches().get(sides[s].switch), "idle_polls", False)))
               for s in SIDES]
    order = schedule(plan.rounds, rng)
    samples: dict[str, list[Sample]] = {s: [] for s in SIDES}
    took: list[float] = []
    with (ResultStore(store_path) as store,
          side_runs(store, specs_of(plan, sides), fingerprint) as runs,
          Bench(members, progress=lambda m: None) as bench):
        if bench.failed:
            raise VswbenchError("; ".join(f"side {s}: {why}"
                                          for s, why in bench.failed.items()))
        for s in SIDES:
            if sides[s].sysctls:
                sysctl(bench.contexts[s].testbed.switch_ns, **dict(sides[s].sysctls))
        for r in range(plan.rounds):
            began = time.monotonic()
            firsts = [x for x in order if x[0] == r]
            for position, (_, s) in enumerate(firsts):
                m = bench.sample(s)
                samples[s].append(Sample(s, r, position, m.duration_s, m.sent,
                                         m.received, m.stall_ms, m.host_stall, m.ceiling_pps))
            took.append(time.monotonic() - began)
            for s in SIDES:
                store.record_point(runs[s], rounds_point(points[s][0], bench.duration),
                                   {**result_of(SwitchRounds(s, tuple(samples[s])),
                                                list(SIDES), bench, None, took),
                                    "ab_side": s, "sysctls": dict(sides[s].sysctls)},
                                   "done")
            progress(f"round {r + 1}/{plan.rounds}: " + ", ".join(
                f"{s} {samples[s][-1].received_pps / 1e3:,.0f} kpps" for _, s in firsts))
    return ABRun(store_path, tuple(order), 0, time.monotonic() - start)


def specs_of(plan: ABPlan, sides: dict[str, Side]) -> dict[str, CampaignSpec]:
    return {s: side_spec(plan, sides[s]) for s in SIDES}


@contextlib.contextmanager
def side_runs(store: ResultStore, specs: Mapping[str, CampaignSpec],
              fingerprint: Mapping[str, Any] | None) -> Iterator[dict[str, str]]:
    """The two sides' runs in the store, begun together and ended with the run's status
    (done, interrupted by Ctrl-C, or failed)."""
    from vswbench.run.ids import new_run_id

    runs = {s: str(new_run_id()) + s.lower() for s in SIDES}
    for s in SIDES:
        store.begin_run(runs[s], specs[s], dict(fingerprint or {}))
    status = "failed"
    try:
        yield runs
        status = "done"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        for s in SIDES:
            store.end_run(runs[s], status)
