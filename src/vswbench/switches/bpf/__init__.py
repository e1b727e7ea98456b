"""The BPF switch backends (tc-bpf, xdp): redirect.BpfRedirectSwitch compiles and loads a
program that redirects to each path's egress port (the sources are in src/vswbench/bpf),
lpm_map the l3 table and rule updates written into its map."""

from vswbench.switches.bpf.redirect import BpfRedirectSwitch
from vswbench.switches.bpf.tc import TcBpfSwitch
from vswbench.switches.bpf.xdp import XdpSwitch

__all__ = ["BpfRedirectSwitch", "TcBpfSwitch", "XdpSwitch"]
