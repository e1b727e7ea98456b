"""Backend option keys: every key the sources read is known, and an unknown key is refused
(with the closest known one) on the command line and in a campaign spec."""
import re
from pathlib import Path

import pytest

from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.errors import UsageError
from vswbench.switches.chain.nf import OPTION
from vswbench.switches.chain.nf import POLL_OPTION
from vswbench.switches.options import check_keys
from vswbench.switches.options import known
from vswbench.switches.options import unknown_key

KNOWN = known()   # every key with what it sets (the backends' options_read and the shared keys)

SRC = Path(__file__).resolve().parents[2] / "src" / "vswbench"
READ = re.compile(r"options(?:\.get\(|\.setdefault\(|\[)\"([a-z_]+)\"")


def test_every_key_the_sources_read_is_known():
    read = {m for f in SRC.rglob("*.py") for m in READ.findall(f.read_text())}
    read |= {OPTION, POLL_OPTION}
    assert {"kernel_mode", "ovs_mode", "shape_pps", "bridge_fdb"} <= read   # the scan works
    assert read <= set(KNOWN), read - set(KNOWN)


def test_unknown_key_names_the_closest():
    assert unknown_key("kernel_mode") is None
    assert "did you mean kernel_mode?" in unknown_key("kernal_mode")
    with pytest.raises(UsageError, match="--option colour: no backend reads"):
        check_keys(["nf", "colour"])


def test_cli_refuses_an_unknown_option(capsys):
    code = cli.main(["trial", "--switch", "bridge", "--option", "bridge_fbd=learning"])
    text = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "did you mean bridge_fdb?" in text and "Traceback" not in text


def test_campaign_refuses_an_unknown_option():
    with pytest.raises(UsageError, match="study 1, options: no backend reads option 'ovsmode'"):
        parse_spec('[campaign]\nname = "c"\n[[study]]\nkind = "search"\nswitch = "ovs"\n'
                   'options = {ovsmode = "normal"}\n')
