"""A harness left running by ``ferrokafka broker start`` (detached): its state is a small JSON
record (node ids, pids, config paths, the directory), and these read and stop it from another
process. Only the recorded pids are signalled, and only while their command line still names
their config; only a directory the harness made (it holds :data:`ROOT_MARKER`) is removed."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._process import TrackedProcess, pid_matches, stop_all

__all__ = ["ROOT_MARKER", "detached_status", "stop_detached"]

#: The file that marks a directory as the harness's own.
ROOT_MARKER = ".ferrokafka-harness"


def _recorded(state: Mapping[str, Any]) -> list[tuple[int, TrackedProcess | None]]:
    """Each recorded node's id and its process, ``None`` once that pid no longer runs the
    node's config."""
    nodes = []
    for node in state.get("nodes", []):
        pid, config = node.get("pid"), str(node["config"])
        alive = isinstance(pid, int) and pid_matches(pid, config)
        process = TrackedProcess(pid, config, child=False) if alive else None
        nodes.append((int(node["node_id"]), process))
    return nodes


def detached_status(state: Mapping[str, Any]) -> dict[int, int | None]:
    """``node_id -> pid`` for each node of a detached harness, ``None`` where it is gone."""
    return {node_id: p.pid if p is not None else None for node_id, p in _recorded(state)}


def stop_detached(state: Mapping[str, Any], timeout: float = 30.0) -> list[int]:
    """Stop the nodes recorded by :meth:`detach` (only those pids, and only while their command
    line still names their config), remove the harness's directory; return the pids signalled."""
    processes = [process for _, process in _recorded(state) if process is not None]
    stop_all(processes, timeout, sig=signal.SIGTERM)
    directory = state.get("directory")
    if directory and not state.get("keep_dirs"):
        root = Path(directory)
        # Only ever delete a directory this harness made.
        if (root / ROOT_MARKER).is_file():
            shutil.rmtree(root, ignore_errors=True)
    return [p.pid for p in processes]
