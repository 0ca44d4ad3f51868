"""The child process of one run: ``python -m harness.child '<spec as JSON>'`` (with benches/ on
``sys.path``). Prints ``{"result": {...}}`` as its last stdout line; anything that goes wrong
is an exception, a non-zero exit and a traceback on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from .tally import emit, peak_rss_mb


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
    elif role == "spark":
        from .spark_reads import run
    elif role == "share":
        from .shares import run
    elif role == "spark-stream":
        from .spark_streams import run
    elif role == "transactions":
        from .transactions import run
    elif role == "typed":
        from .typed_reads import run
    elif role == "typed-spark":
        from .typed_reads import run_spark as run
    else:
        raise ValueError(f"unknown role {role!r}")
    # A run may report its own peak (a consumer: when the client has closed, before the
    # harness sorts its latencies); otherwise the peak is read here, at the end.
    result = run(spec)
    emit(result={"rss_mb": peak_rss_mb(), **result})


if __name__ == "__main__":
    main(sys.argv[1:])
