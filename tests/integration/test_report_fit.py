"""The report fits a 1280 px screen (issue 44, part 3): headless Chromium at 1280x800 renders
report.html (built from fixture stores: invented numbers) with a probe script that measures
what a reader sees. No horizontal scroll on the page, also with every disclosure open (the wide
detail tables and the KS-distance matrix scroll inside their own boxes); on the quick suite's
report, the verdicts and the whole first ranking table (at most 9 columns) are above the fold.
Needs the Debian package `chromium` (skipped with that fix when absent); no root."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest

from tests.integration.browser import find_chromium
from tests.integration.browser import run_chromium

WIDTH, HEIGHT = 1280, 800

PROBE_JS = """
window.addEventListener("load", function () {
  var d = document.documentElement;
  function over() {
    return Array.from(document.querySelectorAll("body *")).filter(function (e) {
      return e.getBoundingClientRect().right > d.clientWidth + 1 && !e.closest(".scroll, table");
    }).map(function (e) { return e.tagName + "." + e.className; }).slice(0, 10);
  }
  var s = document.getElementById("summary"), r = document.getElementById("ranking");
  var first = r.querySelector("table.ranking"), verdicts = s.querySelector("ul.verdicts");
  var out = {innerWidth: window.innerWidth, innerHeight: window.innerHeight,
             scrollWidth: d.scrollWidth, clientWidth: d.clientWidth, over: over(),
             verdictsBottom: verdicts.getBoundingClientRect().bottom,
             tableBottom: first.getBoundingClientRect().bottom,
             tableRight: first.getBoundingClientRect().right,
             columns: first.rows[0].cells.length, overTables: Array.from(
               document.querySelectorAll("table")).filter(function (t) {
                 return t.getBoundingClientRect().right > d.clientWidth + 1; }).length,
             verdicts: Array.from(verdicts.querySelectorAll("li")).map(
               function (li) { return li.innerText; })};
  document.querySelectorAll("details").forEach(function (x) { x.open = true; });
  out.openScrollWidth = d.scrollWidth;
  out.openOver = over();
  var boxes = Array.from(document.querySelectorAll(".scroll"));
  out.boxes = boxes.map(function (b) { return [b.scrollWidth, b.clientWidth]; });
  var pre = document.createElement("pre");
  pre.id = "fit-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
"""


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def _probe(chromium: str, page: Path, tmp_path: Path) -> dict:
    probe = page.with_name("fit-probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", f"<script>{PROBE_JS}</script></body>"), encoding="utf-8")
    dom = run_chromium(chromium, tmp_path / "profile", "--dump-dom",
                       "--virtual-time-budget=10000", f"--window-size={WIDTH},{HEIGHT}",
                       probe.resolve().as_uri()).stdout
    m = re.search(r'<pre id="fit-probe">(.*?)</pre>', dom, re.S)
    assert m, "the probe script did not run"
    return json.loads(html_lib.unescape(m.group(1)))


@pytest.mark.parametrize("variant", ["quick", "full"])
def test_no_horizontal_scroll_at_1280(chromium, fixture_report, tmp_path, variant) -> None:
    seen = _probe(chromium, fixture_report(variant).html, tmp_path)
    assert seen["innerWidth"] == WIDTH, seen
    assert seen["scrollWidth"] <= seen["clientWidth"], seen["over"]
    assert seen["openScrollWidth"] <= seen["clientWidth"], seen["openOver"]
    assert seen["tableRight"] <= seen["clientWidth"]
    assert seen["columns"] <= 9
    assert seen["overTables"] == 0        # a wide table (the KS matrix) scrolls in its box
    assert all(c <= seen["clientWidth"] for _, c in seen["boxes"]), seen["boxes"]


def test_verdicts_and_the_first_table_above_the_fold(chromium, fixture_report, tmp_path) -> None:
    seen = _probe(chromium, fixture_report("quick").html, tmp_path)
    # the fold: the viewport of a 1280x800 window (headless Chromium's, less its own frame)
    fold = min(HEIGHT, seen["innerHeight"])
    print(f"verdicts end at {seen['verdictsBottom']:.0f} px, the first table at "
          f"{seen['tableBottom']:.0f} px; fold {fold} px")
    assert seen["verdictsBottom"] < seen["tableBottom"] <= fold, seen
    assert seen["verdicts"][0] == "64 B, kernel switches: xdp = tc-bpf = bridge > ovs"
    assert len(seen["verdicts"]) == 4
