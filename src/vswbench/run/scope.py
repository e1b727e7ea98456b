"""One run: its id, its cleanup registry and its state file, set up and torn down together."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vswbench.run.ids import RunId
from vswbench.run.ids import new_run_id
from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import cleanup_scope
from vswbench.run.state import RunState

TEMP_PREFIX = "vsb-"


@dataclass
class Run:
    id: RunId
    registry: CleanupRegistry
    state: RunState | None

    def temp_dir(self) -> Path:
        """A private temporary directory (/tmp/vsb-<run id>-XXXX), removed with the run."""
        path = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{self.id}-"))
        self.registry.register(f"temporary directory {path}", lambda: shutil.rmtree(path, True))
        if self.state is not None:
            self.state.add_temp_dir(str(path))
        return path


@contextmanager
def run_scope(*, record_state: bool = True, run_id: RunId | None = None) -> Iterator[Run]:
    """Everything created inside is removed on exit, exception, SIGINT or SIGTERM.

    With record_state, /run/vswbench/<run id>.json lists the run's PIDs while it runs (it is the
    first thing registered, so the last thing removed).
    """
    run_id = run_id or new_run_id()
    with cleanup_scope() as registry:
        state = None
        if record_state:
            try:
                state = RunState.create(str(run_id))
            except OSError:
                state = None  # not root: run without a state file
            if state is not None:
                registry.register(f"run state {state.path}", state.remove)
        yield Run(run_id, registry, state)
