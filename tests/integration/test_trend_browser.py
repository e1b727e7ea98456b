"""The trend page in a real browser: headless Chromium loads the page `vswbench trend --html`
writes from a history of fixture runs (tests/history_fixtures.py: invented numbers, a 20 % step
of the bridge at the ninth night), every section's plot decodes, and the text the browser shows
names the regression and the kernel that changed. Needs the Debian package `chromium` (setup.sh
installs it); skipped with that fix when it is absent. No root needed."""

from __future__ import annotations

import html
import re

import pytest

from tests.history_fixtures import step_series
from tests.integration.browser import find_chromium
from tests.integration.browser import run_chromium
from vswbench.cli.app import main


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def test_trend_page_renders_and_reads(chromium, tmp_path) -> None:
    dirs = step_series(tmp_path / "runs", nights=12, step_at=8)
    history, page = tmp_path / "history.sqlite", tmp_path / "trend.html"
    assert main(["history", "add", *map(str, dirs), "--history", str(history)]) == 0
    assert main(["trend", str(history), "--html", str(page), "--fail-on-regression", "5"]) == 1
    proc = run_chromium(chromium, tmp_path / "profile", "--dump-dom",
                        "--virtual-time-budget=10000", page.resolve().as_uri())
    dom = proc.stdout
    body = re.search(r"<body([^>]*)>", dom)
    assert body, "no <body> in the dumped DOM"
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    sections = re.findall(r'<section id="([^"]+)"', dom)
    assert len(sections) == 2                          # bridge and veth, one machine
    assert set(attrs["data-rendered"].split()) == set(sections)
    assert int(attrs["data-images-loaded"]) == 2
    text = re.sub(r"<[^>]+>", " ", dom.split("<body", 1)[1])
    text = re.sub(r"\s+", " ", html.unescape(text))
    assert "1 regression(s), 0 progression(s), 1 within noise" in text
    assert re.search(r"bridge p2p 64 B preset quick .*regression -\d+\.\d %", text)
    assert "kernel 6.1.0 -> 6.2.0" in text
    assert "Regressions beyond 5 %: 1." in text
