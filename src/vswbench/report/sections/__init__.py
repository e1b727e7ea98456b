"""The report's sections, one module each, in page order.

SECTIONS is the one list the page (html.render_page: the nav, the sections, what the summary
says was left out), the plots (plots.make_plots) and the section ids (SECTION_IDS) loop over; a
new section is a module here (a Section: id, title, intro, "no data" note, figures, body,
base.py) and its place in this list.
"""

from __future__ import annotations

from vswbench.report.sections import chain_model
from vswbench.report.sections import cloning
from vswbench.report.sections import containers
from vswbench.report.sections import cycles
from vswbench.report.sections import delay_model
from vswbench.report.sections import diagnostics
from vswbench.report.sections import error_bars
from vswbench.report.sections import flow_count
from vswbench.report.sections import latency_distribution
from vswbench.report.sections import latency_load
from vswbench.report.sections import offered_achieved
from vswbench.report.sections import pairs
from vswbench.report.sections import profiles
from vswbench.report.sections import ranking
from vswbench.report.sections import remote
from vswbench.report.sections import rule_update
from vswbench.report.sections import sockets
from vswbench.report.sections import summary
from vswbench.report.sections import system
from vswbench.report.sections import table_size
from vswbench.report.sections import throughput_size
from vswbench.report.sections import warnings
from vswbench.report.sections.base import Section

SECTIONS: tuple[Section, ...] = (
    summary.SECTION,
    ranking.SECTION,
    throughput_size.SECTION,
    sockets.SECTION,
    offered_achieved.SECTION,
    latency_load.SECTION,
    latency_distribution.SECTION,
    delay_model.SECTION,
    error_bars.SECTION,
    cycles.SECTION,
    profiles.SECTION,
    diagnostics.SECTION,
    chain_model.SECTION,
    pairs.SECTION,
    remote.SECTION,
    containers.SECTION,
    flow_count.SECTION,
    cloning.SECTION,
    table_size.SECTION,
    rule_update.SECTION,
    system.SECTION,
    warnings.SECTION,
)
SECTION_IDS = tuple(s.id for s in SECTIONS)

__all__ = ["SECTIONS", "SECTION_IDS", "Section"]
