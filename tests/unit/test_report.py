import json
from dataclasses import asdict

from vswbench.measure.demo import BackendResult
from vswbench.measure.demo import DemoOptions
from vswbench.measure.demo import DemoReport
from vswbench.report.demo_page import save_report


def sample_report():
    good = BackendResult("afpacket", tx_frames=1_000_000, rx_frames=999_000, tx_kpps=333.3,
                         rx_kpps=333.0, lost=1000, loss_ratio=0.001, rtt_min_us=9.0,
                         rtt_p50_us=18.5, rtt_p99_us=40.2, rtt_max_us=900.0, rtt_samples=20000)
    bad = BackendResult("afxdp", errors=["throughput: <boom> & friends"])
    return DemoReport("vsb1a2b", "2024-01-01T00:00:00+0000", 12.5, {"kernel": "6.18"},
                      asdict(DemoOptions()), {"backends": []}, {"udp": "not compiled"}, [good, bad])


def test_save_report_writes_json_and_html(tmp_path):
    report = sample_report()
    json_path, html_path = save_report(report, tmp_path / "results")
    assert json_path.name.startswith("demo-") and json_path.suffix == ".json"
    assert html_path.with_suffix(".json") == json_path
    data = json.loads(json_path.read_text())
    assert data["run_id"] == "vsb1a2b"
    assert data["results"][0]["tx_kpps"] == 333.3
    html = html_path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html
    assert "333.3" in html and "18.5" in html
    assert "&lt;boom&gt; &amp; friends" in html and "<boom>" not in html
    assert "<script" not in html and "http" not in html  # self-contained


def test_report_ok_flag():
    report = sample_report()
    assert not report.ok
    report.results.pop()
    assert report.ok


def test_repeated_sweeps_share_one_legend_entry_per_setup() -> None:
    """Three repetitions of 40 sweeps: 40 legend entries (plus the diagonal), and the figure
    still lays out (matplotlib had collapsed the axes under 120 entries)."""
    import warnings

    from vswbench.report.figure import Colours
    from vswbench.report.figure import render
    from vswbench.report.sections.offered_achieved import offered_vs_achieved
    from vswbench.results.points import Setup
    from vswbench.results.series import LoadPoint
    from vswbench.results.series import LoadSeries

    def sweep(n: int, rep: int) -> LoadSeries:
        loads = tuple(LoadPoint(x, min(x, 1000.0 * n) * (1 - 0.01 * rep), 0.0, None, ())
                      for x in (1e3, 5e3, 2e4))
        return LoadSeries("sweep", Setup("veth", f"chain:{n}", 64), rep, loads)
    fig = offered_vs_achieved([sweep(n, r) for r in range(3) for n in range(1, 41)],
                              Colours(["veth"]))
    assert fig is not None
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert len(labels) == 41 and labels[0] == "veth chain:1 64 B"
    assert "every repetition" in fig.axes[0].get_title()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render(fig)
