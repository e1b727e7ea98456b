"""A campaign as `vswbench run` starts it (cli/campaign.py parses and prints): the campaign
loaded from a spec file, a built-in suite or --switches/--sizes, its points expanded and every
testbed checked, the inventory's hosts and the history checked, all before anything is made
(`plan_launch`); then its points measured here or on the inventory's DUT host (`launch`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vswbench.campaign.estimate import CampaignSize
from vswbench.campaign.estimate import campaign_size
from vswbench.campaign.execute import check_points
from vswbench.campaign.inventory import Pair
from vswbench.campaign.inventory import load_inventory
from vswbench.campaign.point import Point
from vswbench.campaign.runner import CampaignRunner
from vswbench.campaign.runner import Progress
from vswbench.campaign.runner import RunSummary
from vswbench.campaign.spec import CampaignSpec
from vswbench.campaign.spec import builtin
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import load_spec
from vswbench.errors import UsageError
from vswbench.results.store import StoredPoint
from vswbench.safefile import check_output_dir
from vswbench.safefile import refuse_unsafe


def load_campaign(spec_path: Path | None, suite: str | None, switches: str | None = None,
                  sizes: str | None = None) -> CampaignSpec:
    """The spec file's campaign, the built-in suite's [quick], or an ad-hoc campaign of the
    switches and sizes (measured as the quick suite measures)."""
    if spec_path is not None and suite is not None:
        raise UsageError("give a spec file or --suite, not both")
    if switches is not None or sizes is not None:     # an ad-hoc campaign: quick's methodology
        from vswbench.campaign.adhoc import adhoc_campaign

        if spec_path is not None or suite is not None:
            raise UsageError("--switches and --sizes make a campaign of their own: give them "
                             "without a spec file or --suite (or put the switches and sizes "
                             "in the spec)")
        return adhoc_campaign(switches, sizes)
    if spec_path is not None:
        return load_spec(spec_path)
    return builtin(suite or "quick")


@dataclass(frozen=True)
class LaunchRequest:
    """What `vswbench run` was asked, as given: the campaign's source (a spec file, a built-in
    suite, or an ad-hoc --switches/--sizes campaign), where it runs, where its run is recorded."""
    spec: Path | None = None        # a campaign spec file (TOML)
    suite: str | None = None        # a built-in suite's name (quick when nothing else is given)
    switches: str | None = None     # --switches: the comma list of an ad-hoc campaign
    sizes: str | None = None        # --sizes: its frame sizes, comma-separated
    inventory: Path | None = None   # --inventory: an Ansible inventory (tester and DUT hosts)
    dut: str | None = None          # --dut: which of its DUT hosts
    history: Path | None = None     # --history: the history database the run is added to


@dataclass(frozen=True)
class Launch:
    campaign: CampaignSpec
    points: list[Point]
    size: CampaignSize
    pair: Pair | None          # the tester and DUT hosts of --inventory; None: measured here
    from_spec: bool            # a spec file's campaign (resumes in its directory)

    def default_out(self) -> Path:
        """The spec's `out`, else results/<name> for a spec file (resumed), else
        results/<name>-<date-time> for a built-in suite or an ad-hoc campaign (afresh)."""
        default = (f"results/{self.campaign.name}" if self.from_spec
                   else f"results/{self.campaign.name}-{time.strftime('%Y%m%d-%H%M%S')}")
        return Path(self.campaign.out or default)


def check_history(path: Path) -> None:
    """A history (or nothing yet) where one can be made, before anything runs."""
    from vswbench.results.history import History

    refuse_unsafe(path, "--history")
    check_output_dir(path.parent, f"--history {path}: its directory", create=False)
    if path.exists():
        History(path, create=False).close()


def plan_launch(req: LaunchRequest) -> Launch:
    """Everything checked, nothing made: the inventory's hosts first (before anything is
    printed), the campaign, every point's testbed, its size, the history."""
    pair = None
    if req.inventory is not None:
        pair = load_inventory(req.inventory).pair(req.dut)
    campaign = load_campaign(req.spec, req.suite, req.switches, req.sizes)
    points = expand(campaign)
    check_points(points, local=req.inventory is None)
    size = campaign_size(points, campaign.budget_s)
    if req.history is not None:
        check_history(req.history)
    return Launch(campaign, points, size, pair, req.spec is not None)


def launch(plan: Launch, out_dir: Path, on_progress: Callable[[Progress, str], None],
           on_point: Callable[[StoredPoint], None], *, append: bool = False) -> RunSummary:
    """The campaign's points measured into `out_dir`: here, or on the DUT host through
    `vswbench agent` (campaign/remote.py)."""
    if plan.pair is not None:
        from vswbench.campaign.remote import AgentRunner

        remote: RunSummary = AgentRunner(plan.campaign, out_dir, on_progress, on_point,
                                         pair=plan.pair, append=append).run()
        return remote
    return CampaignRunner(plan.campaign, out_dir, on_progress, on_point, append=append).run()
