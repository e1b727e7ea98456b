"""The report in a real browser: headless Chromium renders report.html (built from a fixture store:
invented numbers) to a screenshot that is not blank, and the page's own load script reports that
every section's images decoded (naturalWidth > 0). Needs the Debian package `chromium` (setup.sh
installs it); skipped with that fix when it is absent. No root needed."""

from __future__ import annotations

import re

import numpy as np
import pytest
from matplotlib import image as mpimg

from tests.integration.browser import find_chromium
from tests.integration.browser import run_chromium
from vswbench.report.sections import SECTION_IDS

WINDOW = (1400, 6000)


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


@pytest.fixture(scope="module")
def report(fixture_report):
    return fixture_report("full")


def _body_attrs(dom: str) -> dict[str, str]:
    m = re.search(r"<body([^>]*)>", dom)
    assert m, "no <body> in the dumped DOM"
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def test_screenshot_is_not_blank(chromium, report, tmp_path) -> None:
    shot = tmp_path / "report.png"
    run_chromium(chromium, tmp_path / "profile", f"--screenshot={shot}",
              f"--window-size={WINDOW[0]},{WINDOW[1]}", report.html.resolve().as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (WINDOW[1], WINDOW[0])
    rgb = pixels[..., :3].reshape(-1, 3)
    packed = (rgb * 255).astype(np.uint32) @ np.array([65536, 256, 1], dtype=np.uint32)
    colours = np.unique(packed)
    assert len(colours) > 50, f"screenshot has {len(colours)} colours: blank or nearly"
    not_white = float((rgb.min(axis=1) < 0.9).mean())
    assert not_white > 0.02, f"only {not_white:.1%} of the screenshot is drawn"


def test_every_section_and_plot_rendered(chromium, report, tmp_path) -> None:
    dom = run_chromium(chromium, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=10000",
                    report.html.resolve().as_uri()).stdout
    attrs = _body_attrs(dom)
    assert "data-rendered" in attrs, "the page's load script did not run"
    assert set(attrs["data-rendered"].split()) == set(SECTION_IDS)
    assert int(attrs["data-images-loaded"]) == len(report.png) > 0
    for sid in SECTION_IDS:
        assert f'id="{sid}"' in dom


def test_a_broken_image_is_caught(chromium, report, tmp_path) -> None:
    """The check can fail: a corrupt image makes its section drop out of data-rendered."""
    text = report.html.read_text(encoding="utf-8")
    marker = 'src="data:image/png;base64,'
    start = text.index(marker, text.index('<section id="cycles">')) + len(marker)
    broken = text[:start] + "AAAA" * 16 + text[start + 64:]      # a corrupt PNG header
    page = report.html.with_name("broken.html")
    page.write_text(broken, encoding="utf-8")
    dom = run_chromium(chromium, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=10000",
                    page.resolve().as_uri()).stdout
    rendered = set(_body_attrs(dom)["data-rendered"].split())
    assert rendered == set(SECTION_IDS) - {"cycles"}


@pytest.fixture(scope="module")
def quick_report(fixture_report):
    return fixture_report("quick")


FIRST_SCREEN_JS = """
window.addEventListener("load", function () {
  var s = document.getElementById("summary"), r = document.getElementById("ranking");
  var box = s.getBoundingClientRect();
  var out = {top: box.top, verdicts: Array.from(s.querySelectorAll("li.verdict")).map(
               function (li) { return li.innerText; }),
             machine: s.querySelector("p.machine").innerText,
             references: Array.from(r.querySelectorAll("tr.reference td:nth-child(2)")).map(
               function (td) { return td.innerText; }),
             ceilings: r.querySelectorAll("tr.ceiling").length,
             described: Array.from(r.querySelectorAll("tr[data-detail]")).map(
               function (tr) { return tr.dataset.detail + ": " + tr.cells[1].textContent; })};
  var pre = document.createElement("pre");
  pre.id = "first-screen";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
"""


def test_first_screen_reads_as_a_verdict(chromium, quick_report, tmp_path) -> None:
    """Chromium renders the page; a probe script reads what a reader sees first: the summary at
    the top, the verdict lines, the machine, the baselines and ceiling rows, what each backend
    is (ovs: the userspace datapath)."""
    import json

    page = quick_report.html.with_name("probe.html")
    page.write_text(quick_report.html.read_text(encoding="utf-8").replace(
        "</body>", f"<script>{FIRST_SCREEN_JS}</script></body>"), encoding="utf-8")
    dom = run_chromium(chromium, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=10000",
                    f"--window-size={WINDOW[0]},900", page.resolve().as_uri()).stdout
    m = re.search(r'<pre id="first-screen">(.*?)</pre>', dom, re.S)
    assert m, "the probe script did not run"
    import html as html_lib
    seen = json.loads(html_lib.unescape(m.group(1)))
    assert seen["top"] < 900, "the summary is not on the first screen"
    assert seen["verdicts"][0] == "64 B, kernel switches: xdp = tc-bpf = bridge > ovs"
    assert "64 B, DPDK switches: testpmd > ovs-dpdk" in seen["verdicts"]
    assert "fixture-host" in seen["machine"] and "virtual machine" in seen["machine"]
    assert "2 logical CPUs" in seen["machine"]
    assert sorted(seen["references"]) == ["memif", "memif", "veth", "veth"]
    assert seen["ceilings"] == 4
    described = "\n".join(seen["described"])
    assert "ovs: Open vSwitch, userspace datapath (netdev)" in described
    assert "xdp: native XDP bpf_redirect" in described
