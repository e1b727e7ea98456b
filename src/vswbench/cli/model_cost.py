"""`vswbench model fit RESULTS_DIR` and `vswbench model predict --chain N --placement P`: the
per-packet CPU cost model of network-function chains (Raumer et al., models/chain_cost.py).

Added to the `model` group by cli/model.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import click
from rich.table import Table

from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.errors import UsageError
from vswbench.models.chain_analysis import MODEL_NAME
from vswbench.models.chain_analysis import GroupAnalysis
from vswbench.models.chain_analysis import analyze
from vswbench.models.chain_analysis import read_models
from vswbench.models.chain_analysis import save
from vswbench.models.chain_analysis import verdict
from vswbench.models.chain_cost import METRIC_TITLES
from vswbench.models.chain_cost import CostModel
from vswbench.models.chain_cost import Parameter
from vswbench.models.chain_data import load
from vswbench.models.chain_layout import PLACEMENTS
from vswbench.safefile import check_output_file

SCALE = {"k": 1e3, "m": 1e6, "g": 1e9}


def parse_hz(text: str | None) -> float | None:
    """'2.596G' -> 2.596e9 (--f-cpu); None stays None."""
    if text is None:
        return None
    s = text.strip().lower().removesuffix("hz")
    try:
        value = float(s[:-1]) * SCALE[s[-1]] if s[-1:] in SCALE else float(s)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise UsageError(f"--f-cpu {text!r}: give the TSC frequency in Hz, e.g. 2.596G")
    return value


def parse_lengths(text: str | None) -> tuple[int, ...]:
    """'3,6' -> (3, 6) (--holdout)."""
    if not text:
        return ()
    try:
        values = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise UsageError(f"--holdout {text!r}: give chain lengths to leave out, e.g. 3,6")
    return values


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f} %"


def _ci(p: Parameter) -> str:
    if not p.identified:
        return "not identified"
    return "–" if p.ci_low is None else f"{p.ci_low:,.0f} .. {p.ci_high:,.0f}"


def _ranges(values: Sequence[str]) -> str:
    """['s_core', 's_core', 'bi'] -> 'n=1-2 s_core, n=3 bi'."""
    parts, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[start]:
            span = f"{start + 1}" if i - start == 1 else f"{start + 1}-{i}"
            parts.append(f"n={span} {values[start]}")
            start = i
    return ", ".join(parts)


def _print_analysis(a: object) -> None:
    assert isinstance(a, GroupAnalysis)
    out.print(_parameters_table(a))
    out.print(_checks_table(a))
    out.print(_curve_table(a))
    for b in a.break_even:
        def show(v: int | None, never: str) -> str:
            return never if v is None else str(v)
        out.print(f"break-even n0 ({b.placement} vs s_core, eq. 3): model {show(b.model, '> 64')}, "
                  f"even split {show(b.eq3, '> 64')}, measured "
                  f"{show(b.measured, 'not reached or not measured')}", highlight=False)
    out.print(f"recommended placement: {_ranges(a.recommended)}", highlight=False)
    _print_errors(a)
    for note in a.model.notes:
        out.print(f"note: {note}", style="yellow", highlight=False)


def _parameters_table(a: GroupAnalysis) -> Table:
    m = a.model
    unit = "cycles" if m.f_cpu_source != "assumed" else "ns"
    metric = METRIC_TITLES.get(m.metric, m.metric)
    params = Table(title=f"chain cost model: {m.label}, {metric} of {m.observations} "
                         f"points at n = {','.join(map(str, m.fitted_n))}, f_CPU "
                         f"{m.f_cpu / 1e9:.3f} GHz ({m.f_cpu_source})")
    for col in ("parameter", f"{unit}/packet", "95 % CI", "what"):
        params.add_column(col, justify="right" if col != "what" else "left")
    for p in (*m.parameters, *m.extras):
        params.add_row(p.name, num(p.value), _ci(p), p.meaning)
    return params


def _checks_table(a: GroupAnalysis) -> Table:
    rows = Table(title="measured vs predicted maximum throughput (error = predicted / measured "
                       "- 1)")
    last = "held out" if a.holdout_n else "error, n left out"
    for col in ("n", "placement", "measured pps", "predicted pps", "error", last):
        rows.add_column(col, justify="right")
    for c in a.checks:
        tail = ("yes" if not c.in_fit else "") if a.holdout_n else _pct(a.loo_error.get(c.key))
        mark = "≥" if c.lower_bound else ""
        rows.add_row(str(c.n), c.placement, f"{mark}{num(c.measured_pps)}",
                     num(c.predicted_pps), _pct(c.error), tail)
    return rows


def _curve_table(a: GroupAnalysis) -> Table:
    curve = Table(title="predicted maximum throughput (pps) per chain length")
    curve.add_column("n", justify="right")
    for name in a.curves:
        curve.add_column(name, justify="right")
    curve.add_column("recommended")
    for i, n in enumerate(a.curve_n):
        curve.add_row(str(n), *(num(v[i]) for v in a.curves.values()), a.recommended[i])
    return curve


def _print_errors(a: GroupAnalysis) -> None:
    """The largest errors leaving each n out (interior, ends), on the held-out test lengths and
    on the lengths held out of the saved model."""
    for where in ("interior", "ends"):
        worst = {p: a.loo_worst(p)[where] for p in a.placements}
        if any(v is not None for v in worst.values()):
            out.print(f"leaving each n out in turn, largest error ({where}): "
                      + "; ".join(f"{p} {verdict(v)}" for p, v in worst.items() if v is not None),
                      highlight=False)
    if a.test_n:
        out.print(f"held-out test (fitted without n = {','.join(map(str, a.test_n))}), largest "
                  "|error|: " + "; ".join(f"{p} {verdict(a.test_worst(p))}" for p in a.placements
                                          if a.test_worst(p) is not None), highlight=False)
    if a.holdout_n:
        held = {p: a.held_out_errors_of(p) for p in a.placements}
        out.print(f"held out n = {','.join(map(str, a.holdout_n))}, largest |error|: "
                  + "; ".join(f"{p} {verdict(max(e))}" for p, e in held.items() if e),
                  highlight=False)


@click.command("fit")
@click.argument("results", metavar="RESULTS_DIR", type=click.Path(path_type=Path))
@click.option("--holdout", default=None,
              help="Chain lengths to leave out of the fit and predict, e.g. 3,6; the saved "
                   "model is then fitted without them (default: all lengths, each also checked "
                   "by leaving it out in turn).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Model file [RESULTS_DIR/chain-model.json].")
@click.option("--f-cpu", default=None,
              help="TSC frequency (e.g. 2.596G) when the results carry none.")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
def fit_cmd(results: Path, holdout: str | None, out_path: Path | None, f_cpu: str | None,
            as_json: bool) -> int:
    """Fit the chain cost model (Raumer et al.) to the chain:N throughput in RESULTS_DIR: the
    costs with 95 % CIs, measured vs predicted per n, break-even n0 and placements."""

    held = parse_lengths(holdout)
    hz = parse_hz(f_cpu)
    data = load(results)
    analyses, failed = analyze(data, f_cpu=hz, holdout_n=held)
    if not analyses:
        raise UsageError("no chain could be fitted: " + "; ".join(failed))
    target = check_output_file(out_path or (results / MODEL_NAME if results.is_dir() else
                                            results.with_name(MODEL_NAME)), "--out")
    save(target, analyses)
    if as_json:
        click.echo(json.dumps({"analysis": [a.to_json() for a in analyses], "not_fitted": failed,
                               "skipped": list(data.skipped), "model_file": str(target)},
                              indent=1))
        return 0
    for a in analyses:
        _print_analysis(a)
    for line in (*failed, *data.skipped):
        out.print(f"not used: {line}", style="yellow", highlight=False)
    out.print(f"model: {target}", highlight=False)
    return 0


def _choose(models: Sequence[CostModel], switch: str | None, size: str | None,
            nf: str | None = None) -> CostModel:
    chosen = [m for m in models if (switch is None or m.switch == switch)
              and (size is None or str(m.frame_size) == size) and (nf is None or m.nf == nf)]
    names = ", ".join(f"--switch {m.switch} --size {m.frame_size}"
                      + (f" --nf {m.nf}" if m.nf != "fwd" else "") for m in models)
    if not chosen:
        raise UsageError(f"no model for switch {switch or 'any'} size {size or 'any'}"
                         + (f" nf {nf}" if nf else "") + f"; the model has: {names}")
    if len(chosen) > 1:
        raise UsageError(f"{len(chosen)} models match: choose one with {names}")
    return chosen[0]


@click.command("predict")
@click.option("--chain", "n", type=click.IntRange(1, 1000), required=True,
              help="Chain length N (network functions).")
@click.option("--placement", type=click.Choice(PLACEMENTS), required=True,
              help="Raumer's s_core: one core; bi: blocks of NFs per core; pbp: NFs alternate "
                   "cores; default: the placement `vswbench trial` uses.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="A model file written by `vswbench model fit`.")
@click.option("--results", "results_dir", type=click.Path(path_type=Path), default=None,
              help="Fit the model from this results directory instead.")
@click.option("--switch", default=None, help="Which model, when the file holds several.")
@click.option("--size", default=None, help="Which frame size, when the file holds several.")
@click.option("--nf", default=None,
              help="Which kind of network function (fwd, router, ovs: option nf of the chain "
                   "measurements), when the file holds several.")
@click.option("--cores", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--f-cpu", default=None, help="TSC frequency when the results carry none.")
@click.option("--json", "as_json", is_flag=True, help="Print the prediction as JSON.")
def predict_cmd(n: int, placement: str, model_path: Path | None, results_dir: Path | None,
                switch: str | None, size: str | None, nf: str | None, cores: int,
                f_cpu: str | None, as_json: bool) -> int:
    """Predict a chain's maximum throughput for a placement: f_CPU / (the bottleneck core's
    cycles per packet), with equation (3)'s break-even and the recommended placement."""

    if (model_path is None) == (results_dir is None):
        raise UsageError("give either --model MODEL.json (from `vswbench model fit`) or "
                         "--results RESULTS_DIR")
    if model_path is not None:
        models = read_models(model_path)
    else:
        analyses, failed = analyze(load(results_dir), f_cpu=parse_hz(f_cpu))  # type: ignore
        if not analyses:
            raise UsageError("no chain could be fitted: " + "; ".join(failed))
        models = [a.model for a in analyses]
    m = _choose(models, switch, size, nf)
    if placement != "default" and placement not in m.placements(cores):
        raise UsageError(f"--placement {placement}: nf={m.nf} chains cannot be spread over cores "
                         "(every OVS bridge runs in one ovs-vswitchd on the switch core); use "
                         f"--placement {' or '.join(m.placements(cores))}")
    p = m.predict(n, placement, cores)
    best = m.recommend(n, cores)
    others = {q: m.predict(n, q, cores).throughput_pps for q in m.placements(cores)}
    n0 = {q: m.break_even(q, cores) for q in ("bi", "pbp") if q in m.placements(cores)}
    if as_json:
        click.echo(json.dumps({"model": m.label, **asdict(p), "eq3_pps": m.predict_eq3(
            n, placement, cores), "recommended": best, "by_placement": others,
            "break_even": n0}, indent=1))
        return 0
    out.print(f"{m.label}: chain of {n}, {placement} on {p.cores} core(s): "
              f"{num(p.throughput_pps)} pps predicted (bottleneck cpu{p.bottleneck_cpu}: "
              f"{num(p.bottleneck_cycles)} cycles/packet; C_total,n {num(p.total_cycles)} over "
              f"all cores; {p.crossings} core crossings)", highlight=False)
    out.print("by placement: " + ", ".join(f"{q} {num(v)} pps" for q, v in others.items())
              + f"; recommended: {best}", highlight=False)
    out.print("break-even n0 (eq. 3): " + ", ".join(
        f"{q} {'> 64' if v is None else v}" for q, v in n0.items()), highlight=False)
    return 0
