"""`vswbench agent`: the side of a campaign that runs on another host (a DUT named in the
inventory), driven over SSH by campaign/remote.py.

Protocol: one JSON request on stdin, JSON lines on stdout. stdin stays open for as long as the
controller wants the agent; its end (EOF: the controller, its SSH connection or the agent's sshd
is gone) makes the agent unwind as on SIGHUP, so the run's cleanup registry removes every
namespace, link and daemon it built on this host.

    {"op": "hello"}                              -> {"type": "hello", "fingerprint": {...}}
    {"op": "group", "spec": TOML, "keys": [..], "run_id": "vsb1a2b"}
        -> {"type": "hello", ...}, then {"type": "point", "key", "status", "result", "error",
           "started"} per point the moment it ends, then {"type": "end"}
    {"op": "clean", "run_id": "vsb1a2b"}         -> {"type": "cleaned", "removed": [...]}

A group is points that share a testbed (runner.testbed_key): the agent builds it once, as the
local runner does, with the campaign's run id, so `vswbench clean --prefix <run id>` on the host
finds whatever a killed agent left. Latency points find their search twin's NDR in a private
store of the agent (a temp dir named vsb-<run id>-agent-*, removed at the end).
"""
from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO
from typing import Any

from vswbench.campaign.execute import _tsc_hz
from vswbench.campaign.execute import execute_point
from vswbench.campaign.execute import plan_for
from vswbench.campaign.execute import switch_stats
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.results.store import STORE_NAME
from vswbench.results.store import ResultStore
from vswbench.results.store import now
from vswbench.run.ids import RunId
from vswbench.run.registry import unwinding_signals


def _emitter(out: IO[str]) -> Callable[[dict[str, Any]], None]:
    lock = threading.Lock()

    def emit(record: dict[str, Any]) -> None:
        with lock:
            out.write(json.dumps(record, default=str) + "\n")
            out.flush()
    return emit


def watch_stdin(stream: IO[str]) -> threading.Thread:
    """A daemon thread that reads stdin to its end, then sends this process SIGHUP: the main
    thread unwinds (run/registry.py) and the testbed is torn down."""
    def watch() -> None:
        try:
            while stream.readline():
                pass
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), signal.SIGHUP)
    thread = threading.Thread(target=watch, name="vsb-agent-stdin", daemon=True)
    thread.start()
    return thread


def hello() -> dict[str, Any]:
    from vswbench.host.sysinfo import fingerprint

    return {"type": "hello", "fingerprint": fingerprint(tsc_hz=_tsc_hz()).to_json(),
            "pid": os.getpid()}


def run_group(request: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> None:
    from vswbench.measure.method import method_context

    spec = parse_spec(str(request["spec"]), "<agent>")
    keys = [str(k) for k in request.get("keys") or []]
    run_id = RunId(str(request["run_id"]))
    points = [p for p in expand(spec) if p.key in keys]
    if not points:
        raise UsageError("agent: no point of the spec has the requested keys")
    with (tempfile.TemporaryDirectory(prefix=f"vsb-{run_id}-agent-") as tmp,
          ResultStore(Path(tmp) / STORE_NAME) as store):
        store.begin_run(str(run_id), spec, None)
        plan = plan_for(points[0])
        with method_context(plan, drain=0.05, progress=lambda m: None, run_id=run_id) as ctx:
            for p in points:
                started = now()
                try:
                    measured = execute_point(ctx, p, store, spec.name)
                    stats = switch_stats(ctx)
                    result: dict[str, Any] | None = ({**measured, "switch_stats": stats} if stats
                                                     else measured)
                    status, error = "done", None
                except UsageError:
                    raise
                except VswbenchError as exc:
                    result, status, error = None, "failed", str(exc)
                store.record_point(str(run_id), p, result, status, error, started=started)
                emit({"type": "point", "key": p.key, "status": status, "result": result,
                      "error": error, "started": started})


def clean(run_id: str) -> list[str]:
    from vswbench.testbed.leftovers import execute
    from vswbench.testbed.leftovers import plan_clean

    RunId(run_id)   # a run id, never a broader prefix
    lines: list[str] = []
    execute(plan_clean(force=True, prefix=run_id), report=lines.append)
    return lines


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    """Answer one request; 0 when it was done, 1 when it failed, 2 for a request that is not
    one (the error is a JSON line)."""
    emit = _emitter(stdout)
    line = ""
    try:
        line = stdin.readline()
        request = json.loads(line)
        if not isinstance(request, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        emit({"type": "error", "message": f"agent: bad request line ({exc}): {line[:80]!r}; "
              "the agent is started over SSH by `vswbench run --inventory`"})
        return 2
    watch_stdin(stdin)
    op = request.get("op")
    try:
        with unwinding_signals():
            emit(hello())
            if op == "group":
                run_group(request, emit)
            elif op == "clean":
                emit({"type": "cleaned", "removed": clean(str(request.get("run_id")))})
            elif op != "hello":
                raise UsageError(f"agent: unknown op {op!r} (hello, group, clean)")
            emit({"type": "end"})
    except (VswbenchError, ValueError, KeyError) as exc:
        emit({"type": "error", "message": str(exc)})
        return 1
    return 0
