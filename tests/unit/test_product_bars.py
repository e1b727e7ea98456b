"""Whole-product error bars (report/product_bars.py, Fang et al. Fig. 7): per switch, function and
metric the median over every point of the product, whiskers at min and max, / median; exported
as csv/json and drawn beside the per-parameter bars."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.report_fixtures import TRIAL_ACHIEVED
from tests.report_fixtures import write_fixture_store
from vswbench.report.product_bars import ProductBar
from vswbench.report.product_bars import product_bar_plot
from vswbench.report.product_bars import product_bars
from vswbench.report.product_bars import product_bars_csv
from vswbench.report.product_bars import product_bars_json
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.store import StoredPoint


def point(kind: str, result: dict | None, **params) -> StoredPoint:
    prm = {"kind": kind, "switch": "bridge", "scenario": "p2p", "size": 64, "burst": 1,
           "flows": 1, "placement": "default", "io": "afpacket", **params}
    key = "-".join(f"{k}={v}" for k, v in sorted(prm.items()))
    return StoredPoint("t", "vsb0001", key, key, prm, kind, "done", result, None, None, "now")


def data_of(*points: StoredPoint) -> StoredResults:
    return StoredResults(Path("results.sqlite"), tuple(points), ())


def trial(achieved: float, **kw) -> StoredPoint:
    return point("trial", {"achieved_pps": achieved}, rate=300_000.0, **kw)


def test_median_min_max_over_the_whole_product() -> None:
    data = data_of(
        trial(100.0), trial(200.0, size=512), trial(400.0, size=1518),
        trial(50.0, flows=16), trial(300.0, flows=16, size=512), trial(600.0, flows=16, size=1518),
        trial(120.0, repetition=1), trial(80.0, repetition=2),       # 64 B: median 100
        trial(1000.0, switch="ovs"), trial(500.0, switch="ovs", churn="1000/0.5"),
        trial(90.0, function="nat"), trial(30.0, function="nat", size=512),
        trial(70.0, function="nat", size=1518),
        point("search", {"ndr_pps": 50.0}))                           # one point: no product
    bars = {(b.switch, b.function, b.metric): b for b in product_bars(data)}
    l2 = bars[("bridge", "l2", "achieved")]
    # 6 points (repetitions folded into their median): 100 200 400 50 300 600 -> median 250
    assert l2.points == 6 and l2.median_pps == 250.0
    assert (l2.min_pps, l2.max_pps) == (50.0, 600.0)
    assert (l2.low, l2.high) == (pytest.approx(0.2), pytest.approx(2.4))
    assert l2.parameters == "flows x size"
    nat = bars[("bridge", "nat", "achieved")]                        # function is a grouping key
    assert (nat.points, nat.median_pps, nat.low, nat.high) == (3, 70.0, pytest.approx(30 / 70),
                                                                pytest.approx(90 / 70))
    ovs = bars[("ovs", "l2", "achieved")]
    assert ovs.points == 2 and ovs.parameters == "churn" and ovs.low == pytest.approx(500 / 750)
    assert not any(k[2] == "NDR" for k in bars)
    for b in bars.values():
        assert b.low <= 1.0 <= b.high


def test_function_from_result_when_params_lack_it() -> None:
    data = data_of(point("trial", {"achieved_pps": 10.0, "function": "acl"}, rate=1.0),
                   point("trial", {"achieved_pps": 30.0, "function": "acl"}, rate=2.0))
    (bar,) = product_bars(data)
    assert (bar.function, bar.median_pps, bar.parameters) == ("acl", 20.0, "rate")


def test_fixture_store_bars_and_exports(tmp_path) -> None:
    data = load(write_fixture_store(tmp_path / "results.sqlite").parent)
    bars = {(b.switch, b.function, b.metric): b for b in product_bars(data)}
    b = bars[("bridge", "l2", "achieved")]
    # 64/512 B x 1/16 flows at 300k, 2 repetitions each (x1.00 and x1.02: median x1.01)
    values = sorted(v * 1.01 for v in TRIAL_ACHIEVED.values())
    assert b.points == 4 and b.median_pps == pytest.approx((values[1] + values[2]) / 2)
    assert (b.min_pps, b.max_pps) == (pytest.approx(values[0]), pytest.approx(values[-1]))
    assert b.parameters == "flows x size"
    assert ("bridge", "l2", "NDR") in bars and ("ovs", "l2", "NDR") in bars
    doc = json.loads(product_bars_json(list(bars.values())))
    assert doc["schema"] == "vswbench.product-error-bars" and len(doc["bars"]) == len(bars)
    rows = list(csv.DictReader(io.StringIO(product_bars_csv(list(bars.values())))))
    assert list(rows[0]) == ["switch", "function", "metric", "median_pps", "min_pps", "max_pps",
                             "low", "high", "points", "parameters"]
    assert all(float(r["low"]) <= 1.0 <= float(r["high"]) for r in rows)


def test_plot() -> None:
    from vswbench.report.figure import Colours

    bars = [ProductBar("bridge", "l2", "achieved", 250.0, 50.0, 600.0, 0.2, 2.4, 6, "size"),
            ProductBar("ovs", "nat", "achieved", 70.0, 30.0, 90.0, 3 / 7, 9 / 7, 3, "size")]
    fig = product_bar_plot(bars, Colours(("bridge", "ovs")))
    assert fig is not None and fig.axes[0].get_xlabel() == "function"
    assert product_bar_plot([], Colours(())) is None
