"""The HTML of the report's first screen, the summary: the machine, the preset, each verdict's
order (naming every switch, linked to its table in the ranking: report/ranking_html.py) and the
tie rule behind a disclosure, so that the verdicts and the first ranking table fit a 1280x800
screen."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from vswbench.host.vm_nf import TCG_LABEL
from vswbench.report.ranking_html import anchor
from vswbench.report.screen import order_text
from vswbench.report.summary import MachineSummary
from vswbench.report.verdict import TIE_RULE
from vswbench.report.verdict import Verdict


def emulated_vm(scenario: str, variant: str) -> bool:
    """A VM scenario (pvp-vm, chain-vm:N) measured under TCG (no vm_accel=kvm in its variant)."""
    return (scenario == "pvp-vm" or scenario.startswith("chain-vm:")) and \
        "vm_accel=kvm" not in variant


def summary_section(machines: Sequence[MachineSummary], presets: Sequence[str],
                    verdicts: Sequence[Verdict], left_out: Sequence[str]) -> str:
    parts = [f'<p class="machine">{escape(m.sentence())}</p>' for m in machines]
    parts += [f'<p class="preset">{escape(s)}</p>' for s in presets]
    ranked = [v for v in verdicts if v.ranked]
    if ranked:     # each verdict's order, naming every switch; its evidence is in the ranking
        items = "".join(f'<li class="verdict"><a href="#{anchor(v)}">{escape(order_text(v))}'
                        "</a></li>" for v in ranked)
        parts.append(f'<ul class="verdicts">{items}</ul>')
        parts.append('<details class="rule"><summary>Ranks and ties: how the order is '
                     f'decided</summary><p class="footnote rule">Ranks and ties: '
                     f"{escape(TIE_RULE)} Mpps: millions of frames per second, frame sizes "
                     "with the FCS.</p></details>")
    elif verdicts:
        parts.append('<p class="footnote">Only reference rows (baselines) were searched: see the '
                     "ranking.</p>")
    else:
        parts.append('<p class="empty">no search in this campaign: no verdict</p>')
    emulated = sorted({v.scenario for v in verdicts if emulated_vm(v.scenario, v.variant)})
    if emulated:
        parts.append(f'<p class="footnote emulated">{escape(", ".join(emulated))}: '
                     f"{escape(TCG_LABEL)} (docs/guide/vm.md).</p>")
    if left_out:
        parts.append('<details class="left-out"><summary>Not in this report: '
                     f"{len(left_out)} sections without data in this campaign</summary>"
                     '<p class="footnote">Not in this report (no data in this campaign): '
                     f'{escape(", ".join(left_out))}.</p></details>')
    return "".join(parts)
