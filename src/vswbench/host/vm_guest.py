"""The network-function guest: a kernel and an initramfs built from Debian packages only, cached.

    kernel     /boot/vmlinuz of linux-image-<version>-cloud-amd64 (fetched with `apt-get download`
               and unpacked with dpkg-deb into the cache: nothing is installed on the host)
    initramfs  busybox-static, the init script below, virtio-net and its modules (from the same
               package), vswbench-engine and the libraries ldd names; `cpio -H newc`, gzip

The cache is `engine/build/vm/` (or $VSWBENCH_VM_CACHE): `vsb-guest-<key>.vmlinuz` and
`vsb-guest-<key>.initrd.gz`, where the key hashes every input (the kernel package's file name,
the busybox and engine binaries, the libraries, the init script). `ensure_guest()` rebuilds only
when the key changed and removes older builds. setup.sh runs `python -m vswbench.host.vm_guest`.

The init script brings up eth0 and eth1 (virtio-net), runs `vswbench-engine fwd` between them with
the arguments in the kernel parameter `vsbfwd` (comma-separated), and prints on the serial console
(ttyS0): the engine's JSON records, then one `{"type":"guest",...}` record with the guest kernel's
own counters of both ports. A line on the console's input stops the engine (SIGTERM: its final
record). `vsbmode=probe` only prints the guest's uptime and powers off (doctor's boot check).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine
from vswbench.errors import VswbenchError
from vswbench.safefile import atomic_writer
from vswbench.safefile import write_bytes
from vswbench.safefile import write_text

KERNEL_META = "linux-image-cloud-amd64"
BUSYBOX = Path("/bin/busybox")
MODULES = ("virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
           "virtio_pci", "failover", "net_failover", "virtio_net")   # insmod order (deps first)
GUEST_PREFIX = "vsb-guest-"
READY_LINE = "VSB-GUEST up"

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
con=/dev/ttyS0
for m in MODULES; do insmod /lib/modules/$m.ko 2>/dev/null; done
echo "VSB-GUEST up $(cut -d' ' -f1 /proc/uptime)" > $con
if [ "$vsbmode" = probe ]; then poweroff -f; fi
i=0
while [ ! -e /sys/class/net/eth1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
for p in eth0 eth1; do ip link set $p promisc on; ip link set $p up; done
stty -F $con -echo raw 2>/dev/null
IFS=,
set -- $vsbfwd
unset IFS
/bin/vswbench-engine fwd --io afpacket --port eth0 --port eth1 "$@" > $con 2>&1 &
e=$!
(read -r line < $con; kill -TERM $e) &
wait $e
rc=$?
s=/sys/class/net
n() { cat $s/$1/statistics/$2; }
c() { echo "\"$1\":{\"rx_packets\":$(n $1 rx_packets),\"tx_packets\":$(n $1 tx_packets),\
\"rx_dropped\":$(n $1 rx_dropped),\"tx_dropped\":$(n $1 tx_dropped)}"; }
u=$(cut -d' ' -f1 /proc/uptime)
echo "{\"type\":\"guest\",\"engine_exit\":$rc,\"uptime_s\":$u,$(c eth0),$(c eth1)}" > $con
poweroff -f
""".replace("MODULES", " ".join(MODULES))


@dataclass(frozen=True)
class Guest:
    kernel: Path
    initrd: Path
    key: str
    kernel_package: str


def cache_dir() -> Path:
    default = Path(__file__).resolve().parents[3] / "engine" / "build" / "vm"
    return Path(os.environ.get("VSWBENCH_VM_CACHE") or default)


def _run(argv: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VswbenchError(f"guest build: {' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        raise VswbenchError(f"guest build: {' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def kernel_package() -> str:
    """The versioned kernel package linux-image-cloud-amd64 depends on (apt-cache)."""
    out = _run(["apt-cache", "depends", KERNEL_META])
    m = re.search(r"Depends: (linux-image-[0-9][^\s]*-cloud-amd64)", out)
    if not m:
        raise VswbenchError(f"guest build: no kernel package behind {KERNEL_META} (apt-get update?)")
    return m.group(1)


def kernel_deb(cache: Path) -> Path:
    """The kernel's .deb in the cache, downloaded once (apt-get download; nothing installed).
    Offline, the newest one already cached is used."""
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    try:
        package = kernel_package()
    except VswbenchError:
        cached = sorted(debs.glob("linux-image-*-cloud-amd64_*.deb"))
        if cached:
            return cached[-1]
        raise
    found = sorted(debs.glob(f"{package}_*.deb"))
    if found:
        return found[-1]
    _run(["apt-get", "download", package], cwd=debs)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        raise VswbenchError(f"guest build: apt-get download {package} left no .deb in {debs}")
    return found[-1]


def libraries(binary: Path) -> list[Path]:
    """The shared libraries `ldd` names for a binary, the dynamic loader included."""
    libs = []
    for line in _run(["ldd", str(binary)]).splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.append(Path(m.group(1)))
    return libs


def _key(deb: Path, engine: Path, libs: list[Path]) -> str:
    h = hashlib.sha256(INIT.encode())
    h.update(deb.name.encode())
    for path in (BUSYBOX, engine, *libs):
        h.update(str(path).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def current(cache: Path | None = None) -> Guest | None:
    """The newest built guest in the cache, or None (no build, nothing downloaded)."""
    cache = cache or cache_dir()
    kernels = sorted(cache.glob(f"{GUEST_PREFIX}*.vmlinuz"), key=lambda p: p.stat().st_mtime)
    for kernel in reversed(kernels):
        key = kernel.name[len(GUEST_PREFIX):-len(".vmlinuz")]
        initrd = cache / f"{GUEST_PREFIX}{key}.initrd.gz"
        package = cache / f"{GUEST_PREFIX}{key}.package"
        if initrd.is_file():
            name = package.read_text().strip() if package.is_file() else ""
            return Guest(kernel, initrd, key, name)
    return None


def _check_build_tools() -> Path:
    """The engine to put into the guest, once busybox and the build's tools are there."""
    if not BUSYBOX.is_file():
        raise VswbenchError(f"guest build: {BUSYBOX} missing: apt-get install busybox-static")
    for tool in ("cpio", "gzip", "dpkg-deb"):
        if not shutil.which(tool):
            raise VswbenchError(f"guest build: {tool} missing: apt-get install {tool}")
    try:
        return find_engine().resolve()
    except EngineNotFound as exc:
        raise VswbenchError(f"guest build: {exc}") from None


def _fill_root(work: Path, deb: Path, engine: Path, libs: list[Path]) -> Path:
    """The guest's root file system in work/root: busybox, the engine and its libraries, the
    kernel modules it loads (from the unpacked package in work/deb) and /init."""
    root = work / "root"
    for d in ("bin", "proc", "sys", "dev", "lib/modules", "tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
    _install(BUSYBOX, root / "bin" / "busybox")
    _install(engine, root / "bin" / "vswbench-engine")
    for lib in libs:
        dest = root / str(lib).lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        _install(lib.resolve(), dest)
    for name in MODULES:
        found = list((work / "deb").glob(f"lib/modules/*/kernel/**/{name}.ko"))
        if not found:
            raise VswbenchError(f"guest build: module {name}.ko not in {deb.name}")
        _install(found[0], root / "lib" / "modules" / f"{name}.ko")
    write_text(root / "init", INIT)
    (root / "init").chmod(0o755)
    return root


def _install(source: Path, dest: Path) -> None:
    """A file of the guest's tree by the one safe writer, keeping its source's permission bits
    (less group's and others' write): the engine, busybox and the loader must stay executable."""
    write_bytes(dest, source.read_bytes())
    dest.chmod(source.stat().st_mode & 0o755)


def _pack_initrd(work: Path, root: Path) -> Path:
    """work/initrd.cpio.gz of the root file system."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    raw = work / "initrd.cpio"
    with atomic_writer(raw, "wb") as out:
        done = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root,
                              input=("\n".join([".", *files]) + "\n").encode(),
                              stdout=out, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise VswbenchError(f"guest build: cpio failed: {done.stderr.decode()[-400:]}")
    _run(["gzip", "-6", "-n", str(raw)])
    return work / "initrd.cpio.gz"


def ensure_guest(log: bool = False) -> tuple[Guest, bool]:
    """The guest for the current inputs, built if missing; (guest, built now)."""
    engine = _check_build_tools()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    deb = kernel_deb(cache)
    libs = libraries(engine)
    key = _key(deb, engine, libs)
    kernel = cache / f"{GUEST_PREFIX}{key}.vmlinuz"
    initrd = cache / f"{GUEST_PREFIX}{key}.initrd.gz"
    package = deb.name.split("_")[0] + " " + deb.name.split("_")[1]
    if kernel.is_file() and initrd.is_file():
        return Guest(kernel, initrd, key, package), False
    if log:
        print(f"building the VM guest {key} ({package}, busybox, {engine.name})", flush=True)
    with tempfile.TemporaryDirectory(prefix=".guest-build-", dir=cache) as tmp:
        work = Path(tmp)
        _run(["dpkg-deb", "-x", str(deb), str(work / "deb")])
        packed = _pack_initrd(work, _fill_root(work, deb, engine, libs))
        vmlinuz = next((work / "deb" / "boot").glob("vmlinuz-*"))
        for old in cache.glob(f"{GUEST_PREFIX}*"):
            old.unlink()
        # into the cache by the one safe writer, as every file of the build above: temp file
        # beside the target, renamed over a regular file only
        write_bytes(kernel, vmlinuz.read_bytes())
        write_bytes(initrd, packed.read_bytes())
        write_text(cache / f"{GUEST_PREFIX}{key}.package", package + "\n")
    return Guest(kernel, initrd, key, package), True


def main() -> int:
    try:
        guest, built = ensure_guest(log=True)
    except VswbenchError as exc:
        print(f"vm guest: {exc}", file=sys.stderr)
        return 1
    size = guest.initrd.stat().st_size // 1024
    print(f"VM guest {'built' if built else 'up to date'}: {guest.kernel.name} "
          f"({guest.kernel_package}), {guest.initrd.name} ({size} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
