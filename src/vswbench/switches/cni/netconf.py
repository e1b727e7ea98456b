"""CNI network configurations, built as a runtime's configuration file holds them (pure: no
kernel, no process, no file).

A network is a conflist (CNI spec 1.0.0, "Network configuration lists"): a name, a cniVersion and
plugins in order, the first the "main" plugin (bridge, macvlan, ptp, host-device, vlan) with its
IPAM (host-local), the rest chained ones (bandwidth, firewall, tuning). `plugin_stdin` turns one
element into what a runtime writes on that plugin's stdin, with libcni's rules: the list's name
and cniVersion copied in, the previous plugin's result as prevResult, and runtimeConfig only for
the capabilities the plugin declares (here "ips": the address vswbench's plan gives the port, as
Podman's static addresses reach host-local).

Addresses come only from 198.18.0.0/15 (RFC 2544): `check_subnet` refuses any other.
host-local's state (one file per address, a lock, the last reserved address) goes to `dataDir`, a
directory inside the run's own `vsb-<run id>-*` temp directory, never /var/lib/cni.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from vswbench.errors import UsageError

CNI_VERSION = "1.0.0"
BENCHMARK_NET = ipaddress.ip_network("198.18.0.0/15")
L2_SUBNET = "198.18.0.0/16"          # testbed/plan.py: l2 host ports are 198.18.<h>.<p>/16
L2_GATEWAY = "198.18.0.1"            # no host port takes 198.18.0.x
# what chained plugins are set to: shaping far above what these paths carry (10 Gbit/s, so
# the cost measured is tbf's and ifb's work, not a limit), a firewall that admits the network,
# one sysctl in the container (tuning's documented example)
BANDWIDTH_BPS = 10_000_000_000
BANDWIDTH_BURST = 10_000_000          # bits
TUNING_SYSCTL = {"net.core.somaxconn": "512"}
CHAINABLE = ("bandwidth", "firewall", "tuning")


def check_subnet(subnet: str) -> None:
    """UsageError unless `subnet` lies inside 198.18.0.0/15 (the network rule)."""
    try:
        net = ipaddress.ip_network(subnet, strict=True)
    except ValueError as exc:
        raise UsageError(f"CNI subnet {subnet!r}: {exc}") from None
    if not net.subnet_of(BENCHMARK_NET):   # type: ignore[arg-type]
        raise UsageError(f"CNI subnet {subnet} is outside {BENCHMARK_NET}, the only range "
                         "vswbench uses")


def host_local(data_dir: str, subnet: str = L2_SUBNET, gateway: str | None = L2_GATEWAY,
               ) -> dict[str, Any]:
    """host-local IPAM over one range, its state under `data_dir`."""
    check_subnet(subnet)
    if not data_dir:
        raise UsageError("host-local needs a dataDir (the run's own directory)")
    rng: dict[str, Any] = {"subnet": subnet}
    if gateway:
        if ipaddress.ip_address(gateway) not in ipaddress.ip_network(subnet):
            raise UsageError(f"gateway {gateway} is outside subnet {subnet}")
        rng["gateway"] = gateway
    return {"type": "host-local", "dataDir": data_dir, "ranges": [[rng]]}


def bridge(name: str, ipam: Mapping[str, Any], *, gateway: bool, ipmasq: bool,
           hairpin: bool, promisc: bool = False) -> dict[str, Any]:
    """The bridge plugin: a bridge `name` in the plugin's namespace, one veth per container.
    hairpin and promisc exclude each other (the plugin refuses both)."""
    if hairpin and promisc:
        raise UsageError("bridge plugin: hairpinMode and promiscMode cannot both be on")
    return {"type": "bridge", "bridge": name, "isGateway": gateway, "ipMasq": ipmasq,
            "hairpinMode": hairpin, "promiscMode": promisc, "capabilities": {"ips": True},
            "ipam": dict(ipam)}


def macvlan(master: str, ipam: Mapping[str, Any], mode: str = "bridge") -> dict[str, Any]:
    return {"type": "macvlan", "master": master, "mode": mode, "capabilities": {"ips": True},
            "ipam": dict(ipam)}


def ptp(ipam: Mapping[str, Any], ipmasq: bool = False) -> dict[str, Any]:
    return {"type": "ptp", "ipMasq": ipmasq, "capabilities": {"ips": True}, "ipam": dict(ipam)}


def host_device(device: str, ipam: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "host-device", "device": device, "capabilities": {"ips": True},
            "ipam": dict(ipam)}


def vlan(master: str, vlan_id: int, ipam: Mapping[str, Any]) -> dict[str, Any]:
    if not 1 <= vlan_id <= 4094:
        raise UsageError(f"vlan plugin: vlanId {vlan_id} is outside 1-4094")
    return {"type": "vlan", "master": master, "vlanId": vlan_id, "capabilities": {"ips": True},
            "ipam": dict(ipam)}


def chained(kind: str, data_dir: str = "") -> dict[str, Any]:
    """One chained plugin as this package sets it (CHAINABLE)."""
    if kind == "bandwidth":
        return {"type": "bandwidth", "ingressRate": BANDWIDTH_BPS,
                "ingressBurst": BANDWIDTH_BURST, "egressRate": BANDWIDTH_BPS,
                "egressBurst": BANDWIDTH_BURST}
    if kind == "firewall":
        return {"type": "firewall", "backend": "iptables"}
    if kind == "tuning":
        if not data_dir:
            raise UsageError("tuning needs a dataDir (the run's own directory)")
        return {"type": "tuning", "sysctl": dict(TUNING_SYSCTL), "dataDir": data_dir}
    raise UsageError(f"CNI chain: no plugin {kind!r} here; chainable: {', '.join(CHAINABLE)}")


def conflist(name: str, plugins: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A network configuration list: name, cniVersion, the plugins in order."""
    if not plugins:
        raise UsageError(f"CNI network {name}: no plugins")
    return {"cniVersion": CNI_VERSION, "name": name, "plugins": [dict(p) for p in plugins]}


def plugin_stdin(netconf: Mapping[str, Any], index: int, *, ips: Sequence[str] = (),
                 prev_result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a runtime writes on the stdin of plugin `index` of a conflist (libcni's
    buildOneConfig and injectRuntimeConfig): the plugin's own keys, the list's name and
    cniVersion, prevResult when one is given, runtimeConfig for declared capabilities."""
    plugin = dict(netconf["plugins"][index])
    plugin["name"] = netconf["name"]
    plugin["cniVersion"] = netconf["cniVersion"]
    if prev_result is not None:
        plugin["prevResult"] = dict(prev_result)
    caps = plugin.get("capabilities") or {}
    runtime: dict[str, Any] = {}
    if caps.get("ips") and ips:
        for cidr in ips:
            if ipaddress.ip_interface(cidr).ip not in BENCHMARK_NET:
                raise UsageError(f"address {cidr} is outside {BENCHMARK_NET}")
        runtime["ips"] = list(ips)
    if runtime:
        plugin["runtimeConfig"] = runtime
    return plugin


def plugin_types(netconf: Mapping[str, Any]) -> list[str]:
    return [str(p["type"]) for p in netconf["plugins"]]
