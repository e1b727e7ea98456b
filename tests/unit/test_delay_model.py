"""models/delay.py, models/delay_data.py, `vswbench model delay`, the report's delay section:
histogram -> model -> JSON -> reload, quantile CSV, inverse-transform sampling against the DKW
bound, KS distances, malformed files, the CLI on small stores (invented numbers, no engine)."""

import csv
import io
import json
import math

import numpy as np
import pytest

from tests.report_fixtures import hist_bucket
from tests.report_fixtures import latency_samples
from tests.report_fixtures import summarize
from tests.report_fixtures import write_fixture_store
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.errors import UsageError
from vswbench.models.delay import QUANTILES
from vswbench.models.delay import DelayCondition
from vswbench.models.delay import DelayModel
from vswbench.models.delay import dkw_bound
from vswbench.models.delay import engine_buckets_ns
from vswbench.models.delay import ks_critical
from vswbench.models.delay import load_json
from vswbench.models.delay_data import INDEX_NAME
from vswbench.models.delay_data import KS_NAME
from vswbench.models.delay_data import file_stem
from vswbench.models.delay_data import ks_matrix
from vswbench.models.delay_data import load_models
from vswbench.models.delay_data import write_models
from vswbench.report.delay import delay_empty
from vswbench.report.delay import delay_tables
from vswbench.report.model import build_model
from vswbench.results.points import load
from vswbench.results.store import ResultStore

COND = DelayCondition("bridge", "p2p", 64, kind="latency", offered_pps=196_200.0,
                      fraction_of_ndr=0.9)


def model_of(median_us: float, n: int = 2000, cond: DelayCondition = COND) -> DelayModel:
    """A model from the engine-shaped histogram of deterministic log-normal samples."""
    _, hist = summarize(latency_samples(median_us, n=n))
    return DelayModel.from_histogram(hist, cond)


@pytest.fixture(scope="module")
def m25() -> DelayModel:
    return model_of(25.0)


# -- the model ---------------------------------------------------------------------------------
def test_engine_binning_matches_hist_c() -> None:
    values = np.array([0, 1, 255, 256, 257, 300, 511, 512, 513, 1000, 25_123, 999_999,
                       2 ** 30 + 12_345, *range(0, 5000, 7)])
    low, high = engine_buckets_ns(values)
    assert [(int(a), int(b)) for a, b in zip(low, high)] == [hist_bucket(int(v)) for v in values]
    # a bucket is at most 1/128 of its lower edge wide (the resolution the docstring states)
    assert np.all((high + 1 - low) <= np.maximum(1, low / 128))


def test_histogram_relative_frequencies_and_ecdf(m25) -> None:
    _, hist = summarize(latency_samples(25.0, n=2000))
    n = sum(c for _, _, c in hist)
    assert m25.samples == n == 2004 and len(m25.counts) == len(hist)
    assert m25.low_us[0] == hist[0][0] / 1000 and m25.high_us[-1] == (hist[-1][1] + 1) / 1000
    assert math.isclose(sum(m25.relative_frequencies), 1.0)
    assert m25.ecdf[-1] == 1.0 and all(a < b for a, b in zip(m25.ecdf, m25.ecdf[1:]))
    # at every bucket's upper edge the model's CDF is the sample ECDF
    assert np.allclose(m25.cdf(m25.high_us), m25.ecdf)
    assert np.allclose(m25.cdf(m25.quantile(np.linspace(0, 1, 101))), np.linspace(0, 1, 101))
    assert m25.cdf([0.0, m25.low_us[0], 1e9]).tolist() == [0.0, 0.0, 1.0]


def test_duplicate_buckets_add_up_and_raw_samples_bin_like_the_engine(m25) -> None:
    _, hist = summarize(latency_samples(25.0, n=2000))
    doubled = DelayModel.from_histogram(hist + hist, COND)
    assert doubled.counts == tuple(2 * c for c in m25.counts) and doubled.ks(m25) == 0.0
    raw = DelayModel.from_samples([v / 1000 for v in latency_samples(25.0, n=2000)], COND)
    assert (raw.low_us, raw.high_us, raw.counts) == (m25.low_us, m25.high_us, m25.counts)
    assert raw.source == "raw samples"
    with pytest.raises(UsageError, match="empty"):
        DelayModel.from_histogram([[1000, 1007, 0]], COND)
    with pytest.raises(UsageError, match=">= 0"):
        DelayModel.from_samples([1.0, -2.0], COND)


def test_json_round_trip(tmp_path, m25) -> None:
    again = DelayModel.from_json(json.loads(json.dumps(m25.to_json())))
    assert again == m25 and again.ks(m25) == 0.0
    (written,), _ = write_models([m25], tmp_path / "out")
    assert load_json(written.json_path) == m25
    data = json.loads(written.json_path.read_text())
    assert (data["schema"], data["version"], data["unit"]) == ("vswbench.delay-model", 1, "us")
    assert data["bins"]["ecdf"][-1] == 1.0 and data["condition"]["fraction_of_ndr"] == 0.9


def test_csv_quantiles_monotone(m25) -> None:
    rows = list(csv.reader(io.StringIO(m25.to_csv())))
    assert rows[0] == ["probability", "latency_us"] and len(rows) == len(QUANTILES) + 1
    ps = [float(p) for p, _ in rows[1:]]
    xs = [float(x) for _, x in rows[1:]]
    assert ps[0] == 0.0 and ps[-1] == 1.0 and 0.001 in ps and 0.999 in ps
    assert all(a < b for a, b in zip(ps, ps[1:]))
    assert all(a <= b for a, b in zip(xs, xs[1:])) and xs[0] < xs[-1]
    assert xs[0] == pytest.approx(m25.low_us[0], abs=1e-4)
    assert xs[-1] == pytest.approx(m25.high_us[-1], abs=1e-4)
    assert xs[ps.index(0.5)] == pytest.approx(25.0, rel=0.02)     # the samples' median


# -- sampling and KS ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_inverse_transform_samples_reproduce_the_ecdf(m25, seed) -> None:
    """The stated bound: KS(samples, model) < sqrt(ln(2/alpha) / (2 n)) at alpha = 0.001."""
    n = 20_000
    draws = m25.sample(n, np.random.default_rng(seed))
    assert draws.shape == (n,) and draws.min() >= m25.low_us[0] and draws.max() <= m25.high_us[-1]
    bound = dkw_bound(n)
    assert bound == pytest.approx(math.sqrt(math.log(2000) / (2 * n)))
    assert m25.ks_samples(draws) < bound
    # a model rebuilt from the draws (binned like the engine) is as close: between two models
    # the KS distance is the sample statistic taken at the bucket edges only
    rebuilt = DelayModel.from_samples(draws, COND)
    assert rebuilt.ks(m25) < bound
    assert np.array_equal(m25.sample(100, seed), m25.sample(100, seed))


def test_a_different_distribution_exceeds_the_bound(m25) -> None:
    n = 20_000
    other = model_of(27.0)                        # the median 8 % higher
    draws = other.sample(n, np.random.default_rng(7))
    assert other.ks_samples(draws) < dkw_bound(n)
    assert m25.ks_samples(draws) > 3 * dkw_bound(n)
    assert m25.ks(other) > 3 * dkw_bound(n)


def test_ks_between_models(m25) -> None:
    assert m25.ks(m25) == 0.0 and m25.ks(DelayModel.from_json(m25.to_json())) == 0.0
    other = model_of(40.0)
    d = m25.ks(other)
    assert d == other.ks(m25) and 0 < d <= 1
    grid = np.geomspace(1, 5000, 200_000)         # the exact value is the sup over a fine grid
    assert d == pytest.approx(float(np.max(np.abs(m25.cdf(grid) - other.cdf(grid)))), abs=1e-3)
    far = DelayModel.from_histogram([[10_000_000, 10_100_000, 5]], COND)
    assert m25.ks(far) == 1.0
    assert ks_critical(2000, 2000) == pytest.approx(1.9495 * math.sqrt(2 / 2000), rel=1e-3)


# -- malformed files ---------------------------------------------------------------------------
def _broken(m: DelayModel, change) -> dict:
    data = json.loads(json.dumps(m.to_json()))
    change(data)
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(schema="something-else"), "not a vswbench delay model"),
    (lambda d: d.update(version=2), "version 2"),
    (lambda d: d.update(unit="ms"), "unit 'ms'"),
    (lambda d: d.pop("condition"), "'condition' must be an object"),
    (lambda d: d["condition"].pop("switch"), "missing field 'switch'"),
    (lambda d: d["condition"].update(frame_size=64.5), "'frame_size'"),
    (lambda d: d["condition"].update(colour="red"), "unknown condition field"),
    (lambda d: d.pop("bins"), "missing 'bins'"),
    (lambda d: d["bins"]["count"].pop(), "same length"),
    (lambda d: d["bins"].update(count="many"), "bins.count must be a list"),
    (lambda d: d["bins"]["count"].__setitem__(0, -1), "bin 0: count -1"),
    (lambda d: d["bins"]["count"].__setitem__(0, True), "bin 0: count True"),
    (lambda d: d["bins"]["low_us"].__setitem__(1, 0.5), "bin 1: starts at 0.5"),
    (lambda d: d["bins"]["high_us"].__setitem__(0, 1.0), r"bin 0: edges"),
    (lambda d: d.update(samples=3), "samples is 3"),
    (lambda d: d["bins"]["ecdf"].__setitem__(2, 0.5), r"bins.ecdf\[2\] is 0.5"),
    (lambda d: d.update(source="guesswork"), "source 'guesswork'"),
])
def test_malformed_json_rejected(m25, change, message) -> None:
    with pytest.raises(UsageError, match=message):
        DelayModel.from_json(_broken(m25, change), "model.json")


def test_malformed_files_rejected(tmp_path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        load_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_json(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match="expected a JSON object"):
        load_json(bad)


# -- a results store ---------------------------------------------------------------------------
SPEC = parse_spec('[campaign]\nname = "delay"\n[[study]]\nkind = "latency"\n'
                  'switch = ["bridge", "ovs"]\nsize = 64\nfractions = [50, 90]\n'
                  'repetitions = 2\n[[study]]\nkind = "search"\nswitch = "bridge"\nsize = 64\n')
MEDIAN = {"bridge": 20.0, "ovs": 40.0}


def _latency_result(switch: str, rep: int) -> dict:
    pts = []
    for f in (0.5, 0.9):
        lat, hist = summarize(latency_samples(MEDIAN[switch] * (1 + f) * (1 + 0.01 * rep), n=500))
        pts.append({"offered_pps": 100_000.0 * f, "fraction_of_ndr": f, "latency_us": lat,
                    "histogram": hist})
    return {"switch": switch, "scenario": "p2p", "frame_size": 64, "ndr_pps": 100_000.0,
            "points": pts}


@pytest.fixture
def results(tmp_path):
    directory = tmp_path / "run"
    with ResultStore(directory / "results.sqlite") as store:
        store.begin_run("vsbd001", SPEC, None)
        for p in expand(SPEC):
            result = (_latency_result(p.switch, p.repetition) if p.kind == "latency"
                      else {"ndr_pps": 100_000.0})
            store.record_point("vsbd001", p, result, "done")
        store.end_run("vsbd001", "done")
    return directory


def test_models_from_a_results_dir(results) -> None:
    pooled = load_models(results)
    assert [m.condition.label for m in pooled] == [
        "bridge p2p 64 B at 50 % NDR", "bridge p2p 64 B at 90 % NDR",
        "ovs p2p 64 B at 50 % NDR", "ovs p2p 64 B at 90 % NDR"]
    assert all(m.condition.repetitions == 2 and m.samples == 2 * 501 for m in pooled)
    split = load_models(results, pool=False)
    assert len(split) == 8 and {m.condition.repetition for m in split} == {0, 1}
    matrix = ks_matrix(pooled)
    d = np.array(matrix.distances)
    assert np.allclose(d, d.T) and np.all(np.diag(d) == 0) and np.all(d[~np.eye(4, dtype=bool)] > 0)
    assert matrix.exceeds(0, 3) and not matrix.exceeds(0, 0)
    with pytest.raises(UsageError, match="the delay model reads"):
        load_models(results, ("search",))


def test_fixture_store_conditions(tmp_path) -> None:
    write_fixture_store(tmp_path / "results.sqlite")
    models = load_models(tmp_path)
    kinds = [m.condition.kind for m in models]
    assert kinds.count("latency") == 10 and kinds.count("sweep") == 12
    trials = load_models(tmp_path, ("trial",))
    assert len(trials) == 4 and all(m.condition.repetitions == 2 for m in trials)


def test_report_section(results, tmp_path) -> None:
    html = delay_tables(build_model(load(results)))
    assert "KS distance between conditions" in html and "ovs p2p 64 B at 90 % NDR" in html
    assert html.count("<td>C") == 8                     # 4 conditions x 2 tables
    write_fixture_store(tmp_path / "t.sqlite", variant="trials-only")
    trials_only = build_model(load(tmp_path / "t.sqlite"))
    assert delay_tables(trials_only) == "" and "no latency point" in delay_empty(trials_only)


# -- the command line --------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_writes_the_files(capsys, results, tmp_path) -> None:
    out = tmp_path / "model"
    code, text, err = run_cli(capsys, "model", "delay", str(results), "--out", str(out))
    assert code == 0, err
    assert "C4" in text and "KS distance" in text and "ovs p2p 64 B at 90 % NDR" in text
    jsons = sorted(p for p in out.glob("*.json") if p.name != INDEX_NAME)
    assert len(jsons) == 4 and len(list(out.glob("*.quantiles.csv"))) == 4
    assert {p.stem: load_json(p) for p in jsons} == {file_stem(m.condition.label): m
                                                     for m in load_models(results)}
    index = json.loads((out / INDEX_NAME).read_text())
    assert len(index["conditions"]) == 4 and len(index["ks"]["distances"]) == 4
    assert (out / KS_NAME).read_text().startswith("condition,bridge p2p 64 B at 50 % NDR,")
    code, text, _ = run_cli(capsys, "model", "delay", str(results), "--out", str(out), "--json",
                            "--per-repetition")
    assert code == 0 and len(json.loads(text)["conditions"]) == 8


def test_cli_bad_input_exits_2(capsys, results, tmp_path) -> None:
    code, _, err = run_cli(capsys, "model", "delay", str(tmp_path / "nowhere"), "--out",
                           str(tmp_path / "o"))
    assert code == 2 and "no results store" in err and "Traceback" not in err
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "results.sqlite").write_text("not a database")
    code, _, err = run_cli(capsys, "model", "delay", str(junk), "--out", str(tmp_path / "o"))
    assert code == 2 and "not a vswbench results store" in err
    code, _, err = run_cli(capsys, "model", "delay", str(results), "--out", str(tmp_path / "o"),
                           "--kind", "trial")
    assert code == 2 and "no latency histogram" in err and "kind" in err
    (tmp_path / "file").write_text("")
    code, _, err = run_cli(capsys, "model", "delay", str(results), "--out",
                           str(tmp_path / "file"))
    assert code == 2 and "is a file" in err
