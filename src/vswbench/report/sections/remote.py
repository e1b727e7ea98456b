"""The "remote" section: local vs remote vs remote-vxlan side by side per switch and frame size
(report/remote.py)."""

from __future__ import annotations

from collections.abc import Sequence

from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.remote import remote_section
from vswbench.report.sections.base import Section


class Remote(Section):
    id = "remote"
    title = "Local vs remote vs remote-vxlan: the cost of the wire and of encapsulation"

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        return remote_section(model.data.points)


SECTION = Remote()
