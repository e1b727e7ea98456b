"""The chain cost model applied to a results store: one fitted model per switch and frame size
with its validation, break-even chain lengths and recommended placements. Shared by
`vswbench model fit|predict` (cli/model_cost.py) and the report's "chain model" section, so both
show the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.models.chain_cost import RECOMMENDABLE
from vswbench.models.chain_cost import ChainObservation
from vswbench.models.chain_cost import CostModel
from vswbench.models.chain_cost import PointCheck
from vswbench.models.chain_cost import check
from vswbench.models.chain_cost import fit
from vswbench.models.chain_cost import forwarding_rates
from vswbench.models.chain_cost import groups
from vswbench.models.chain_cost import holdout
from vswbench.models.chain_cost import leave_one_n_out
from vswbench.models.chain_cost import measured_break_even
from vswbench.models.chain_cost import usable
from vswbench.models.chain_data import ChainData
from vswbench.models.chain_data import constancy_note
from vswbench.models.chain_data import extras
from vswbench.safefile import write_text
from vswbench.saferead import read_text

MODEL_NAME = "chain-model.json"
FORMAT = "vswbench chain cost model"
SHOW_N = 10                       # the report and the CLI show n = 1..10 at least
TARGET_ERROR = 0.15               # done when held-out chain lengths are predicted within 15 %


@dataclass(frozen=True)
class BreakEven:
    placement: str
    model: int | None             # bottleneck-core prediction crosses s_core (None: not by n=64)
    eq3: int | None               # equation (3) with an even split: k f / C_total,n
    measured: int | None          # from the measurements alone (None: not reached / not measured)


@dataclass(frozen=True)
class GroupAnalysis:
    model: CostModel
    checks: tuple[PointCheck, ...]           # every observation; in_fit False = held out
    loo_error: dict[str, float | None]       # observation key -> error with its n left out
    holdout_n: tuple[int, ...]
    break_even: tuple[BreakEven, ...]
    curve_n: tuple[int, ...]                 # n = 1..max(SHOW_N, measured)
    curves: dict[str, tuple[float | None, ...]]   # placement -> predicted pps over curve_n
    recommended: tuple[str, ...]             # placement per curve_n
    # without --holdout, the held-out test (interior_holdout): its lengths, and every point as
    # predicted by a fit without them
    test_n: tuple[int, ...] = ()
    test_checks: tuple[PointCheck, ...] = ()

    @property
    def held_out_errors(self) -> list[float]:
        return self.held_out_errors_of(None)

    def held_out_errors_of(self, placement: str | None) -> list[float]:
        """|error| at the held-out lengths, of one placement's series (None: all)."""
        return _held_out_errors(self.checks, placement)

    @property
    def placements(self) -> list[str]:
        """The measured layouts' names, s_core first: each series is judged on its own (the
        n = 1..10 series is s_core; bi and pbp share a core with the busy-polling tester)."""
        names = {c.placement for c in self.checks}
        return sorted(names, key=lambda p: (p != "s_core", p))

    def loo_worst(self, placement: str | None = None) -> dict[str, float | None]:
        """Largest |error| with the length left out: inside the measured range (interpolation)
        and at its two ends (extrapolation, the harder test); of one placement (None: all)."""
        n_of = {c.key: c.n for c in self.checks}
        of = {c.key for c in self.checks if placement in (None, c.placement)}
        ends = (min(self.model.fitted_n), max(self.model.fitted_n))
        out: dict[str, float | None] = {"interior": None, "ends": None}
        for key, err in self.loo_error.items():
            if err is not None and key in of:
                where = "ends" if n_of.get(key) in ends else "interior"
                out[where] = max(abs(err), out[where] or 0.0)
        return out

    def test_worst(self, placement: str | None = None) -> float | None:
        """Largest |error| at the held-out test's lengths (test_n), of one placement (None: all)."""
        errs = _held_out_errors(self.test_checks, placement)
        return max(errs) if errs else None

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model.to_json(), "holdout_n": list(self.holdout_n),
                "held_out_test": {"n": list(self.test_n), "worst_by_placement": {
                    p: self.test_worst(p) for p in self.placements}},
                "leave_n_out_worst": self.loo_worst(),
                "leave_n_out_worst_by_placement": {p: self.loo_worst(p) for p in self.placements},
                "points": [{"n": c.n, "placement": c.placement, "measured_pps": c.measured_pps,
                            "predicted_pps": c.predicted_pps, "error": c.error,
                            "in_fit": c.in_fit, "lower_bound": c.lower_bound,
                            "leave_n_out_error": self.loo_error.get(c.key), "key": c.key}
                           for c in self.checks],
                "break_even": [vars(b) for b in self.break_even],
                "curve_n": list(self.curve_n), "curves": self.curves,
                "recommended": list(self.recommended)}


def _held_out_errors(checks: Sequence[PointCheck], placement: str | None) -> list[float]:
    return [abs(c.error) for c in checks if not c.in_fit and c.error is not None
            and not c.lower_bound and placement in (None, c.placement)]


def verdict(worst: float | None) -> str:
    """'9.3 % (within the 15 % target)': how the CLI and the report judge a largest error."""
    if worst is None:
        return "–"
    ok = "within" if worst <= TARGET_ERROR else "NOT within"
    return f"{worst * 100:.1f} % ({ok} the {TARGET_ERROR * 100:.0f} % target)"


def interior_holdout(lengths: Sequence[int]) -> tuple[int, ...]:
    """The held-out test of a fit on all lengths: every third measured length, never the first
    or the last (n = 1..10: 3, 6, 9), so the test interpolates as a user's prediction would."""
    ns = sorted(set(lengths))
    return tuple(n for n in ns[2::3] if n != ns[-1]) if len(ns) >= 4 else ()


def analyze_group(data: ChainData, obs: Sequence[ChainObservation], *,
                  f_cpu: float | None = None, held: Sequence[int] = ()) -> GroupAnalysis:
    group = obs[0].group
    extra = extras(data, group)
    if held:
        model, rows = holdout(obs, held, f_cpu=f_cpu)
        model = replace(model, extras=extra)
    else:
        model = fit(obs, f_cpu=f_cpu, extras=extra)
        rows = check(model, obs)
    max_rate: dict[int, float] = {}
    for o in forwarding_rates(obs):
        max_rate[o.n] = max(max_rate.get(o.n, 0.0), o.throughput_pps)
    drift = constancy_note(data, group, max_rate)
    if drift:
        model = replace(model, notes=(*model.notes, drift))
    present = {o.pattern for o in obs}
    possible = model.placements()
    names = [p for p in (*RECOMMENDABLE, "default") if p in possible or p in present]
    top = max(SHOW_N, max(o.n for o in obs))
    ns = tuple(range(1, top + 1))
    curves = {p: tuple(model.predict(n, p).throughput_pps for n in ns) for p in names}
    even = tuple(BreakEven(p, model.break_even(p), model.break_even(p, eq3=True),
                           measured_break_even(obs, p)) for p in ("bi", "pbp") if p in possible)
    test_n: tuple[int, ...] = ()
    test_rows: list[PointCheck] = []
    if not held:
        test_n = interior_holdout([o.n for o in usable(obs)])
        try:
            test_rows = holdout(obs, test_n, f_cpu=f_cpu)[1] if test_n else []
        except UsageError:          # too few lengths left to fit
            test_n = ()
    return GroupAnalysis(model, tuple(rows), {} if held else leave_one_n_out(obs, f_cpu=f_cpu),
                         tuple(sorted(held)), even, ns, curves,
                         tuple(model.recommend(n) for n in ns), test_n, tuple(test_rows))


def analyze(data: ChainData, *, f_cpu: float | None = None,
            holdout_n: Sequence[int] = ()) -> tuple[list[GroupAnalysis], list[str]]:
    """Every group that can be fitted, and one line per group that cannot (with the reason)."""
    done: list[GroupAnalysis] = []
    failed: list[str] = []
    by_group = groups(data.observations)
    if holdout_n:
        measured = {o.n for obs in by_group.values() for o in usable(obs)}
        if not set(holdout_n) & measured:
            raise UsageError(f"--holdout {','.join(map(str, holdout_n))}: no chain was measured "
                             f"at those lengths (measured: {','.join(map(str, sorted(measured)))})")
    for (switch, nf, size, _), obs in by_group.items():
        held = sorted(set(holdout_n) & {o.n for o in usable(obs)})
        try:
            done.append(analyze_group(data, obs, f_cpu=f_cpu, held=held))
        except UsageError as exc:
            failed.append(f"{switch}{'' if nf == 'fwd' else f' nf={nf}'} {size}: {exc}")
    return done, failed


# -- the model file ----------------------------------------------------------------------------
def save(path: Path, analyses: Sequence[GroupAnalysis]) -> None:
    data = {"format": FORMAT, "version": 1, "models": [a.model.to_json() for a in analyses],
            "analysis": [a.to_json() for a in analyses]}
    write_text(path, json.dumps(data, indent=1))


def read_models(path: Path) -> list[CostModel]:
    text = read_text(path, "JSON", "--model", fix="write one with `vswbench model fit "
                     "RESULTS_DIR`")                    # bounded, a regular file only
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not data.get("models"):
        raise UsageError(f"{path} is not a chain cost model: write one with `vswbench model fit "
                         "RESULTS_DIR --out MODEL.json`")
    return [CostModel.from_json(m) for m in data["models"]]
