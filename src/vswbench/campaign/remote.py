"""A campaign through the agent: `vswbench run SPEC --inventory hosts.yml [--dut NAME]`.

The controller (this process, on the tester host or beside it) keeps the one store; every group
of points that share a testbed goes over SSH (asyncssh) to `vswbench agent` on the DUT host of
the inventory's pair, which builds the testbed there and streams each point back the moment it
ends, and the controller stores it at once. The run's fingerprint holds both hosts':
{"hosts": {"tester <name>": ..., "dut <name>": ...}} besides the controller's own keys.

Failures name the host: unreachable at start (nothing is begun), the connection lost mid-run
(SSH keepalives notice a wire that went down within a few seconds), the agent or its sshd killed.
The DUT is then cleaned: the agent tears down its testbed itself when its stdin ends, and the
controller also asks a fresh agent to `clean` the run id there (when the host answers). Points
finished so far stay in the store; the rest are recorded as failed with the host's error and the
run ends with that error.
"""
from __future__ import annotations

import asyncio
import json
import queue
import shlex
import threading
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

from vswbench.campaign.inventory import LabHost
from vswbench.campaign.inventory import Pair
from vswbench.campaign.point import Point
from vswbench.campaign.runner import CampaignRunner
from vswbench.errors import VswbenchError

CONNECT_TIMEOUT = 10.0
KEEPALIVE_S = 1.0
KEEPALIVE_MISSES = 4


class AgentError(VswbenchError):
    """The agent on a host failed or could not be reached (the message names the host)."""


def agent_command(host: LabHost, env: dict[str, str] | None = None) -> str:
    """The command line the SSH server runs (OpenSSH hands it to the user's shell: quoted);
    `env` adds to the host's vswbench_env."""
    env = {**dict(host.env), **(env or {})}
    prefix = ["env", *(f"{k}={v}" for k, v in sorted(env.items()))] if env else []
    return shlex.join([*prefix, host.python, "-m", "vswbench", "agent"])


class AgentClient:
    """One host's agent, reached over SSH with the inventory's user, key and known hosts."""

    def __init__(self, host: LabHost, env: dict[str, str] | None = None) -> None:
        self.host = host
        self.env = dict(env or {})

    def _options(self) -> dict[str, Any]:
        h = self.host
        return {"host": h.address, "port": h.port, "username": h.user,
                "client_keys": [h.key_file] if h.key_file else None,
                "known_hosts": h.known_hosts or (), "config": [], "agent_path": None,
                "connect_timeout": CONNECT_TIMEOUT, "keepalive_interval": KEEPALIVE_S,
                "keepalive_count_max": KEEPALIVE_MISSES}

    def request(self, req: dict[str, Any], on_record: Callable[[dict[str, Any]], None]) -> None:
        """Send one request; hand every JSON line to `on_record` as it arrives; return after
        {"type": "end"}; AgentError naming the host otherwise."""
        try:
            asyncio.run(self._request(req, on_record))
        except AgentError:
            raise
        except (OSError, TimeoutError, EOFError) as exc:
            raise AgentError(f"{self.host.label}: {type(exc).__name__}: {exc or 'timed out'} "
                             "(is the host up, sshd listening, the key and known_hosts "
                             "right?)") from None
        except Exception as exc:  # asyncssh.Error and its kin: connection lost, auth failed
            if type(exc).__module__.startswith("asyncssh"):
                raise AgentError(f"{self.host.label}: SSH: {exc}") from None
            raise

    async def _request(self, req: dict[str, Any],
                       on_record: Callable[[dict[str, Any]], None]) -> None:
        import asyncssh

        async with asyncssh.connect(**self._options()) as conn:
            proc = await conn.create_process(agent_command(self.host, self.env))
            proc.stdin.write(json.dumps(req) + "\n")   # stdin stays open: EOF stops the agent
            ended = False
            async for line in proc.stdout:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue   # not ours (a login banner, a warning)
                if record.get("type") == "error":
                    raise AgentError(f"{self.host.label}: agent: {record.get('message')}")
                on_record(record)
                if record.get("type") == "end":
                    ended = True
                    break
            proc.stdin.write_eof()
            if not ended:
                err = (await proc.stderr.read())[-400:].strip()
                raise AgentError(f"{self.host.label}: the agent stopped before its answer ended"
                                 f" (exit {proc.exit_status}, signal {proc.exit_signal})"
                                 + (f": {err}" if err else "")
                                 + "; was it or its sshd killed, or the wire cut?")

    def hello(self) -> dict[str, Any]:
        found: list[dict[str, Any]] = []
        self.request({"op": "hello"}, lambda r: found.append(r) if r["type"] == "hello" else None)
        return found[0]["fingerprint"] if found else {}

    def clean(self, run_id: str) -> list[str]:
        found: list[str] = []
        self.request({"op": "clean", "run_id": run_id},
                     lambda r: found.extend(r.get("removed") or []))
        return found


class AgentRunner(CampaignRunner):
    """CampaignRunner whose groups run on the pair's DUT through its agent."""
    local_cpus = False

    def __init__(self, *args: Any, pair: Pair, env: dict[str, str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pair = pair
        self.client = AgentClient(pair.dut, env)
        self.lost: AgentError | None = None
        self.remote_print: dict[str, Any] = {}
        self.cleaned: list[str] = []

    def fingerprint_json(self) -> dict[str, Any]:
        own = super().fingerprint_json()
        return {**own, "hosts": {f"tester {self.pair.tester.name}": own,
                                 f"dut {self.pair.dut.name}": self.remote_print}}

    def run(self) -> Any:
        # unreachable at start: AgentError before anything is created (not even the store)
        self.remote_print = self.client.hello()
        summary = super().run()
        if self.lost is not None:
            raise self.lost
        return summary

    def _run_group(self, store: Any, group: list[Point]
                   ) -> Iterator[tuple[Point, tuple[str, Any, str | None, str | None]]]:
        """The group on the DUT: points are yielded (and so stored) as the agent streams them;
        the SSH session runs in a thread so each arrives the moment it ends there."""
        if self.lost is not None:
            raise self.lost
        by_key = {p.key: p for p in group}
        request = {"op": "group", "spec": self.spec.text, "keys": list(by_key),
                   "run_id": str(self.run_id)}
        arrivals: queue.Queue[tuple[str, Any]] = queue.Queue()

        def work() -> None:
            try:
                self.client.request(request, lambda r: arrivals.put(("record", r)))
            except AgentError as exc:
                arrivals.put(("error", exc))
            except Exception as exc:  # noqa: BLE001 - reported in the main thread, host named
                arrivals.put(("error", AgentError(f"{self.client.host.label}: {exc}")))
            else:
                arrivals.put(("end", None))

        threading.Thread(target=work, name="vsb-agent-client", daemon=True).start()
        while True:
            kind, item = arrivals.get()
            if kind == "end":
                return
            if kind == "error":
                self.lost = item
                self._clean_dut()
                raise item
            if item.get("type") == "point" and item.get("key") in by_key:
                yield by_key[item["key"]], (str(item["status"]), item.get("result"),
                                            item.get("error"), item.get("started"))

    def _clean_dut(self) -> None:
        try:
            self.cleaned = self.client.clean(str(self.run_id))
        except AgentError:
            self.cleaned = []   # unreachable: the agent cleans itself when its stdin ends
