"""A harness left running by ``ferrokafka broker start`` (detached): its state is a small JSON
record (node ids, pids, config paths, the directory), and these read and stop it from another
process. Only the recorded pids are signalled, and only while their command line still names
their config; only a directory the harness made (it holds :data:`ROOT_MARKER`) is removed."""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._process import TrackedProcess, pid_matches

__all__ = ["ROOT_MARKER", "detached_status", "stop_detached"]

#: The file that marks a directory as the harness's own.
ROOT_MARKER = ".ferrokafka-harness"


def detached_status(state: Mapping[str, Any]) -> dict[int, int | None]:
    """``node_id -> pid`` for each node of a detached harness, ``None`` where it is gone."""
    status: dict[int, int | None] = {}
    for node in state.get("nodes", []):
        pid = node.get("pid")
        alive = isinstance(pid, int) and pid_matches(pid, str(node["config"]))
        status[int(node["node_id"])] = pid if alive else None
    return status


def stop_detached(state: Mapping[str, Any], timeout: float = 30.0) -> list[int]:
    """Stop the nodes recorded by :meth:`detach` (only those pids, and only while their command
    line still names their config), remove the harness's directory; return the pids signalled."""
    processes = []
    for node in state.get("nodes", []):
        pid = node.get("pid")
        if isinstance(pid, int) and pid_matches(pid, str(node["config"])):
            processes.append(TrackedProcess(pid, str(node["config"]), child=False))
    for process in processes:
        process.send(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for process in processes:
        if not process.wait(max(0.0, deadline - time.monotonic())):
            process.kill()
    directory = state.get("directory")
    if directory and not state.get("keep_dirs"):
        root = Path(directory)
        # Only ever delete a directory this harness made.
        if (root / ROOT_MARKER).is_file():
            shutil.rmtree(root, ignore_errors=True)
    return [p.pid for p in processes]
