"""A known host stall for the stall-injection test (test_stall_injection.py): pinned to one CPU at
SCHED_FIFO 99, busy for `busy_ms` every `period_ms`, as a hypervisor stopping a vCPU would look to
the tasks of that CPU. Prints each burst as a JSON line {"start_ns", "end_ns"} (CLOCK_MONOTONIC)
and ends at SIGTERM (its parent stops it by PID). Run: python stall_hog.py CPU BUSY_MS PERIOD_MS.
RT throttling (sched_rt_runtime_us, 95 % by default) never bites: 2 ms in 250 is 0.8 %."""

import json
import os
import signal
import sys
import time

stop = False


def on_term(signum, frame):
    global stop
    stop = True


def main() -> None:
    cpu, busy_ms, period_ms = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    signal.signal(signal.SIGTERM, on_term)
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
    print(json.dumps({"ready": True}), flush=True)
    busy_ns, period_ns = int(busy_ms * 1e6), int(period_ms * 1e6)
    nxt = time.monotonic_ns() + period_ns
    while not stop:
        time.sleep(max(0.0, (nxt - time.monotonic_ns()) / 1e9))
        start = time.monotonic_ns()
        while time.monotonic_ns() - start < busy_ns:
            pass
        print(json.dumps({"start_ns": start, "end_ns": time.monotonic_ns()}), flush=True)
        nxt += period_ns


if __name__ == "__main__":
    main()
