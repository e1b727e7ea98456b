"""A stand-in for vswbench-engine, for unit tests. Behaviour is chosen by the first argument."""
import json
import signal
import sys
import time


def emit(obj):
    print(json.dumps(obj), flush=True)


def final(tx=0, rx=0):
    return {"type": "final", "tx_frames": tx, "rx_frames": rx, "lost": 0, "duplicated": 0,
            "reordered": 0, "achieved_pps": 1000.0, "latency_us": None,
            "cycles_per_packet": 10.0}


mode = sys.argv[1] if len(sys.argv) > 1 else ""
stop = False


def on_term(signum, frame):
    global stop
    stop = True


if mode == "gen":
    emit({"type": "start", "mode": "gen"})
    emit(final(tx=100))
elif mode == "slow-start":  # sets up for 0.3 s, then its traffic runs 0.2 s
    time.sleep(0.3)
    emit({"type": "start", "mode": "gen"})
    time.sleep(0.2)
    emit(final(tx=100))
elif mode == "sink":  # runs until SIGTERM, then prints its final record
    signal.signal(signal.SIGTERM, on_term)
    emit({"type": "start", "mode": "sink"})
    while not stop:
        time.sleep(0.01)
    emit(final(rx=42))
elif mode == "stubborn":  # ignores SIGTERM
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    emit({"type": "start", "mode": "stubborn"})
    while True:
        time.sleep(0.05)
elif mode == "unsupported":
    print("vswbench-engine: afxdp: not supported here: no AF_XDP", file=sys.stderr)
    sys.exit(3)
elif mode == "usage":
    print("vswbench-engine: unknown option --bogus", file=sys.stderr)
    sys.exit(2)
elif mode == "garbage":
    print("hello, not json", flush=True)
    emit(final())
elif mode == "silent-exit":
    sys.exit(0)
elif mode == "noisy":  # lots of interval records: readers must not deadlock on full pipes
    for i in range(20000):
        emit({"type": "interval", "t": i})
        print("x" * 100, file=sys.stderr)
    emit(final(tx=1))
else:
    print(f"fake engine: unknown mode {mode!r}", file=sys.stderr)
    sys.exit(2)
