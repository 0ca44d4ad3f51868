"""The child process of one run: ``python -m harness.child '<spec as JSON>'`` (with benches/ on
``sys.path``). Prints ``{"result": {...}}`` as its last stdout line; anything that goes wrong
is an exception, a non-zero exit and a traceback on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from .tally import emit


def main(argv: list[str]) -> None:
    spec: dict[str, Any] = json.loads(argv[0])
    role = spec["role"]
    if role == "consume":
        from .consumers import run
    elif role == "produce":
        from .producers import produce as run
    elif role == "rate-produce":
        from .producers import rate_produce as run
    elif role == "group":
        from .groups import run
    else:
        raise ValueError(f"unknown role {role!r}")
    emit(result={**run(spec), "rss_mb": peak_rss_mb()})


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not wait4's ru_maxrss: a child made by vfork+exec
    inherits its parent's peak there."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


if __name__ == "__main__":
    main(sys.argv[1:])
