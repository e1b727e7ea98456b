"""report/data.py, spread.py, notes.py: typed rows from fixture stores (invented numbers, see
tests/report_fixtures.py; never measurements)."""

import math

import pytest

from tests.report_fixtures import NDR
from tests.report_fixtures import PAIRS_NDR
from tests.report_fixtures import TSC_HZ
from tests.report_fixtures import hist_bucket
from tests.report_fixtures import latency_samples
from tests.report_fixtures import summarize
from tests.report_fixtures import write_fixture_store
from vswbench.errors import UsageError
from vswbench.host.sysinfo import NA
from vswbench.host.sysinfo import Fingerprint
from vswbench.host.sysinfo import missing_tuning
from vswbench.report.data import ecdf
from vswbench.report.data import pairs_points
from vswbench.report.data import ranking
from vswbench.report.data import rebin_log
from vswbench.report.notes import warnings
from vswbench.report.spread import error_bars
from vswbench.results.points import Setup
from vswbench.results.points import StoredResults
from vswbench.results.points import cycles_near_ndr
from vswbench.results.points import latency_at
from vswbench.results.points import load
from vswbench.results.points import setup_of
from vswbench.results.series import load_series
from vswbench.results.store import StoredPoint
from vswbench.units import FrameSize
from vswbench.units import line_rate_pps
from vswbench.units import wire_gbps


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> StoredResults:
    path = write_fixture_store(tmp_path_factory.mktemp("store") / "results.sqlite")
    return load(path.parent)


def point(kind: str, result: dict | None, status: str = "done", error: str | None = None,
          **params) -> StoredPoint:
    prm = {"kind": kind, "switch": "bridge", "scenario": "p2p", "size": 64, "burst": 1,
           "flows": 1, "placement": "default", "io": "afpacket", **params}
    if kind in ("search", "latency", "b2b"):
        prm.setdefault("preset", "fast")
    key = "-".join(f"{k}={v}" for k, v in sorted(prm.items()))
    return StoredPoint("t", "vsb0001", key, key, prm, kind, status, result, error, None, "now")


def data_of(*points: StoredPoint) -> StoredResults:
    from pathlib import Path

    return StoredResults(Path("results.sqlite"), tuple(points), ())


# -- loading -----------------------------------------------------------------------------------
def test_load_dir_or_file_and_bad_input(full, tmp_path) -> None:
    assert load(full.store_path).points == full.points
    assert full.campaigns == ("fixture",)
    with pytest.raises(UsageError, match="no results store"):
        load(tmp_path / "nothing")
    with pytest.raises(UsageError, match="no results store"):
        load(tmp_path)                                     # a directory without results.sqlite
    (tmp_path / "results.sqlite").write_text("not sqlite")
    with pytest.raises(UsageError, match="not a vswbench results store"):
        load(tmp_path)
    with pytest.raises(UsageError, match="campaign 'other' is not in"):
        load(full.store_path, campaign="other")


# -- line rate and the wire --------------------------------------------------------------------
def test_line_rate_and_wire_rate() -> None:
    assert line_rate_pps(64) == pytest.approx(14_880_952.38, rel=1e-9)
    assert line_rate_pps(1518) == pytest.approx(812_743.8, rel=1e-6)
    assert line_rate_pps(64, 25e9) == pytest.approx(37_202_380.95, rel=1e-9)
    with pytest.raises(UsageError):
        line_rate_pps(0)
    assert wire_gbps(line_rate_pps(64), 64) == pytest.approx(10.0)
    imix = FrameSize.parse("imix").mean_bytes
    assert wire_gbps(1e6, "imix") == pytest.approx((imix + 20) * 8 / 1e3)
    assert imix == pytest.approx(334.5)
    assert wire_gbps(None, 64) is None


# -- ranking -----------------------------------------------------------------------------------
def test_ranking_rows_from_fixture(full) -> None:
    rows = ranking(full)
    p2p64 = [r for r in rows if (r.setup.scenario, r.setup.size, r.setup.variant)
             == ("p2p", 64, "")]
    assert [(r.rank, r.setup.switch) for r in p2p64] == [
        (1, "xdp"), (2, "bridge"), (3, "cni-bridge"), (4, "docker-bridge"), (5, "ovs")]
    bridge = p2p64[1]
    assert bridge.ndr_pps == NDR[("bridge", 64)] and bridge.ndr_mpps == pytest.approx(0.218)
    assert bridge.ndr_gbps == pytest.approx(218_000 * 84 * 8 / 1e9)
    assert bridge.pdr_pps == pytest.approx(218_000 * 1.04)
    assert bridge.pdr_gbps == pytest.approx(218_000 * 1.04 * 84 * 8 / 1e9, rel=1e-5)
    assert bridge.ndr_cv == 0.08 and bridge.repetitions == 1
    # cycles from the trial at the NDR itself (nearest below), not the lossy ones above it
    assert bridge.cycles_per_packet == round(TSC_HZ / 218_000)
    big = next(r for r in rows if r.setup == Setup("ovs", "p2p", 1518))
    assert big.ndr_gbps == pytest.approx(91_000 * 1538 * 8 / 1e9)
    assert not any(r.setup.switch == "xdp" and r.setup.size == 1518 for r in rows)  # failed
    pairs = [r for r in rows if r.setup.scenario.startswith("pairs:")]
    assert [r.ndr_pps for r in pairs] == [PAIRS_NDR[n] for n in (1, 2, 4)]
    assert all(r.rank == 1 for r in pairs)


def test_generator_bound_marker(full) -> None:
    rows = ranking(full)
    xdp = next(r for r in rows if r.setup == Setup("xdp", "p2p", 64))
    assert xdp.generator_bound and xdp.generator_ceiling_pps == 520_000.0
    assert not any(r.generator_bound for r in rows if r is not xdp)
    bound = [w for w in warnings(full) if w.category == "generator-bound"]
    assert len(bound) == 1 and bound[0].subject.startswith("xdp p2p 64 B")
    assert "520,000 pps" in bound[0].message


def test_latency_at_90_percent_matched_on_switch_scenario_size(full) -> None:
    rows = {r.setup: r for r in ranking(full)}
    for p in full.done("latency"):
        at90 = next(x for x in p.result["points"] if x["fraction_of_ndr"] == 0.9)
        row = rows[setup_of(p)]
        assert row.latency_p50_us == at90["latency_us"]["p50"]
        assert row.latency_p99_us == at90["latency_us"]["p99"]
        at50 = next(x for x in p.result["points"] if x["fraction_of_ndr"] == 0.5)
        assert row.latency_p50_us != at50["latency_us"]["p50"]
    # no latency point for the pairs scenarios: no latency in their rows
    assert all(r.latency_p50_us is None for s, r in rows.items() if s.scenario != "p2p")


def test_latency_matching_by_size_variant_and_fallback() -> None:
    search = {"ndr_pps": 100_000.0, "trials": []}
    lat = lambda p50: {"ndr_pps": 1.0, "points": [  # noqa: E731
        {"fraction_of_ndr": 0.5, "latency_us": {"p50": 1.0, "p99": 2.0}},
        {"fraction_of_ndr": 0.9, "latency_us": {"p50": p50, "p99": p50 * 3}}]}
    data = data_of(point("search", search), point("search", search, size=1518),
                   point("search", search, flows=8),
                   point("latency", lat(10.0), fractions=[0.5, 0.9]),
                   point("latency", lat(30.0), size=1518, fractions=[0.5, 0.9]),
                   point("latency", lat(50.0), switch="ovs", fractions=[0.9]))
    rows = {(r.setup.size, r.setup.variant): r for r in ranking(data)}
    assert (rows[(64, "")].latency_p50_us, rows[(64, "")].latency_p99_us) == (10.0, 30.0)
    assert rows[(1518, "")].latency_p50_us == 30.0
    # flows=8 has no latency point of its own: the only bridge/p2p/64 one is used
    assert rows[(64, "flows=8")].latency_p50_us == 10.0
    # a search's own --latency-at, when no latency point matches
    own = {**search, "latency_at_ndr": [{"fraction_of_ndr": 0.9, "latency_us": {"p50": 7.0,
                                                                               "p99": 9.0}}]}
    (row,) = ranking(data_of(point("search", own, switch="xdp")))
    assert (row.latency_p50_us, row.latency_p99_us) == (7.0, 9.0)
    assert latency_at({"points": [{"fraction_of_ndr": 0.5}]}) is None


def test_repetitions_give_median_and_cv() -> None:
    runs = [point("search", {"ndr_pps": v, "pdr_pps": v + 1, "generator_bound": False},
                  repetition=i or None) for i, v in enumerate((100.0, 130.0, 110.0))]
    (row,) = ranking(data_of(*runs))
    assert row.ndr_pps == 110.0 and row.pdr_pps == 111.0 and row.repetitions == 3
    assert row.ndr_cv == pytest.approx(15.275252 / 113.333333, rel=1e-5)
    assert any(w.category == "high CV" and "3 repetitions" in w.message
               for w in warnings(data_of(*runs)))


def test_cycles_near_ndr() -> None:
    """The highest-load trial at or below the NDR without loss or unsent frames."""
    trials = [{"intended_pps": 50.0, "lost": 0, "cycles_per_packet": 9.0},
              {"intended_pps": 90.0, "lost": 0, "unsent": 0, "cycles_per_packet": 8.0},
              {"intended_pps": 95.0, "lost": 3, "cycles_per_packet": 7.5},      # lossy
              {"intended_pps": 97.0, "lost": 0, "unsent": 40, "cycles_per_packet": 7.4},
              {"intended_pps": 99.0, "lost": 0, "cycles_per_packet": None},
              {"intended_pps": 120.0, "lost": 0, "cycles_per_packet": 5.0}]   # above the NDR
    assert cycles_near_ndr({"ndr_pps": 100.0, "trials": trials}) == 8.0
    assert cycles_near_ndr({"ndr_pps": 90.0, "trials": trials}) == 8.0        # at the NDR
    assert cycles_near_ndr({"ndr_pps": 40.0, "trials": trials}) is None
    assert cycles_near_ndr({"ndr_pps": None, "trials": trials}) is None


# -- load curves, histograms -------------------------------------------------------------------
def test_sweeps_latency_series_and_pairs(full) -> None:
    sweeps = load_series(full, "sweep")
    assert [s.setup.switch for s in sweeps] == ["bridge", "ovs"]
    assert all(len(s.loads) == 6 and s.loads[0].histogram for s in sweeps)
    offered = [lp.offered_pps for lp in sweeps[0].loads]
    assert offered == sorted(offered)
    lats = load_series(full, "latency")
    assert len(lats) == 5 and all([lp.fraction_of_ndr for lp in s.loads] == [0.5, 0.9]
                                  for s in lats)
    pairs = pairs_points(full)
    assert [(q.pairs, q.throughput_pps, q.metric) for q in pairs] == [
        (n, PAIRS_NDR[n], "NDR") for n in (1, 2, 4)]


def test_engine_bucket_math_and_ecdf() -> None:
    assert hist_bucket(255) == (255, 255)
    assert hist_bucket(256) == (256, 257)
    assert hist_bucket(20_000) == (19_968, 20_095)      # e = 7: width 128
    lat, hist = summarize(latency_samples(20.0, n=1000))
    assert sum(b[2] for b in hist) == 1002
    xs, ys = ecdf(tuple((a, b, c) for a, b, c in hist))
    assert ys[0] == 0.0 and ys[-1] == 1.0 and ys == sorted(ys) and xs == sorted(xs)
    assert xs[0] == hist[0][0] / 1000
    # the ECDF crosses 0.5 where the p50 is
    assert min(x for x, y in zip(xs, ys) if y >= 0.5) == pytest.approx(lat["p50"], rel=0.01)
    edges, fractions = rebin_log(hist, per_decade=10)
    assert len(edges) == len(fractions) + 1 and sum(fractions) == pytest.approx(1.0)
    ratios = {round(math.log10(b / a), 9) for a, b in zip(edges, edges[1:])}
    assert ratios == {0.1}
    assert ecdf([]) == ([], []) and rebin_log([]) == ([], [])
    with pytest.raises(UsageError):
        rebin_log(hist, per_decade=0)


# -- error bars --------------------------------------------------------------------------------
def test_error_bar_normalisation() -> None:
    def trial(achieved, **kw):
        return point("trial", {"achieved_pps": achieved}, rate=300_000.0, **kw)
    data = data_of(trial(200.0), trial(300.0, size=512), trial(400.0, size=1518),
                   trial(100.0, flows=16), trial(150.0, flows=16, size=512),
                   trial(220.0, repetition=1), trial(180.0, repetition=2),
                   point("search", {"ndr_pps": 50.0}), point("search", {"ndr_pps": 70.0},
                                                             switch="ovs"))
    bars = {(b.switch, b.metric, b.parameter): b for b in error_bars(data)}
    # 64-byte point with flows=1: median of repetitions 200, 220, 180 = 200
    size = bars[("bridge", "achieved", "size")]
    # contexts: flows=1 -> [200, 300, 400] (median 300), flows=16 -> [100, 150] (median 125)
    assert size.contexts == 2 and size.values == 3
    assert size.median_pps == pytest.approx((300 + 125) / 2)
    assert size.low == pytest.approx(min(200 / 300, 100 / 125))
    assert size.high == pytest.approx(max(400 / 300, 150 / 125))
    flows = bars[("bridge", "achieved", "flows")]
    # contexts: 64 B -> [200, 100], 512 B -> [300, 150]: both 2/3 and 4/3 of their median
    assert (flows.low, flows.high, flows.contexts) == (pytest.approx(2 / 3), pytest.approx(4 / 3),
                                                       2)
    reps = bars[("bridge", "achieved", "repetition")]
    assert (reps.median_pps, reps.low, reps.high) == (200.0, 0.9, 1.1)
    assert ("bridge", "achieved", "rate") not in bars          # never varied
    assert not any(k[1] == "NDR" for k in bars)               # one search per switch: no spread


def test_error_bars_from_fixture(full) -> None:
    bars = {(b.switch, b.metric, b.parameter) for b in error_bars(full)}
    assert {("bridge", "NDR", "size"), ("ovs", "NDR", "size"), ("bridge", "achieved", "size"),
            ("bridge", "achieved", "flows"), ("bridge", "achieved", "repetition")} <= bars
    for b in error_bars(full):
        assert b.low <= 1.0 <= b.high and b.median_pps > 0


# -- warnings and fingerprints -----------------------------------------------------------------
def test_warnings_from_fixture(full) -> None:
    ws = warnings(full)
    cats = {w.category for w in ws}
    assert cats == {"generator-bound", "high CV", "missing tuning", "failed"}
    cv = [w for w in ws if w.category == "high CV"]
    assert any("ndr_pps varies by 8.0 %" in w.message for w in cv)
    assert any("varies by 9.0 %" in w.message for w in cv)        # the b2b statistics
    failed = [w for w in ws if w.category == "failed"]
    assert len(failed) == 2 and all("xdp_redirect did not attach" in w.message for w in failed)
    tuning = [w.message for w in ws if w.category == "missing tuning"]
    assert len(tuning) == 1 and tuning[0].startswith("no isolated cores")


def test_fingerprint_from_partial_json() -> None:
    fp = Fingerprint.from_json({"kernel_release": "6.18", "governors": {"cpu0": "powersave"},
                                "turbo": "on", "unknown_future_field": 1})
    assert fp.kernel_release == "6.18" and fp.cpu_model == NA and fp.logical_cpus is None
    assert fp.offloads == {} and fp.switch_versions == {}
    text = " ".join(missing_tuning(fp))
    assert "governor is not performance" in text and "turbo" in text


def test_error_bars_exported_as_data(full) -> None:
    import csv
    import io
    import json

    from vswbench.report.spread import error_bars_csv
    from vswbench.report.spread import error_bars_json

    bars = error_bars(full)
    data = json.loads(error_bars_json(bars))
    assert data["schema"] == "vswbench.error-bars" and len(data["bars"]) == len(bars)
    assert {b["parameter"] for b in data["bars"]} >= {"size", "flows"}
    rows = list(csv.DictReader(io.StringIO(error_bars_csv(bars))))
    assert len(rows) == len(bars) and float(rows[0]["low"]) <= 1.0 <= float(rows[0]["high"])


def test_throughput_vs_size_needs_two_frame_sizes(full) -> None:
    from vswbench.report.figure import Colours
    from vswbench.report.sections.throughput_size import throughput_vs_size

    rows = ranking(full)
    colours = Colours(sorted({r.setup.switch for r in rows}))
    assert throughput_vs_size(rows, colours, 10e9) is not None       # 64 and 1518 B
    at64 = [r for r in rows if r.setup.size_bytes == 64]
    # one size (a chains campaign, every setup at 64 B): a column of dots, not drawn
    assert throughput_vs_size(at64, colours, 10e9) is None


def test_the_containers_section_compares_against_the_bridge_and_shows_the_netconf(full) -> None:
    from vswbench.report.model import build_model
    from vswbench.report.sections.containers import SECTION
    from vswbench.report.sections.containers import container_rows

    model = build_model(full)
    groups = container_rows(model.ranking)
    assert list(groups) == [("p2p", "64 B", "")]
    assert [r.setup.switch for r in groups[("p2p", "64 B", "")]] == [
        "bridge", "cni-bridge", "docker-bridge"]
    html = SECTION.body(model, [])
    assert f"<td>{190_000 / 218_000:.2f}</td>" in html       # cni-bridge's NDR / bridge's
    assert "netconf of cni-bridge" in html and "&quot;hairpinMode&quot;: true" in html
