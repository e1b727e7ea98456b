"""The "containers" section: what the container networks' defaults cost (issue 33). The CNI
backends (cni-*) and Docker's default network (docker-bridge) beside the hand-built mechanism
they wire (bridge; macvlan, router, veth for cni-macvlan, cni-ptp, cni-host-device) of the same
scenario, frame size and variant: median NDR over the repetitions and its ratio to that one's,
latency at 90 % of the NDR, and the netconf each CNI backend was built with (stored with its
points as switch_stats.cni_netconf)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from html import escape

from vswbench.report.data import RankingRow
from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.sections.base import Section
from vswbench.report.sections.base import empty_note
from vswbench.switches import catalog

BASELINE = "bridge"
INTRO = ("Each container network against the mechanism it wires, built by hand, on the same "
         "scenario and frame size (the bridge; {others}): the CNI plugins as a runtime calls them "
         "(<code>cni-*</code>: cni-bridge is Podman's netconf, cni-bridge-promisc containerd's, "
         "cni-bridge-bare the plugin with its four defaults off) and Docker's default network "
         "rebuilt without Docker (<code>docker-bridge</code>: br_netfilter, conntrack, its NAT "
         "and filter chains). NDR is the median over repetitions; on this shared 2-vCPU machine "
         "single searches can differ by factors (the ranking's noise ranges): read a ratio "
         "over repetitions only.")


def baselines() -> dict[str, str]:
    """Each container network -> the hand-built mechanism it wires (its backend's baseline)."""
    return {cls.name: cls.baseline for cls in catalog.BACKENDS if cls.baseline}


def container_switch(name: str) -> bool:
    return (name.startswith("cni-") or name in ("docker-bridge", BASELINE)
            or name in baselines().values())


def baseline_of(name: str) -> str:
    return baselines().get(name, BASELINE)


def container_rows(ranking: Sequence[RankingRow]) -> dict[tuple[str, str, str],
                                                           list[RankingRow]]:
    """Rows of the container networks and the bridge, by (scenario, size, variant); only
    groups with a container network in them."""
    groups: dict[tuple[str, str, str], list[RankingRow]] = defaultdict(list)
    for row in ranking:
        if container_switch(row.setup.switch):
            s = row.setup
            groups[(s.scenario, s.size_label, s.variant)].append(row)
    return {k: sorted(v, key=lambda r: r.setup.switch) for k, v in groups.items()
            if any(r.setup.switch.startswith("cni-") or r.setup.switch == "docker-bridge"
                   for r in v)}


def _num(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if value is None else f"{value / scale:,.{digits}f}"


def group_table(rows: Sequence[RankingRow]) -> str:
    ndr = {r.setup.switch: r.ndr_pps for r in rows}
    head = ("<tr><th>switch</th><th>NDR kpps (median)</th><th>runs</th><th>against</th>"
            "<th>NDR ratio</th><th>p50 µs at 90 %</th><th>p99 µs at 90 %</th></tr>")
    body = []
    for r in rows:
        name = r.setup.switch
        base = baseline_of(name) if name.startswith("cni-") or name == "docker-bridge" else ""
        ref = ndr.get(base) if base else None
        ratio = f"{r.ndr_pps / ref:.2f}" if ref and r.ndr_pps is not None else "-"
        body.append(f"<tr><td>{escape(name)}</td><td>{_num(r.ndr_pps, 1e3)}</td>"
                    f"<td>{r.repetitions}</td><td>{escape(base) or '-'}</td><td>{ratio}</td>"
                    f"<td>{_num(r.latency_p50_us)}</td><td>{_num(r.latency_p99_us)}</td></tr>")
    return f"<table>{head}{''.join(body)}</table>"


def netconfs(model: ReportModel) -> dict[str, str]:
    """switch -> the netconf its first stored point was built with."""
    found: dict[str, str] = {}
    for record in model.data.all_records():
        text = record.measured.cni_netconf
        if text and record.setup.switch not in found:
            found[record.setup.switch] = text
    return found


class Containers(Section):
    id = "containers"
    title = "Container networks: what the plugins' defaults cost"

    def empty(self, model: ReportModel) -> str:
        return "no CNI or docker-bridge search beside a bridge search in this campaign"

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        groups = container_rows(model.ranking)
        if not groups:
            return empty_note(self.empty(model))
        others = ", ".join(f"{name}: {base}" for name, base in baselines().items()
                           if base != BASELINE)
        parts = [f"<p>{INTRO.format(others=others)}</p>"]
        for (scenario, size, variant), rows in sorted(groups.items()):
            title = " ".join(x for x in (scenario, size, variant) if x)
            parts.append(f"<h3>{escape(title)}</h3>{group_table(rows)}")
        for switch, text in sorted(netconfs(model).items()):
            parts.append(f"<details><summary>netconf of {escape(switch)}</summary>"
                         f"<pre>{escape(text)}</pre></details>")
        return "".join(parts)


SECTION = Containers()
