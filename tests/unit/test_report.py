import json

from vswbench.demo import BackendResult, DemoOptions, DemoReport, save_report
from dataclasses import asdict


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
