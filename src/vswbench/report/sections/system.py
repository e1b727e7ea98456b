"""The "system" section: per campaign its runs, the system fingerprint (with the interfaces'
offloads) and the campaign spec."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from html import escape
from typing import Any

from vswbench.report.backends import BackendInfo
from vswbench.report.figure import Plot
from vswbench.report.model import ReportModel
from vswbench.report.notes import RunInfo
from vswbench.report.sections.base import Section
from vswbench.report.sections.base import empty_note as _empty
from vswbench.report.sections.base import table as _table

OFFLOAD_FEATURES = ("rx-checksumming", "tx-checksumming", "scatter-gather",
                    "tcp-segmentation-offload", "generic-segmentation-offload",
                    "generic-receive-offload")


def _value(key: str, value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict):
        if key == "governors" and value:
            by: dict[str, list[str]] = {}
            for cpu, gov in value.items():
                by.setdefault(str(gov), []).append(str(cpu))
            return "; ".join(f"{g} ({', '.join(c)})" for g, c in by.items())
        parts = []
        for k, v in value.items():
            if isinstance(v, dict):
                inner = ", ".join(f"{a} {b}" for a, b in v.items()) or "–"
                parts.append(f"{k}: {inner}")
            else:
                parts.append(f"{k}={v}")
        return "; ".join(parts) or "–"
    if isinstance(value, float) and key == "tsc_hz":
        return f"{value / 1e9:.3f} GHz"
    return str(value) if value != "" else "(none)"


def _offloads(offloads: Any) -> str:
    if not isinstance(offloads, dict) or not offloads:
        return ""
    rows = []
    for ifname, info in offloads.items():
        info = info if isinstance(info, dict) else {}
        raw = info.get("features")
        feats: dict[str, Any] = raw if isinstance(raw, dict) else {}
        rows.append([escape(str(ifname)), escape(str(info.get("netns") or "(host)")),
                     *(escape(str(feats.get(f, "–"))) for f in OFFLOAD_FEATURES),
                     escape(str(info.get("error") or ""))])
    return ("<h4>Interface offloads</h4>"
            + _table(["interface", "namespace", *OFFLOAD_FEATURES, "error"], rows, set()))


def point_versions(backends: Mapping[str, BackendInfo]) -> str:
    """The versions the points recorded, each with its switches: the fingerprint is taken
    before any switch runs, so its own switch_versions is empty."""
    by: dict[str, list[str]] = {}
    for switch, info in sorted(backends.items()):
        for version in info.versions:
            by.setdefault(version, []).append(switch)
    return "; ".join(f"{v} ({', '.join(s)})" for v, s in by.items())


def system_section(runs: Sequence[RunInfo],
                   backends: Mapping[str, BackendInfo] | None = None) -> str:
    versions = point_versions(backends or {})
    if not runs:
        return _empty("no run recorded in this store")
    parts = []
    for info in runs:
        ids = ", ".join(info.run_ids)
        status = ", ".join(dict.fromkeys(info.statuses))
        parts.append(f"<h3>Campaign {escape(info.campaign)}: run{'s' if len(info.run_ids) > 1 else ''} "
                     f"{escape(ids)}</h3><p>started {escape(info.started)}, finished "
                     f"{escape(info.finished or '–')}, status {escape(status)}, vswbench "
                     f"{escape(info.version)}</p>")
        fp = info.fingerprint
        if fp is not None and fp.recorded:
            rows = [[escape(k), escape(f"{versions} (as the points recorded them)"
                                       if k == "switch_versions" and not v and versions
                                       else _value(k, v))]
                    for k, v in fp.items() if k != "offloads"]
            parts.append(_table(["item", "value"], rows, set()) + _offloads(fp.host.offloads))
        else:
            parts.append(_empty("no system fingerprint recorded for this run"))
        parts.append(f"<h4>Campaign spec</h4><pre>{escape(info.spec_text)}</pre>")
    return "".join(parts)


class System(Section):
    id = "system"
    title = "System fingerprint and campaign spec"

    def body(self, model: ReportModel, plots: Sequence[Plot],
             left_out: Sequence[str] = ()) -> str:
        return system_section(model.runs, model.backends)


SECTION = System()
