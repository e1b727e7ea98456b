"""report/sections/: every section module is on the page's list once, with an id and a title of
its own; the list is the one the section ids come from."""

import importlib
import pkgutil

import vswbench.report.sections as sections_pkg
from vswbench.report.sections import SECTION_IDS
from vswbench.report.sections import SECTIONS
from vswbench.report.sections.base import Section


def test_every_section_module_is_listed_once() -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(sections_pkg.__path__) if m.name != "base")
    listed = [type(s).__module__.rsplit(".", 1)[1] for s in SECTIONS]
    assert sorted(listed) == names and len(set(listed)) == len(listed)
    for name in names:
        module = importlib.import_module(f"vswbench.report.sections.{name}")
        assert isinstance(module.SECTION, Section) and module.SECTION in SECTIONS


def test_ids_and_titles_are_unique_and_the_summary_is_first() -> None:
    assert tuple(s.id for s in SECTIONS) == SECTION_IDS
    assert len(set(SECTION_IDS)) == len(SECTIONS) and all(SECTION_IDS)
    assert len({s.name for s in SECTIONS}) == len(SECTIONS) and all(s.title for s in SECTIONS)
    assert [s.id for s in SECTIONS if s.always_shown] == ["summary"] == [SECTION_IDS[0]]
