#!/usr/bin/env bash
# Set up vswbench on Debian 12: system packages, the Python venv (.venv), the engine build.
# Idempotent and fast when nothing is to do; safe to run any number of times.
# After it: `source .venv/bin/activate` puts `vswbench`, `vswbench-engine` and `vswbench-sockapp` on
# the PATH.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")"

PACKAGES=(
	build-essential clang llvm libbpf-dev libxdp-dev xdp-tools libelf-dev zlib1g-dev pkg-config
	iproute2 ethtool netsniff-ng iperf3 sockperf libclang-rt-14-dev python3-venv procps nftables
	openvswitch-switch openvswitch-switch-dpdk dpdk-dev chromium openssh-server openssh-client
	linux-perf containernetworking-plugins iptables
	qemu-system-x86 busybox-static cpio
)
VENV=.venv
PYTHON=${PYTHON:-python3}
ENGINE=engine/build/vswbench-engine
SOCKAPP=engine/build/vswbench-sockapp      # the socket client/server (vswbench stream|rr|crr)

step() { printf '==> %s\n' "$*"; }
die() {
	printf 'setup.sh: error: %s\n' "$*" >&2
	exit 1
}

# 1. Debian packages (apt-get update only when something is missing).
missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
	step "installing Debian packages: ${missing[*]}"
	SUDO=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || die "missing packages (${missing[*]}) and not root; run as root"
		SUDO=(sudo)
	fi
	"${SUDO[@]}" apt-get update -q || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
		"${missing[@]}" || die "apt-get install ${missing[*]} failed"
	# openssh-server is here for sshd's binary only (the agent tests start their own sshd in a
	# vsb namespace). Debian's postinst starts a system sshd on port 22: stop and disable the one
	# this install started, so setting up vswbench opens no port on the host.
	if [[ " ${missing[*]} " == *" openssh-server "* ]] && command -v systemctl >/dev/null; then
		"${SUDO[@]}" systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
	fi
else
	step "Debian packages: all present"
fi

# 2. The venv. Recreate it if it is missing or its interpreter no longer runs.
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
	die "$PYTHON is missing or older than 3.11 (set PYTHON=/path/to/python3.11)"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
	step "creating $VENV"
	rm -rf "$VENV"
	"$PYTHON" -m venv "$VENV" || die "python3 -m venv $VENV failed (is python3-venv installed?)"
fi

# 3. The package (editable) with test extras; redone only when pyproject.toml changed.
stamp="$VENV/.vswbench-install-stamp"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]] || ! "$VENV/bin/python" -c 'import vswbench' 2>/dev/null; then
	step "installing vswbench into $VENV (pip install -e '.[test]')"
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]' ||
		die "pip install -e '.[test]' failed"
	echo "$want" >"$stamp"
else
	step "vswbench already installed in $VENV"
fi

# 3b. The package byte-compiled, as pip does for a regular install. An editable install leaves it
# to the first import, which writes nothing where PYTHONDONTWRITEBYTECODE is set: every vswbench
# process then compiles the package again (0.8-1 s a start, measured 2026-12-03). Up to date: 0.05 s.
"$VENV/bin/python" -m compileall -q src/vswbench >/dev/null || die "python -m compileall src/vswbench failed"

# 4. The engine.
step "building the engine (make -C engine)"
make -s -C engine || die "engine build failed (make -C engine)"
[[ -x $ENGINE ]] || die "make -C engine did not produce $ENGINE"
[[ -x $SOCKAPP ]] || die "make -C engine did not produce $SOCKAPP"

# 5. vswbench-engine beside vswbench in the venv.
ln -sfn "$PWD/$ENGINE" "$VENV/bin/vswbench-engine" || die "cannot link $VENV/bin/vswbench-engine"
ln -sfn "$PWD/$SOCKAPP" "$VENV/bin/vswbench-sockapp" || die "cannot link $VENV/bin/vswbench-sockapp"
"$VENV/bin/vswbench" --version >/dev/null || die "$VENV/bin/vswbench does not run"
"$VENV/bin/vswbench-engine" --help >/dev/null 2>&1 || [[ $? -le 2 ]] ||
	die "$VENV/bin/vswbench-engine does not run"
# 6. The VM guest of scenarios pvp-vm and chain-vm:N (docs/guide/vm.md): the kernel of
# linux-image-cloud-amd64 (apt-get download, unpacked into the cache, never installed), busybox and
# the engine in an initramfs. Rebuilt only when one of its inputs changed (engine/build/vm/).
step "VM guest (engine/build/vm)"
"$VENV/bin/python" -m vswbench.host.vm_guest || die "building the VM guest failed"

step "ready: source $VENV/bin/activate  (vswbench, vswbench-engine on the PATH)"
