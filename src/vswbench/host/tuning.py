"""What socket measurements change on a built testbed's links: the MTU, the segmentation and
receive offloads (TSO, GSO, GRO via ethtool), and a service path (a virtual IP that nftables DNAT
translates to the server, as a Kubernetes Service does). argv lists only, never a shell.

Everything here acts inside the run's own namespaces (`vsb<run id>...`); the nftables tables are
named `vsb<run id>svc` and removed through the run's cleanup registry (they would also go with
their namespace).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from vswbench.errors import VswbenchError
from vswbench.host.netns import BENCHMARK_NET
from vswbench.host.netns import ip
from vswbench.host.netns import ip_json
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run_in
from vswbench.host.netns import set_offload
from vswbench.run.registry import CleanupRegistry

MTUS = (1500, 9000)
OFFLOADS = ("default", "on", "off")
OFFLOAD_FEATURES = ("tso", "gso", "gro")
# The service's virtual IP: the top of 198.18.0.0/15, far from every port address the testbed
# plans (198.18.<n>.<m>).
SERVICE_VIP = "198.19.255.10"


class TuningUnsupported(VswbenchError):
    """A link refused a setting (exit 3: this testbed cannot run it)."""
    exit_code = 3


def run_namespaces(prefix: str) -> list[str]:
    """The namespaces whose names start with the run id."""
    out = run_in(None, ["ip", "netns", "list"])
    return sorted(line.split()[0] for line in out.splitlines()
                  if line.strip() and line.split()[0].startswith(prefix))


def _links(netns: str) -> list[dict[str, object]]:
    return [link for link in ip_json("link", "show", netns=netns)
            if link.get("ifname") != "lo" and "LOOPBACK" not in (link.get("flags") or [])]


def _kind(netns: str, ifname: str) -> str:
    info = ip_json("-d", "link", "show", "dev", ifname, netns=netns)
    linkinfo = info[0].get("linkinfo") if info else None
    return str(linkinfo.get("info_kind", "")) if isinstance(linkinfo, dict) else ""


def set_mtu(namespaces: Iterable[str], mtu: int) -> dict[str, int]:
    """Every link of the namespaces to `mtu`: lower devices (veth, vxlan's wire) first, then the
    devices above them (bridges, macvlan), so none is refused for its lower device's MTU.
    {netns/ifname: mtu}; TuningUnsupported naming the link that refused."""
    links = [(ns, str(link["ifname"])) for ns in namespaces for link in _links(ns)]
    upper = {(ns, name) for ns, name in links if _kind(ns, name) in ("bridge", "macvlan",
                                                                       "vxlan", "openvswitch")}
    done: dict[str, int] = {}
    for ns, name in [*[x for x in links if x not in upper], *[x for x in links if x in upper]]:
        try:
            ip("link", "set", "dev", name.split("@")[0], "mtu", str(mtu), netns=ns)
        except VswbenchError as exc:
            raise TuningUnsupported(f"MTU {mtu} on {name} ({ns}) refused: {exc}; this switch's "
                                    "ports do not take that MTU") from None
        done[f"{ns}/{name}"] = mtu
    return done


def set_offloads(namespaces: Iterable[str], on: bool) -> dict[str, str]:
    """TSO, GSO and GRO on or off on every link of the namespaces (ethtool -K)."""
    state = "on" if on else "off"
    done: dict[str, str] = {}
    for ns in namespaces:
        for link in _links(ns):
            name = str(link["ifname"]).split("@")[0]
            try:
                set_offload(ns, name, **dict.fromkeys(OFFLOAD_FEATURES, on))
            except VswbenchError as exc:
                raise TuningUnsupported(f"offloads {state} on {name} ({ns}) refused: {exc}") \
                    from None
            done[f"{ns}/{name}"] = state
    return done


def nft(netns: str, *args: str) -> None:
    run_in(netns, ["nft", *args])


def add_service(netns: str, table: str, *, vip: str, backend: str, ports: Iterable[int],
                hook: str, registry: CleanupRegistry, route_dev: str | None = None) -> None:
    """A service path: `vip` translated to `backend` (same ports, TCP and UDP) by an nftables
    DNAT rule in `netns`'s `hook` (prerouting: a router in the path; output: the client's own
    namespace, as kube-proxy does on the node). With `route_dev`, the client namespace also gets
    a route to the VIP through that link (l2 switches: the VIP is on no link's network)."""
    for address in (vip, backend):
        if ipaddress.ip_address(address) not in BENCHMARK_NET:
            raise VswbenchError(f"service address {address} is outside {BENCHMARK_NET}")
    nft(netns, "add", "table", "ip", table)

    def remove() -> None:
        if namespace_exists(netns):
            run_in(netns, ["nft", "delete", "table", "ip", table], check=False)

    registry.register(f"nftables table {table} in {netns}", remove)
    nft(netns, "add", "chain", "ip", table, "svc", "{", "type", "nat", "hook", hook, "priority",
        "-100", ";", "}")
    port_list = ",".join(str(p) for p in sorted(set(ports)))
    for proto in ("tcp", "udp"):
        nft(netns, "add", "rule", "ip", table, "svc", "ip", "daddr", vip, proto, "dport",
            "{", port_list, "}", "dnat", "to", backend)
    if route_dev is not None:
        ip("route", "replace", f"{vip}/32", "dev", route_dev, netns=netns)
