"""The LPM trie of the BPF switches' function l3 (src/vswbench/bpf/lpm.h), reached through the
bpf() syscall (ctypes, no bpftool): the map is found from the attached program's id (program ->
its map ids -> the map), so nothing is pinned and the map goes with the program when the switch
namespace is removed. Updates are one BPF_MAP_UPDATE_ELEM / DELETE_ELEM per prefix."""

from __future__ import annotations

import ctypes
import ipaddress
import os
import time

from vswbench.errors import VswbenchError

SYS_BPF = 321                      # x86_64
MAP_LOOKUP_ELEM, MAP_UPDATE_ELEM, MAP_DELETE_ELEM = 1, 2, 3
UPDATE_VALUE = 2                   # rule updates write 2 (forward, like 1), the table writes 1
PROG_GET_FD_BY_ID, MAP_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD = 13, 14, 15

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _bpf(cmd: int, attr: ctypes.Array[ctypes.c_char]) -> int:
    ret = _libc.syscall(SYS_BPF, cmd, attr, len(attr))
    if ret < 0:
        err = ctypes.get_errno()
        raise VswbenchError(f"bpf({cmd}) failed: {os.strerror(err)}")
    return int(ret)


def _attr(*fields: tuple[int, int, int]) -> ctypes.Array[ctypes.c_char]:
    """A zeroed 128-byte bpf_attr with (offset, size, value) fields set."""
    buf = ctypes.create_string_buffer(128)
    for offset, size, value in fields:
        ctypes.memmove(ctypes.addressof(buf) + offset, value.to_bytes(size, "little"), size)
    return buf


def lpm_map_fd(prog_id: int) -> int:
    """A file descriptor of the first map of attached program `prog_id` (the LPM trie)."""
    prog_fd = _bpf(PROG_GET_FD_BY_ID, _attr((0, 4, prog_id)))
    try:
        ids = (ctypes.c_uint32 * 4)()
        info = ctypes.create_string_buffer(256)
        ctypes.memmove(ctypes.addressof(info) + 52, (4).to_bytes(4, "little"), 4)  # nr_map_ids
        ctypes.memmove(ctypes.addressof(info) + 56,
                       ctypes.addressof(ids).to_bytes(8, "little"), 8)             # map_ids
        _bpf(OBJ_GET_INFO_BY_FD, _attr((0, 4, prog_fd), (4, 4, len(info)),
                                       (8, 8, ctypes.addressof(info))))
        nr = int.from_bytes(info.raw[52:56], "little")
        if nr < 1:
            raise VswbenchError(f"BPF program {prog_id} has no map (built without -DVSB_LPM?)")
        return _bpf(MAP_GET_FD_BY_ID, _attr((0, 4, ids[0])))
    finally:
        os.close(prog_fd)


class LpmMap:
    """Prefixes -> 1 (forward) or 0 (blackhole) in one program's LPM trie."""

    def __init__(self, prog_id: int) -> None:
        self.fd = lpm_map_fd(prog_id)
        self.key = ctypes.create_string_buffer(8)
        self.value = ctypes.c_uint32(1)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _set_key(self, network: str) -> None:
        net = ipaddress.ip_network(network)
        self.key.raw = net.prefixlen.to_bytes(4, "little") + net.network_address.packed

    def lookup_exact(self, address: str) -> int:
        """1 if the /32 of `address` is in the map (lookups are longest-prefix: checked by the
        value written for the update range, which the table's own prefixes never hold)."""
        self._set_key(f"{address}/32")
        out = ctypes.c_uint32(0)
        attr = _attr((0, 4, self.fd), (8, 8, ctypes.addressof(self.key)),
                     (16, 8, ctypes.addressof(out)))
        try:
            _bpf(MAP_LOOKUP_ELEM, attr)
        except VswbenchError:
            return 0
        return 1 if out.value == UPDATE_VALUE else 0

    def update(self, networks: list[str], value: int = 1) -> float:
        """Install (or overwrite) every prefix; the seconds the syscalls took."""
        self.value.value = value
        attr = _attr((0, 4, self.fd), (8, 8, ctypes.addressof(self.key)),
                     (16, 8, ctypes.addressof(self.value)))
        start = time.perf_counter()
        for network in networks:
            self._set_key(network)
            _bpf(MAP_UPDATE_ELEM, attr)
        return time.perf_counter() - start

    def delete(self, networks: list[str]) -> float:
        attr = _attr((0, 4, self.fd), (8, 8, ctypes.addressof(self.key)))
        start = time.perf_counter()
        for network in networks:
            self._set_key(network)
            _bpf(MAP_DELETE_ELEM, attr)
        return time.perf_counter() - start
