"""`docker-bridge`: Docker's default network rebuilt without Docker: a Linux bridge holding the
gateway address, br_netfilter on (bridged frames pass the IPv4 netfilter hooks), conntrack, and
the NAT and filter rules Docker Engine installs for its default `bridge` network.

The rules reproduce what `iptables-save` shows after a fresh Docker Engine 20.10 to 27.x starts
with its defaults (icc=true, ip-masq=true, iptables=true, userland-proxy=true, no published
ports), written by libnetwork (drivers/bridge/setup_ip_tables.go, iptables.go:
setupIPTablesInternal, ProgramChain, the isolation chains of setupInterNetworkIsolation; and
`iptables -P FORWARD DROP` when dockerd enables ip_forward), for docker0 = this bridge and
172.17.0.0/16 = 198.18.0.0/16:

    nat:    -N DOCKER
            -A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
            -A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER
            -A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
            -A DOCKER -i docker0 -j RETURN
    filter: :FORWARD DROP
            -N DOCKER, DOCKER-ISOLATION-STAGE-1, DOCKER-ISOLATION-STAGE-2, DOCKER-USER
            -A FORWARD -j DOCKER-USER
            -A FORWARD -j DOCKER-ISOLATION-STAGE-1
            -A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
            -A FORWARD -o docker0 -j DOCKER
            -A FORWARD -i docker0 ! -o docker0 -j ACCEPT
            -A FORWARD -i docker0 -o docker0 -j ACCEPT
            -A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2
            -A DOCKER-ISOLATION-STAGE-1 -j RETURN
            -A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP
            -A DOCKER-ISOLATION-STAGE-2 -j RETURN
            -A DOCKER-USER -j RETURN

They are written as native nftables in one table, `ip vsbdocker`, in the switch namespace (the
chains keep Docker's names; the base chains hook where iptables' would, at the same priorities;
`-m addrtype --dst-type LOCAL` is `fib daddr type local`). With br_netfilter a frame bridged
between two containers meets FORWARD with the bridge as both its input and output device, so
Docker's inter-container rule (`-i docker0 -o docker0 -j ACCEPT`) is what lets it through, after
conntrack has seen it (the nat chains make conntrack track every frame). Docker 28 changed the
chains (DOCKER-FORWARD, DOCKER-CT, DOCKER-BRIDGE; raw-table drops of direct routing): not
reproduced here.
"""
from __future__ import annotations

from pathlib import Path

from vswbench.errors import NotAvailableHere
from vswbench.host.netns import add_address
from vswbench.host.netns import run
from vswbench.host.netns import run_in
from vswbench.host.netns import sysctl
from vswbench.switches.base import Availability
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_config
from vswbench.switches.kernel.bridge import BridgeSwitch
from vswbench.switches.kernel.counters import section
from vswbench.switches.rules.batch import nft_file

TABLE = "vsbdocker"
SUBNET = "198.18.0.0/16"        # Docker's 172.17.0.0/16, in the benchmarking range
GATEWAY = "198.18.0.1/16"       # docker0's 172.17.0.1/16


def docker_rules(bridge: str, subnet: str = SUBNET, table: str = TABLE) -> str:
    """Docker's default-bridge rules (module docstring) as one nftables table."""
    b = f'"{bridge}"'
    return f"""table ip {table} {{
  chain DOCKER-USER {{
    return
  }}
  chain DOCKER-ISOLATION-STAGE-2 {{
    oifname {b} drop
    return
  }}
  chain DOCKER-ISOLATION-STAGE-1 {{
    iifname {b} oifname != {b} jump DOCKER-ISOLATION-STAGE-2
    return
  }}
  chain DOCKER {{
  }}
  chain FORWARD {{
    type filter hook forward priority filter; policy drop;
    jump DOCKER-USER
    jump DOCKER-ISOLATION-STAGE-1
    oifname {b} ct state related,established accept
    oifname {b} jump DOCKER
    iifname {b} oifname != {b} accept
    iifname {b} oifname {b} accept
  }}
  chain DOCKER-NAT {{
    iifname {b} return
  }}
  chain PREROUTING {{
    type nat hook prerouting priority dstnat; policy accept;
    fib daddr type local jump DOCKER-NAT
  }}
  chain OUTPUT {{
    type nat hook output priority -100; policy accept;
    ip daddr != 127.0.0.0/8 fib daddr type local jump DOCKER-NAT
  }}
  chain POSTROUTING {{
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr {subnet} oifname != {b} masquerade
  }}
}}
"""


def br_netfilter_problem(netns: str) -> str | None:
    """Why bridged frames cannot be handed to netfilter in `netns` (None: they can): the
    sysctls of br_netfilter appear once it is built in or loaded (modprobe tried here)."""
    def present() -> bool:
        out = run_in(netns, ["sysctl", "-n", "net.bridge.bridge-nf-call-iptables"], check=False)
        return out.strip() in ("0", "1")
    if present():
        return None
    run(["modprobe", "br_netfilter"], check=False)
    if present():
        return None
    return ("br_netfilter is neither built in nor loadable (modprobe br_netfilter failed): "
            "bridged frames never reach netfilter; fix: a kernel with CONFIG_BRIDGE_NETFILTER")


class DockerBridge(BridgeSwitch):
    container_network = True    # left out of switch = ["*"]: specs/containers.toml
    name = "docker-bridge"
    baseline = "bridge"         # the containers section compares it with the bridge
    description = ("Docker's default bridge network without Docker: bridge with the gateway "
                   "address, br_netfilter, conntrack, Docker 20.10-27.x's NAT and filter rules "
                   "(nftables)")
    tools = {**BridgeSwitch.tools, "nft": "nftables", "sysctl": "procps"}
    wire_capable = False

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH", "BRIDGE", "NF_CONNTRACK", "NFT_NAT",
                                                 "NFT_MASQ", "NFT_FIB_IPV4", "NFT_CT"])
        if missing:
            return Availability(False, *missing)
        if kernel_config("BRIDGE_NETFILTER") == "n" and not Path("/proc/sys/net/bridge").exists():
            return Availability(False, "kernel lacks CONFIG_BRIDGE_NETFILTER (br_netfilter)",
                                "use a kernel built with CONFIG_BRIDGE_NETFILTER")
        return Availability(True)

    def setup(self) -> None:
        super().setup()
        ns = self.ctx.netns
        problem = br_netfilter_problem(ns)
        if problem:
            raise NotAvailableHere(f"switch {self.name}: {problem}")
        add_address(ns, self.bridge_name, GATEWAY)
        sysctl(ns, **{"net.ipv4.ip_forward": 1, "net.bridge.bridge-nf-call-iptables": 1,
                      "net.bridge.bridge-nf-call-ip6tables": 1})
        nft_file(ns, docker_rules(self.bridge_name), self.ctx.temp_dir, "docker.nft")
        # (the table lives in the switch namespace and goes with it)

    def config_dump(self) -> str:
        ns = self.ctx.netns
        return "\n".join([
            super().config_dump(),
            section("br_netfilter", ["ip", "netns", "exec", ns, "sysctl", "net.bridge"]),
            section("nftables (Docker's rules)", ["ip", "netns", "exec", ns, "nft", "list",
                                                  "table", "ip", TABLE]),
            section("conntrack entries", ["ip", "netns", "exec", ns, "cat",
                                          "/proc/sys/net/netfilter/nf_conntrack_count"])])
