"""The report's sections, one module each, in page order.

SECTIONS is the one list the page (html.render_page: the nav, the sections, what the summary
says was left out), the plots (plots.make_plots) and the section ids (SECTION_IDS) loop over; a
new section is a module here (a Section: id, title, intro, "no data" note, figures, body,
base.py) and its place in this list.
"""

from __future__ import annotations

from vswbench.report.sections import (
                                      chain_model,
                                      cloning,
                                      containers,
                                      cycles,
                                      delay_model,
                                      diagnostics,
                                      error_bars,
                                      flow_count,
                                      latency_distribution,
                                      latency_load,
                                      offered_achieved,
                                      pairs,
                                      profiles,
                                      ranking,
                                      remote,
                                      rule_update,
                                      sockets,
                                      summary,
                                      system,
                                      table_size,
                                      throughput_size,
                                      warnings,
)
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
