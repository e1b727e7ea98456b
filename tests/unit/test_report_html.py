"""report/html.py, plots.py, build_report: the page's sections, embedded plots, no external
URL, plot files, empty sections, determinism (fixture stores: invented numbers)."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.errors import UsageError
from vswbench.report.build import build_report
from vswbench.report.sections import SECTION_IDS

PLOT_SECTIONS = ("throughput-size", "offered-achieved", "latency-load", "latency-distribution",
                 "delay-model",
                 "error-bars", "cycles", "profiles", "diagnostics", "chain-model", "pairs",
                 "flow-count", "cloning", "table-size", "rule-update", "sockets")


class Page(HTMLParser):
    """Sections in order, their headings, images and empty notes; every src and href."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.headings: dict[str, str] = {}
        self.images: dict[str, int] = {}
        self.empty: dict[str, str] = {}
        self.urls: list[str] = []
        self._section: str | None = None
        self._capture: str | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v is not None]
        if tag == "section":
            self._section = a["id"]
            self.sections.append(a["id"])
            self.images[a["id"]] = 0
        elif tag == "img" and self._section:
            self.images[self._section] += 1
        elif tag == "h2" and self._section:
            self._capture = "h2"
        elif tag == "p" and self._section and a.get("class") == "empty":
            self._capture = "empty"

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = None
        if tag in ("h2", "p"):
            self._capture = None

    def handle_data(self, data):
        if self._capture == "h2":
            self.headings[self._section] = self.headings.get(self._section, "") + data
        elif self._capture == "empty":
            self.empty[self._section] = self.empty.get(self._section, "") + data


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    base = tmp_path_factory.mktemp("full")
    write_fixture_store(base / "results.sqlite")
    files = build_report(base, base / "report")
    return files, files.html.read_text(encoding="utf-8")


def test_every_section_in_order_with_a_heading(full) -> None:
    files, text = full
    page = Page(text)
    assert tuple(page.sections) == SECTION_IDS == files.sections
    assert SECTION_IDS == ("summary", "ranking", "throughput-size", "sockets", "offered-achieved",
                           "latency-load",
                           "latency-distribution", "delay-model", "error-bars", "cycles",
                           "profiles", "diagnostics",
                           "chain-model", "pairs", "remote", "containers", "flow-count", "cloning",
                           "table-size", "rule-update", "system",
                           "warnings")
    assert all(page.headings.get(s, "").strip() for s in SECTION_IDS)
    assert page.empty == {} and files.empty_sections == ()
    assert (files.html.parent / "error_bars.json").is_file()
    assert (files.html.parent / "error_bars.csv").read_text().startswith("switch,metric,parameter")
    assert (files.html.parent / "product_error_bars.csv").read_text().startswith(
        "switch,function,metric,median_pps")
    assert (files.html.parent / "product_error_bars.json").is_file()
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text


def test_every_plot_embedded_and_written_as_png_and_svg(full) -> None:
    files, text = full
    page = Page(text)
    pngs, svgs = files.png, files.svg
    # 16 + product bars + profiles (categories, a flame graph per core) + diagnostics (irq,
    # cost parts) + table size + rule update + sockets' goodput
    assert len(pngs) == len(svgs) == 25 and len(files.plots) == 50
    assert {p.stem for p in pngs} == {p.stem for p in svgs}
    assert sum(page.images.values()) == text.count("<img ") == len(pngs)
    assert all(page.images[s] >= 1 for s in PLOT_SECTIONS)
    assert page.images["latency-load"] == 2 and page.images["latency-distribution"] == 2
    # delay model: one ECDF plot per scenario and size, one per switch's load sweep
    assert page.images["delay-model"] == 4
    # per-parameter bars and the whole-product bars (Fang Fig. 7) beside them
    assert page.images["error-bars"] == 2
    assert page.images["ranking"] == page.images["system"] == page.images["warnings"] == 0
    for p in pngs:
        assert p.parent == files.plots_dir and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for p in svgs:
        head = p.read_text(encoding="utf-8")[:300]
        assert head.startswith("<?xml") and "<svg" in head
    # each embedded image is one of the PNG files, byte for byte
    import base64
    embedded = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert {base64.b64decode(e) for e in embedded} == {p.read_bytes() for p in pngs}


def test_no_external_url(full) -> None:
    _, text = full
    page = Page(text)
    assert page.urls
    for url in page.urls:
        assert not re.match(r"(?i)\s*(https?:|//|ftp:)", url), url
        assert url.startswith(("data:image/png;base64,", "#", "plots/")), url
    assert not re.search(r"(?i)(src|href)\s*=\s*[\"']?\s*(https?:)?//", text)
    assert "@import" not in text and "url(" not in text
    assert "http://" not in text and "https://" not in text


def test_ranking_content(full) -> None:
    _, text = full
    ranking = text.split('id="ranking"', 1)[1].split("</section>", 1)[0]
    assert "≥ 0.520" in ranking and "generator-bound" in ranking
    assert "0.218" in ranking and "0.146" in ranking            # bridge 64 B: Mpps, Gbit/s
    assert "1518 B, kernel switches" in ranking and "64 B, kernel switches (pairs:4)" in ranking
    assert "8.0 %" in ranking                                   # the CV of bridge 64 B
    system = text.split('id="system"', 1)[1].split("</section>", 1)[0]
    assert "6.18.0-fixture" in system and "FIXTURE: synthetic numbers" in system
    assert "generic-receive-offload" in system
    warn = text.split('id="warnings"', 1)[1].split("</section>", 1)[0]
    for category in ("generator-bound", "high CV", "missing tuning", "failed"):
        assert category in warn
    assert "xdp_redirect did not attach" in warn


def test_empty_sections_left_out(tmp_path) -> None:
    """A section without data is not on the page; the summary names what was left out."""
    write_fixture_store(tmp_path / "results.sqlite", variant="trials-only")
    files = build_report(tmp_path / "results.sqlite", tmp_path / "out")
    text = files.html.read_text(encoding="utf-8")
    page = Page(text)
    assert tuple(page.sections) == files.sections == ("summary", "system", "warnings")
    assert sum(page.images.values()) == 0 and files.plots == ()
    assert page.empty == {"summary": "no search in this campaign: no verdict"}
    assert set(files.empty_sections) == set(SECTION_IDS) - set(files.sections)
    assert "Not in this report (no data in this campaign): Ranking per frame size" in text
    assert 'href="#cycles"' not in text
    # a run without any point: only the fingerprint and the tuning warnings remain
    write_fixture_store(tmp_path / "empty.sqlite", variant="empty")
    files = build_report(tmp_path / "empty.sqlite", tmp_path / "out2")
    assert files.sections == ("summary", "system", "warnings")
    assert "no isolated cores" in files.html.read_text(encoding="utf-8")


def test_deterministic_and_stale_plots_removed(tmp_path, full) -> None:
    """The same store built again, into a report directory a former build left a plot in (and
    a file of the user's): the same page and plots, byte for byte, the stale plot removed, the
    user's file kept (one build checks both: a report build takes seconds)."""
    files, text = full
    store = files.html.parent.parent / "results.sqlite"
    plots = tmp_path / "again" / files.plots_dir.name
    plots.mkdir(parents=True)
    stale = plots / "old-plot.svg"
    stale.write_text("<svg/>")
    keep = plots / "notes.txt"
    keep.write_text("mine")
    again = build_report(store, tmp_path / "again")
    assert again.plots_dir == plots
    assert again.html.read_text(encoding="utf-8") == text
    assert [p.name for p in again.plots] == [p.name for p in files.plots]
    for a, b in zip(files.plots, again.plots):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert not stale.exists() and keep.exists()


def test_bad_input(tmp_path) -> None:
    with pytest.raises(UsageError, match="no results store"):
        build_report(tmp_path / "missing", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    write_fixture_store(tmp_path / "results.sqlite", variant="empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        build_report(tmp_path, tmp_path / "file")
    with pytest.raises(UsageError, match="link speed"):
        build_report(tmp_path, tmp_path / "out", link_bps=0)
    with pytest.raises(UsageError, match="fixture variant"):
        write_fixture_store(tmp_path / "x.sqlite", variant="nope")
    assert not Path(tmp_path / "x.sqlite").exists()
