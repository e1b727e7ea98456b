#!/usr/bin/env bash
# AF_XDP backend test (root). Builds tests/afxdp_harness.c with src/io_afxdp.c, creates two network
# namespaces joined by a veth pair (198.18.0.1/30 <-> 198.18.0.2/30) and checks:
#   1. a TX-only port attaches no XDP program;
#   2. RX correctness: N frames sent at a low rate arrive exactly once, for libxdp's default
#      program and the builtin one, in native and generic XDP mode; the program is gone afterwards;
#   3. SIGINT removes the program; SIGKILL removes the builtin (BPF link) one too;
#   4. TX rate at full speed for 2 s from CPU 1 (reported; the 455 kpps target only warns).
# Everything it creates is named vsbt*-$$ and is removed on exit, error, Ctrl-C or SIGTERM.
# Exit: 0 pass, 1 fail, 77 skipped (not root / no libxdp). Env: N (10000), RATE (20000 pps).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/../src
N=${N:-10000}
RATE=${RATE:-20000}
NSA=vsbt-afxdp-$$-a
NSB=vsbt-afxdp-$$-b
IFA=vsbt$$a
IFB=vsbt$$b
MACA=02:76:73:62:00:01
MACB=02:76:73:62:00:02
TMP=
RXPID=
FAILS=0

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_rx
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	[ -n "$TMP" ] && rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf '%s\n' "$*"; }
pass() { say "PASS: $*"; }
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
kv() { grep -o "$2=[^ ]*" "$1" 2>/dev/null | tail -1 | cut -d= -f2; }
xdp_prog_on() { ip -n "$1" link show "$2" | grep -o 'prog/xdp id [0-9]*'; }

# Stop the background receiver (ours, by pid): SIGINT, then SIGKILL after 3 s.
stop_rx() {
	[ -n "$RXPID" ] || return 0
	if kill -0 "$RXPID" 2>/dev/null; then
		kill -INT "$RXPID" 2>/dev/null
		for _ in $(seq 30); do kill -0 "$RXPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$RXPID" 2>/dev/null
	fi
	wait "$RXPID" 2>/dev/null
	RXPID=
}

# start_rx OUTFILE ARGS...: receiver on namespace b, waits for its "ready" line.
start_rx() {
	local out=$1
	shift
	"$TMP/afxdp_harness" rx --netns "$NSB" --if "$IFB" --cpu 0 "$@" >"$out" 2>&1 &
	RXPID=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$out" && return 0
		kill -0 "$RXPID" 2>/dev/null || break
		sleep 0.05
	done
	say "receiver did not come up:"
	cat "$out"
	stop_rx
	return 1
}

# wait_rx: the receiver ends by itself (count reached or idle); bounded by its --seconds.
wait_rx() {
	wait "$RXPID" 2>/dev/null
	RXPID=
}

tx() { "$TMP/afxdp_harness" tx --netns "$NSA" --if "$IFA" --cpu 1 "$@"; }

[ "$(id -u)" = 0 ] || { say "SKIP: needs root"; exit 77; }
pkg-config --exists libxdp libbpf || { say "SKIP: libxdp/libbpf not found (install libxdp-dev libbpf-dev)"; exit 77; }

TMP=$(mktemp -d /tmp/vsbt-afxdp-$$.XXXXXX)
say "== build harness"
# shellcheck disable=SC2046
cc -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -DVSB_HAVE_AFXDP \
	$(pkg-config --cflags libxdp libbpf) -I"$SRC" -o "$TMP/afxdp_harness" \
	"$HERE/afxdp_harness.c" "$SRC/io_afxdp.c" $(pkg-config --libs libxdp libbpf) || exit 1

say "== namespaces $NSA / $NSB, veth $IFA <-> $IFB"
set -e
ip netns add "$NSA"
ip netns add "$NSB"
ip -n "$NSA" link add "$IFA" address "$MACA" type veth peer name "$IFB" netns "$NSB" address "$MACB"
ip -n "$NSA" addr add 198.18.0.1/30 dev "$IFA"
ip -n "$NSB" addr add 198.18.0.2/30 dev "$IFB"
ip -n "$NSA" link set "$IFA" up
ip -n "$NSB" link set "$IFB" up
set +e

say "== 1. TX-only port: no XDP program"
tx --count 1000 --dst-mac "$MACB" >"$TMP/tx1" 2>&1
cat "$TMP/tx1"
if [ "$(kv "$TMP/tx1" prog)" = none ] && [ "$(kv "$TMP/tx1" xdp_prog_id)" = 0 ] &&
	[ "$(kv "$TMP/tx1" tx_frames)" = 1000 ]; then
	pass "TX-only socket bound without any XDP program, 1000 frames sent"
else
	fail "TX-only port"
fi

say "== 2. RX correctness: $N frames at $RATE pps"
for prog in libxdp builtin; do
	for mode in native generic; do
		out=$TMP/rx-$prog-$mode
		if ! VSB_AFXDP_PROG=$prog start_rx "$out" --expect "$N" --idle 2 --seconds 30 --xdp-mode "$mode"; then
			fail "$prog/$mode: receiver did not start"
			continue
		fi
		tx --count "$N" --rate "$RATE" --dst-mac "$MACB" >"$TMP/tx2" 2>&1
		wait_rx
		say "  $prog/$mode: $(head -1 "$out" | cut -d' ' -f2-4) | $(tail -1 "$out")"
		got=$(kv "$out" unique)
		dup=$(kv "$out" dup)
		used_mode=$(kv "$out" mode)
		used_prog=$(kv "$out" prog)
		left=$(xdp_prog_on "$NSB" "$IFB")
		if [ "$got" = "$N" ] && [ "$dup" = 0 ] && [ "$used_mode" = "$mode" ] &&
			{ [ "$prog" = libxdp ] || [ "$used_prog" = builtin ]; } && [ -z "$left" ]; then
			pass "$prog/$mode: $got/$N frames, no duplicates, program removed on close"
		else
			fail "$prog/$mode: got ${got:-?}/$N dup ${dup:-?} mode ${used_mode:-?} prog ${used_prog:-?} left '${left}'"
			cat "$TMP/tx2"
		fi
	done
done

out=$TMP/rx-auto-zc-busy
if start_rx "$out" --expect "$N" --idle 2 --seconds 30 --zerocopy --busy; then
	tx --count "$N" --rate "$RATE" --dst-mac "$MACB" --zerocopy >"$TMP/tx2" 2>&1
	wait_rx
	say "  auto/zerocopy/busy: $(head -1 "$out" | cut -d' ' -f2-4) | $(tail -1 "$out")"
	if [ "$(kv "$out" unique)" = "$N" ] && [ "$(kv "$out" dup)" = 0 ] &&
		[ "$(kv "$TMP/tx2" tx_frames)" = "$N" ] && [ -n "$(kv "$out" bind)" ]; then
		pass "auto mode, zero copy requested (veth falls back to $(kv "$out" bind)), busy polling: $N/$N"
	else
		fail "auto/zerocopy/busy: $(tail -1 "$out") / $(tail -1 "$TMP/tx2")"
	fi
else
	fail "auto/zerocopy/busy: receiver did not start"
fi

say "== 3. program removal on signals"
for case in "libxdp INT" "builtin INT" "builtin KILL"; do
	set -- $case
	out=$TMP/sig-$1-$2
	VSB_AFXDP_PROG=$1 start_rx "$out" --seconds 30 || { fail "$1/$2: receiver did not start"; continue; }
	before=$(xdp_prog_on "$NSB" "$IFB")
	kill -"$2" "$RXPID"
	wait_rx
	sleep 0.2
	after=$(xdp_prog_on "$NSB" "$IFB")
	if [ -n "$before" ] && [ -z "$after" ]; then
		pass "$1 program ($before) removed after SIG$2"
	else
		fail "$1 program after SIG$2: before '$before' after '$after'"
		ip -n "$NSB" link set "$IFB" xdp off 2>/dev/null
	fi
done

say "== 4. TX rate, 60-byte frames (64 with FCS), full speed for 2 s, CPU 1"
say "  (load average $(cut -d' ' -f1-3 /proc/loadavg): other work on the 2 vCPUs lowers these numbers)"
rate_line() { say "  $1: $(tail -1 "$2")"; }
out=$TMP/rate-sink
if start_rx "$out" --seconds 8 --idle 1; then
	tx --seconds 2 --dst-mac "$MACB" >"$TMP/rate1" 2>&1
	wait_rx
	rate_line "to an AF_XDP sink on the peer ($(kv "$out" mode))" "$TMP/rate1"
	say "    sink: $(tail -1 "$out")"
	say "    (tx_errors here are frames the veth dropped because the sink's NAPI ring was full)"
fi
tx --seconds 2 --dst-mac "$MACB" >"$TMP/rate2" 2>&1
rate_line "to the peer's kernel stack (UDP, no listener)" "$TMP/rate2"
tx --seconds 2 >"$TMP/rate3" 2>&1
rate_line "broadcast, dropped by the peer's UDP layer" "$TMP/rate3"
best=$(for f in "$TMP"/rate[123]; do kv "$f" kpps; done | sort -n | tail -1)
if [ -n "$best" ] && awk -v k="$best" 'BEGIN { exit !(k >= 455) }'; then
	say "  best $best kpps (target >= 455 kpps)"
else
	say "  WARN: best ${best:-?} kpps is below the 455 kpps target (receiver work on veth runs on the sender's core)"
fi
for f in "$TMP"/rate[23]; do
	[ "$(kv "$f" tx_errors)" = 0 ] || fail "tx errors in $(basename "$f"): $(tail -1 "$f")"
done

if [ "$FAILS" -gt 0 ]; then
	say "== $FAILS check(s) failed"
	exit 1
fi
say "== all AF_XDP checks passed"
exit 0
