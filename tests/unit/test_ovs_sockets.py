"""OVS system ports' packet-socket drops (switches/ovs/sockets.py), parsed from `ss -0 -m -a -n`
as this kernel printed it during an OVS trial at 1518 B and 100 kpps (a real capture)."""

from __future__ import annotations

from vswbench.switches.ovs.sockets import parse_packet_drops

_PAD = " " * 18
CAPTURE = "\n".join([
    "Netid State  Recv-Q Send-Q Local Address:Port      Peer Address:PortProcess",
    f"p_raw UNCONN 214544 0{_PAD}*:vsb5880o0             *     "
    "skmem:(r214544,rb212992,t0,tb212992,f0,w0,o176,bl0,d2061)",
    f"p_raw UNCONN 0      0{_PAD}*:vsb5880o1             *     "
    "skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d0)",
    "p_raw UNCONN 0      0                [0]:*                     *     "
    "skmem:(r0,rb212992,t0,tb212992,f0,w0,o0,bl0,d0)", ""])


def test_drops_per_interface_from_ss():
    assert parse_packet_drops(CAPTURE) == {"vsb5880o0": 2061, "vsb5880o1": 0}


def test_two_sockets_on_one_interface_add_up_and_other_lines_are_ignored():
    twice = CAPTURE + CAPTURE.splitlines()[1].replace("d2061", "d39") + "\n"
    assert parse_packet_drops(twice)["vsb5880o0"] == 2100
    assert parse_packet_drops("") == {}
    assert parse_packet_drops("u_str ESTAB 0 0 * 123 * 456 skmem:(r0,d5)") == {}
