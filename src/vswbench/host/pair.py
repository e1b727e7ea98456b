"""Two namespaces joined by a veth pair: the smallest testbed (demo, engine tests).

    <run id>a [<run id>a0 198.18.0.1/30] ---- veth ---- [<run id>b0 198.18.0.2/30] <run id>b

IPv6 is off and both ends know each other's MAC (permanent neighbour entries), so the only frames
on the wire are the ones the engine sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from contextlib import contextmanager
from dataclasses import dataclass

from vswbench.host.netns import Namespace
from vswbench.host.netns import VethPair
from vswbench.host.netns import add_address
from vswbench.host.netns import mac_address
from vswbench.host.netns import set_neighbour
from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry


@dataclass(frozen=True)
class Endpoint:
    netns: str
    ifname: str
    ip: str
    mac: str


@dataclass(frozen=True)
class NamespacePair:
    a: Endpoint
    b: Endpoint
    prefix_len: int


@contextmanager
def namespace_pair(run_id: RunId, registry: CleanupRegistry, *, tag: str = "",
                   ip_a: str = "198.18.0.1", ip_b: str = "198.18.0.2",
                   prefix_len: int = 30) -> Iterator[NamespacePair]:
    """Create the pair; everything is removed when the block ends (or by the registry)."""
    ns_a, ns_b = run_id.name(f"{tag}a"), run_id.name(f"{tag}b")
    if_a, if_b = run_id.ifname(f"{tag}a0"), run_id.ifname(f"{tag}b0")
    with ExitStack() as stack:
        stack.enter_context(Namespace(ns_a, registry))
        stack.enter_context(Namespace(ns_b, registry))
        veth = stack.enter_context(VethPair(if_a, ns_a, if_b, ns_b, registry))
        add_address(ns_a, if_a, f"{ip_a}/{prefix_len}")
        add_address(ns_b, if_b, f"{ip_b}/{prefix_len}")
        veth.up()
        mac_a, mac_b = mac_address(ns_a, if_a), mac_address(ns_b, if_b)
        set_neighbour(ns_a, if_a, ip_b, mac_b)
        set_neighbour(ns_b, if_b, ip_a, mac_a)
        yield NamespacePair(Endpoint(ns_a, if_a, ip_a, mac_a), Endpoint(ns_b, if_b, ip_b, mac_b),
                            prefix_len)
