"""models/chain_cost.py, chain_data.py, chain_analysis.py and `vswbench model fit|predict`: the
NF-chain cost model of Raumer et al. on synthetic observations (invented numbers, no
measurement)."""
import json
from dataclasses import replace

import numpy as np
import pytest

from vswbench.campaign.execute import placement_cpus
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.errors import UsageError
from vswbench.models.chain_analysis import analyze
from vswbench.models.chain_analysis import read_models
from vswbench.models.chain_analysis import save
from vswbench.models.chain_cost import ChainObservation
from vswbench.models.chain_cost import CostModel
from vswbench.models.chain_cost import Parameter
from vswbench.models.chain_cost import fit
from vswbench.models.chain_cost import holdout
from vswbench.models.chain_cost import usable
from vswbench.models.chain_data import from_points
from vswbench.models.chain_data import layout_of
from vswbench.models.chain_layout import PARAMS
from vswbench.models.chain_layout import Layout
from vswbench.models.chain_layout import classify
from vswbench.models.chain_layout import layout_for
from vswbench.models.student_t import t_quantile
from vswbench.results.record import Measured
from vswbench.results.record import measured_of
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint

F = 2.596e9
TRUTH = {"C_base": 6000.0, "C_nf": 4000.0, "C_x": 1500.0, "C_sw": 2500.0}


def result(r: dict) -> Measured:
    """A stored result dict as the chain model reads it (record.Measured)."""
    return measured_of("search", r)


def runner_layout(name: str, n: int, switch_core: bool = True) -> Layout:
    """The cores runner.placement_cpus gives a chain (tester, switch, NFs round robin)."""
    tester, switch, nfs = placement_cpus(name, n)
    cpus = [int(c) for c in nfs.split(",")]
    return Layout(tester, tuple(cpus[i % len(cpus)] for i in range(n)),
                  switch if switch_core else None)


def throughput(layout: Layout, truth: dict[str, float] = TRUTH) -> float:
    theta = np.array([truth[p] for p in PARAMS])
    return F / max(float(row @ theta) for row in layout.loads().values())


def synthetic(noise: float = 0.0, seed: int = 7, switch_core: bool = True,
              lengths=range(1, 9)) -> list[ChainObservation]:
    rng = np.random.default_rng(seed)
    return [ChainObservation("veth", 64, n, name, lay := runner_layout(name, n, switch_core),
                             throughput(lay) * (1 + rng.normal(0, noise)), "ndr", tsc_hz=F,
                             key=f"{name}-{n}")
            for name in ("s_core", "bi", "pbp") for n in lengths]


def model_of(values: dict[str, float], f: float = 2.4e9, switch_core: bool = False) -> CostModel:
    params = tuple(Parameter(p, values.get(p, 0.0), None, None) for p in PARAMS)
    return CostModel("veth", 64, switch_core, f, "given", params, "ndr", (1, 2), 2, None)


# -- fit -----------------------------------------------------------------------------------------
def test_fit_recovers_known_parameters_and_cis_cover_them() -> None:
    m = fit(synthetic(noise=0.02))
    for p in m.parameters:
        assert p.identified and p.ci_low < TRUTH[p.name] < p.ci_high, p
        assert p.value == pytest.approx(TRUTH[p.name], rel=0.1)
        assert p.ci_high - p.ci_low < 0.5 * TRUTH[p.name]
    assert m.f_cpu == F and m.f_cpu_source == "tsc" and m.fitted_n == tuple(range(1, 9))
    assert 0.01 < m.rel_residual_sd < 0.03
    exact = fit(synthetic())
    assert all(p.value == pytest.approx(TRUTH[p.name], rel=1e-9) for p in exact.parameters)


def test_links_on_the_sender_leave_c_sw_unidentified() -> None:
    m = fit(synthetic(noise=0.01, switch_core=False))
    c_sw = next(p for p in m.parameters if p.name == "C_sw")
    assert not c_sw.identified and c_sw.value == 0.0 and c_sw.ci_low is None
    assert any("C_sw not identified" in n for n in m.notes)
    base = next(p for p in m.parameters if p.name == "C_base")
    assert base.ci_low < TRUTH["C_base"] < base.ci_high


def test_one_core_only_cannot_price_crossings() -> None:
    one = [ChainObservation("veth", 64, n, "s_core", lay := layout_for("s_core", n, cores=1),
                            throughput(lay), "ndr", tsc_hz=F) for n in range(1, 9)]
    m = fit(one)
    assert [p.name for p in m.parameters if not p.identified] == ["C_x", "C_sw"]
    assert any("upper bound" in n for n in m.notes)
    assert m.predict(4, "s_core", cores=1).throughput_pps == pytest.approx(F / (6000 + 4 * 4000))


def test_fit_needs_two_lengths_and_skips_lower_bounds() -> None:
    with pytest.raises(UsageError, match="two or more chain lengths"):
        fit(synthetic(lengths=[3]))
    obs = synthetic()
    bound = ChainObservation("veth", 64, 9, "s_core", runner_layout("s_core", 9), 1.0, "ndr",
                             lower_bound=True)
    assert fit([*obs, bound]).observations == fit(obs).observations == len(usable(obs))


def test_t_quantile() -> None:
    for dof, expected in ((1, 12.706), (2, 4.303), (4, 2.776), (20, 2.086), (500, 1.965)):
        assert t_quantile(0.975, dof) == pytest.approx(expected, abs=1e-3)


# -- validation ------------------------------------------------------------------------------------
def test_holdout_error_is_predicted_over_measured_minus_one() -> None:
    obs = synthetic()
    model, rows = holdout(obs, [4, 6, 7])
    assert model.fitted_n == (1, 2, 3, 5, 8)
    held = [r for r in rows if not r.in_fit]
    assert {r.n for r in held} == {4, 6, 7} and len(held) == 9
    assert all(abs(r.error) < 1e-9 for r in rows)
    off = [o if o.key != "bi-6" else ChainObservation(**{**vars(o), "throughput_pps":
                                                          o.throughput_pps * 1.1})
           for o in obs]
    _, rows = holdout(off, [4, 6, 7])
    (six,) = [r for r in rows if r.key == "bi-6"]
    assert six.error == pytest.approx(1 / 1.1 - 1) and not six.in_fit
    with pytest.raises(UsageError, match="--holdout 9"):
        holdout(obs, [9])


def test_a_wrong_model_shows_a_large_holdout_error() -> None:
    """Costs that grow with n squared (not linear): fitted on short chains, the long ones are
    predicted far off. The check can fail."""
    obs = [ChainObservation("veth", 64, n, "s_core", runner_layout("s_core", n),
                            F / (5000 + 3000 * n + 900 * n * n), "ndr", tsc_hz=F, key=str(n))
           for n in range(1, 9)]
    _, rows = holdout(obs, [6, 7, 8])
    worst = max(abs(r.error) for r in rows if not r.in_fit)
    assert worst > 0.15
    good, _ = analyze_one(synthetic(noise=0.01), holdout_n=(3, 6))
    assert max(good.held_out_errors) < 0.15


def test_the_held_out_test_judges_each_placement_on_its_own() -> None:
    """Without --holdout the analysis still fits without every third interior length and
    predicts them; a placement whose series the model misses fails alone."""
    from vswbench.models.chain_analysis import interior_holdout

    assert interior_holdout(range(1, 11)) == (3, 6, 9)
    assert interior_holdout([1, 2, 4, 8]) == (4,) and interior_holdout([1, 2, 3]) == ()
    obs = synthetic(noise=0.01, lengths=range(1, 11))
    slow = [replace(o, throughput_pps=o.throughput_pps * 0.7)
            if o.pattern == "bi" and o.n in (3, 6, 9) else o for o in obs]
    a, _ = analyze_one(slow)
    assert a.test_n == (3, 6, 9) and a.placements[0] == "s_core"
    assert a.test_worst("s_core") < 0.15 < a.test_worst("bi") == a.test_worst()
    assert a.to_json()["held_out_test"]["worst_by_placement"]["bi"] == a.test_worst("bi")
    assert {c.n for c in a.test_checks if not c.in_fit} == {3, 6, 9}


def analyze_one(obs, **kw):
    from vswbench.models.chain_data import ChainData
    done, failed = analyze(ChainData(tuple(obs), (), (), ()), **kw)
    return done[0], failed


# -- prediction, break-even, recommendation (hand-computed) ----------------------------------------
def test_layouts() -> None:
    assert layout_for("s_core", 3) == Layout(0, (1, 1, 1), None)       # the tester alone on 0
    assert layout_for("s_core", 3, cores=1) == Layout(0, (0, 0, 0), None)
    assert layout_for("bi", 5) == Layout(0, (0, 0, 0, 1, 1), None)
    assert layout_for("pbp", 4, switch_core=True) == Layout(0, (0, 1, 0, 1), 1)
    assert layout_for("bi", 6, cores=3) == Layout(0, (0, 0, 1, 1, 2, 2), None)
    assert layout_for("default", 1) == Layout(0, (1,), None)           # `vswbench trial`'s default
    assert layout_for("default", 3) == Layout(0, (0, 1, 0), None)
    assert layout_for("default", 2, cores=4) == Layout(0, (2, 3), None)
    assert Layout(0, (0, 0, 1, 1)).crossings == 2 and Layout(0, (0, 1, 0, 1)).crossings == 4
    # sender-softirq path 0,0,1,0 -> with a switch core 1: 0,1,0,1,1,1,0
    assert Layout(0, (0, 1), 1).path() == [0, 1, 0, 1, 1, 1, 0]
    # runner.py's names are Raumer's: "bi" makes blocks, "pbp" alternates
    assert classify(runner_layout("bi", 4)) == "bi"
    assert classify(runner_layout("pbp", 4)) == "pbp"
    assert classify(runner_layout("s_core", 4)) == "s_core"
    obs = ChainObservation("veth", 64, 1, "bi", runner_layout("bi", 1), 1.0, "ndr")
    assert obs.pattern == "bi"           # n = 1: both names fit, the campaign's is kept


def test_predict_by_hand() -> None:
    m = model_of({"C_base": 6000, "C_nf": 4000, "C_x": 1000})
    # s_core: core 0 = tester + 2 crossings x 1/2, core 1 = 3 NFs + 2 x 1/2
    s = m.predict(3, "s_core")
    assert (s.total_cycles, s.throughput_pps, s.cores, s.crossings) == (20000, 2.4e9 / 13000, 1, 2)
    # bi, n = 4: core 0 = tester + 2 NFs + 2 crossings x 1/2; core 1 = 2 NFs + 2 x 1/2
    bi = m.predict(4, "bi")
    assert (bi.bottleneck_cpu, bi.bottleneck_cycles, bi.total_cycles) == (0, 15000, 24000)
    assert bi.throughput_pps == pytest.approx(160_000)
    assert m.predict_eq3(4, "bi") == pytest.approx(200_000)      # 2 f / C_total
    pbp = m.predict(4, "pbp")                                     # 4 crossings
    assert (pbp.bottleneck_cycles, pbp.throughput_pps) == (16000, pytest.approx(150_000))
    sw = model_of({"C_base": 6000, "C_nf": 4000, "C_sw": 1000}, switch_core=True)
    assert sw.predict(2, "s_core").total_cycles == 6000 + 8000 + 3000


def test_break_even_and_recommend_by_hand() -> None:
    # bi: core 0 = 14000 + 4000 ceil(n/2) against s_core max(14000, 8000 + 4000 n): bi wins from
    # n = 4 (at n = 1 bi's one NF shares the tester's core without a crossing: 10000)
    m = model_of({"C_base": 6000, "C_nf": 4000, "C_x": 8000})
    assert m.break_even("bi") == 3
    # equation (3), even split: 2 / (22000 + 4000 n) > 1 / (22000 + 4000 n) at every n
    assert m.break_even("bi", eq3=True) == 0
    assert m.recommend(3) == "s_core" and m.recommend(8) == "bi"
    assert m.recommend(8, cores=1) == "s_core"
    cheap = model_of({"C_base": 6000, "C_nf": 4000, "C_x": 1000})
    assert cheap.break_even("bi") == 3                 # 4000 n + 1000 > 7000 + 4000 ceil(n/2)
    never = model_of({"C_base": 6000, "C_nf": 100, "C_x": 1e6})
    assert never.break_even("pbp") is None


def test_measured_break_even() -> None:
    done, _ = analyze_one(synthetic())
    fitted = {b.placement: b for b in done.break_even}
    assert fitted["pbp"].measured is not None or fitted["bi"].measured is not None
    assert done.curve_n == tuple(range(1, 11)) and len(done.recommended) == 10


# -- json ------------------------------------------------------------------------------------------
def test_json_round_trip(tmp_path) -> None:
    m = fit(synthetic(noise=0.02))
    again = CostModel.from_json(json.loads(json.dumps(m.to_json())))
    assert again == m
    assert again.predict(7, "pbp") == m.predict(7, "pbp")
    done, _ = analyze_one(synthetic(noise=0.02))
    save(tmp_path / "m.json", [done])
    assert read_models(tmp_path / "m.json") == [done.model]
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    with pytest.raises(UsageError, match="not a chain cost model"):
        read_models(tmp_path / "bad.json")
    with pytest.raises(UsageError, match="not a chain cost model"):
        CostModel.from_json({"switch": "veth"})


# -- from a results store and the CLI --------------------------------------------------------------
SPEC = parse_spec('[campaign]\nname = "chains"\n[[study]]\nkind = "search"\nswitch = "veth"\n'
                  'scenario = "chain"\nchain = [1, 2, 3, 4, 5, 6, 7, 8]\nsize = 64\n'
                  'placement = ["s_core", "bi", "pbp"]\n')


def chain_result(point, noise: float) -> dict:
    n = 1 if point.scenario == "pvp" else int(point.scenario.split(":")[1])
    tester, switch, nfs = placement_cpus(point.placement, n)
    lay = runner_layout(point.placement, n)
    return {"switch": "veth", "scenario": point.scenario, "frame_size": 64,
            "forwarding_mode": f"napi-threaded cpu{switch}",
            "placement": {"tester_cpu": tester, "switch_cpu": switch,
                          "nf_cpus": [int(c) for c in nfs.split(",")]},
            "ndr_pps": round(throughput(lay) * (1 + noise), 1), "generator_bound": False,
            "trials": [{"intended_pps": 1000.0, "lost": 0, "unsent": 0,
                        "cycles_per_packet": 9000.0}]}


@pytest.fixture
def chain_dir(tmp_path):
    rng = np.random.default_rng(3)
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.begin_run("vsbc1", SPEC, {"tsc_hz": F})
        for p in expand(SPEC):
            store.record_point("vsbc1", p, chain_result(p, rng.normal(0, 0.02)), "done")
        store.end_run("vsbc1", "done")
    return tmp_path


def test_observations_from_the_store(chain_dir) -> None:
    with ResultStore(chain_dir / "results.sqlite", create=False) as store:
        data = from_points(store.points(), store.runs())
    assert len(data.observations) == 24 and not data.skipped
    o = next(o for o in data.observations if o.n == 3 and o.placement == "bi")
    assert o.layout == Layout(0, (0, 0, 1), 1) and o.tsc_hz == F and o.pattern == "bi"
    assert o.cycles_per_packet == 9000.0
    assert layout_of(result({"placement": {"tester_cpu": None}}), 2).startswith("no pinned")
    pinned = result({"placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [0, 1]},
                     "forwarding_mode": "sender-softirq"})
    assert layout_of(pinned, 3) == Layout(0, (0, 1, 0), None)


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_fit_and_predict(chain_dir, capsys) -> None:
    code, out, err = run_cli(capsys, "model", "fit", chain_dir)
    assert code == 0, err
    assert "C_base" in out and "95 % CI" in out and "break-even" in out and "recommended" in out
    assert (chain_dir / "chain-model.json").is_file()
    code, out, err = run_cli(capsys, "model", "fit", chain_dir, "--holdout", "3,6", "--json",
                             "--out", chain_dir / "h.json")
    assert code == 0, err
    data = json.loads(out)
    (a,) = data["analysis"]
    held = [p for p in a["points"] if not p["in_fit"]]
    assert {p["n"] for p in held} == {3, 6} and max(abs(p["error"]) for p in held) < 0.15
    assert a["model"]["fitted_n"] == [1, 2, 4, 5, 7, 8]
    code, out, err = run_cli(capsys, "model", "predict", "--chain", "4", "--placement", "bi",
                             "--model", chain_dir / "chain-model.json")
    assert code == 0, err
    assert "pps predicted" in " ".join(out.split())
    code, out, err = run_cli(capsys, "model", "predict", "--chain", "10", "--placement",
                             "s_core", "--results", chain_dir, "--json")
    assert code == 0, err
    pred = json.loads(out)
    assert pred["n"] == 10 and pred["throughput_pps"] == pytest.approx(
        F / (6000 + 10 * 4000 + 11 * 2500), rel=0.1)
    assert pred["recommended"] in ("s_core", "bi", "pbp")


@pytest.mark.parametrize("argv, needle", [
    (["model", "fit", "{missing}"], "no results store"),
    (["model", "fit", "{empty}"], "no chain throughput"),
    (["model", "fit", "{chain}", "--holdout", "x"], "--holdout"),
    (["model", "fit", "{chain}", "--holdout", "12"], "no chain was measured"),
    (["model", "fit", "{chain}", "--f-cpu", "fast"], "--f-cpu"),
    (["model", "predict", "--chain", "3", "--placement", "bi"], "either --model"),
    (["model", "predict", "--chain", "3", "--placement", "bi", "--model", "{bad}"],
     "not a chain cost model"),
    (["model", "predict", "--chain", "3", "--placement", "bi", "--results", "{chain}",
      "--switch", "ovs"], "no model for switch ovs"),
])
def test_cli_bad_input_exits_2(chain_dir, tmp_path, capsys, argv, needle) -> None:
    empty = tmp_path / "empty"
    other = parse_spec('[campaign]\nname = "p2p"\n[[study]]\nkind = "search"\n'
                       'switch = "bridge"\nsize = 64\n')
    with ResultStore(empty / "results.sqlite") as store:
        store.begin_run("vsbe1", other, None)
        for p in expand(other):
            store.record_point("vsbe1", p, {"ndr_pps": 1000.0}, "done")
    (tmp_path / "bad.json").write_text("[]")
    paths = {"missing": tmp_path / "nowhere", "empty": empty, "chain": chain_dir,
             "bad": tmp_path / "bad.json"}
    code, out, err = run_cli(capsys, *[a.format(**paths) for a in argv])
    text = " ".join((out + err).split())           # rich wraps long lines
    assert code == 2 and needle in text and "Traceback" not in text


# -- measured breakdown and C_SWdrops --------------------------------------------------------------
def stored(kind: str, n: int, result: dict) -> StoredPoint:
    params = {"kind": kind, "switch": "veth", "scenario": f"chain:{n}", "size": 64,
              "placement": "s_core"}
    return StoredPoint("c", "r", f"{kind}{n}", f"{kind} {n}", params, kind, "done", result, None,
                       None, "now")


def test_breakdown_and_software_drop_costs() -> None:
    from vswbench.models.chain_data import extras
    place = {"placement": {"tester_cpu": 0, "switch_cpu": 0, "nf_cpus": [0]},
             "forwarding_mode": "sender-softirq", "tsc_hz": F}
    trials = []
    for n in (1, 2, 4):
        # tester 5000, each NF 3000, outside the engines 500 + 1000 per link (n + 1 links)
        by = {"tester": 5000.0, **{f"nf{i}": 3000.0 for i in range(1, n + 1)}}
        total = 5000 + 3000 * n + 500 + 1000 * (n + 1)
        trials.append(stored("trial", n, {**place, "cycles_per_packet": total,
                                          "cycles_per_packet_by_process": by,
                                          "achieved_pps": 1e5, "cpu": {
                                              "0": {"busy_s": 1.0}, "1": {"busy_s": 0.0}}}))
    # a sweep: peak 100k pps at 9000 cycles; beyond, 80k delivered of 120k sent at 12000
    # cycles: C_drop = 80k x (12000 - 9000) / 40k = 6000
    sweep = stored("sweep", 1, {**place, "points": [
        {"offered_pps": 50e3, "tx_pps": 50e3, "achieved_pps": 50e3, "cycles_per_packet": 9500.0},
        {"offered_pps": 100e3, "tx_pps": 100e3, "achieved_pps": 100e3,
         "cycles_per_packet": 9000.0},
        {"offered_pps": 120e3, "tx_pps": 120e3, "achieved_pps": 80e3,
         "cycles_per_packet": 12000.0}]})
    data = from_points([*trials, sweep])
    assert len(data.observations) == 1 and data.observations[0].metric == "peak"
    assert data.observations[0].throughput_pps == 100e3
    assert [d.cycles_per_dropped for d in data.drop_costs] == [pytest.approx(6000.0)]
    b = data.breakdowns[1]
    assert (b.n, b.tester, b.vnf, b.outside) == (2, 5000.0, (3000.0, 3000.0), 500 + 3000)
    assert b.per_core == {"0": b.total, "1": 0.0}
    got = {p.name: p for p in extras(data, ("veth", "fwd", 64, False))}
    assert got["C_RX+C_TX"].value == 5000 and got["C_VNF"].value == 3000
    assert got["C_link"].value == pytest.approx(1000) and got["C_other"].value == pytest.approx(500)
    assert got["C_SWdrops"].value == pytest.approx(6000)


# -- the report section ------------------------------------------------------------------------------
def test_report_section_shows_every_n_with_errors(chain_dir) -> None:
    from vswbench.report.chain import chain_empty
    from vswbench.report.chain import chain_figures
    from vswbench.report.chain import chain_tables
    from vswbench.report.model import build_model
    from vswbench.results.points import load

    section = build_model(load(chain_dir)).chain
    assert len(section.analyses) == 1 and not section.failed
    html = chain_tables(section)
    for n in range(1, 11):
        assert f"<td class=\"num\">{n}</td>" in html
    assert "95 % CI" in html and "C_sw" in html and "Break-even n0" in html
    assert "error (fit / n left out)" in html and "%" in html
    assert "runner" not in html and "Raumer calls" not in html  # the campaign's names are his
    ((name, title, fig),) = chain_figures(section)
    assert name.startswith("chain-model-veth") and fig.axes[0].get_xlabel().startswith("chain")
    other = parse_spec('[campaign]\nname = "p2p"\n[[study]]\nkind = "search"\n'
                       'switch = "bridge"\nsize = 64\n')
    with ResultStore(chain_dir / "p2p" / "results.sqlite") as store:
        store.begin_run("vsbe2", other, None)
        for p in expand(other):
            store.record_point("vsbe2", p, {"ndr_pps": 1000.0}, "done")
    none = build_model(load(chain_dir / "p2p")).chain
    assert not none.analyses and chain_empty(none).startswith("no chain measurement")


def test_the_fitted_throughput_is_the_maximum_forwarding_rate() -> None:
    """Per chain length and layout the higher of NDR and sweep peak; a lower bound only when the
    generator-bound NDR is that maximum."""
    from vswbench.models.chain_cost import usable

    def obs(n: int, metric: str, pps: float, bound: bool = False) -> ChainObservation:
        return ChainObservation("veth", 64, n, "s_core", runner_layout("s_core", n), pps, metric,
                                lower_bound=bound, key=f"{metric}{n}")

    measured = [obs(1, "ndr", 9000.0, bound=True), obs(1, "peak", 8000.0),
                obs(2, "ndr", 7000.0), obs(2, "peak", 7500.0),
                obs(3, "ndr", 6000.0), obs(3, "peak", 4000.0), obs(4, "peak", 5000.0)]
    rates = {o.n: (o.throughput_pps, o.key) for o in usable(measured)}
    assert rates == {2: (7500.0, "peak2"), 3: (6000.0, "ndr3"), 4: (5000.0, "peak4")}
    assert {o.metric for o in usable(measured)} == {"max"}
    other_core = ChainObservation("veth", 64, 2, "bi", runner_layout("bi", 2), 100.0, "ndr")
    assert len(usable([*measured, other_core])) == 4       # another layout: its own rate


def test_repetitions_give_the_median_of_each_repetitions_maximum() -> None:
    """Per repetition the higher of NDR and peak; over repetitions the median, so one search
    stopped by a transient loss (pbp n = 3: 26.9 kpps, its repetitions about 106) is ignored, and
    one lucky repetition does not lift the rate either."""
    from vswbench.models.chain_cost import usable

    def obs(rep: int, metric: str, pps: float, bound: bool = False) -> ChainObservation:
        return ChainObservation("veth", 64, 3, "pbp", runner_layout("pbp", 3), pps, metric,
                                lower_bound=bound, key=f"{metric}{rep}", repetition=rep)

    three = [obs(0, "ndr", 26_900.0), obs(1, "ndr", 106_300.0), obs(1, "peak", 90_000.0),
             obs(2, "ndr", 98_000.0), obs(2, "peak", 130_000.0)]
    (rate,) = usable(three)
    assert (rate.throughput_pps, rate.key) == (106_300.0, "ndr1")
    (two,) = usable(three[:3])                   # two repetitions: the mean of the two
    assert two.throughput_pps == (26_900.0 + 106_300.0) / 2
    bound = [obs(0, "ndr", 1.0), obs(1, "ndr", 2.0, bound=True), obs(2, "ndr", 3.0)]
    assert not usable(bound)                     # the median rests on a lower bound
    assert len(usable([*bound[:1], *bound[2:]])) == 1


def test_ovs_chains_have_one_layout() -> None:
    """Every OVS bridge of a chain runs in one ovs-vswitchd: no bi or pbp to recommend."""
    m = replace(model_of({"C_base": 6000, "C_nf": 4000, "C_x": 1000}), nf="ovs")
    assert m.placements() == ("s_core",) and m.recommend(8) == "s_core"
    assert model_of({"C_nf": 1.0}).placements() == ("s_core", "bi", "pbp")
    done, _ = analyze_one([replace(o, nf="ovs") for o in synthetic() if o.placement == "s_core"])
    assert set(done.curves) == {"s_core"} and not done.break_even
    assert set(done.recommended) == {"s_core"}
