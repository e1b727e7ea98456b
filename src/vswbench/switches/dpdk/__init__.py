"""The DPDK backends whose ports are DPDK virtual devices: memif (the engines joined directly)
and testpmd (dpdk-testpmd between them); ports.py the vhost-user / memif links and the EAL
arguments they share (also ovs-dpdk's), interactive.py a process driven at its prompt."""

from vswbench.switches.dpdk.memif import Memif
from vswbench.switches.dpdk.testpmd import Testpmd

__all__ = ["Memif", "Testpmd"]
