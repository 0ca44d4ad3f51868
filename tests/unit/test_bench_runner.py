"""The harness's child runner when someone else reaped the child first: what it printed still
counts, its CPU time is reported as unknown (never 0), and a child with no result fails."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

from harness import runner  # noqa: E402


def _reaped_elsewhere(code: str) -> runner.Outcome:
    child = runner.Child([sys.executable, "-c", code], stall_s=None, timeout_s=60, name="x")
    deadline = time.monotonic() + 30
    while os.waitpid(child.proc.pid, os.WNOHANG) == (0, 0):  # reap it here, as a stranger would
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return child.finish()


def test_a_result_printed_before_the_child_was_reaped_elsewhere_counts() -> None:
    out = _reaped_elsewhere('import json; print(json.dumps({"result": {"count": 3}}))')
    assert out.ok and out.result == {"count": 3} and out.proc_cpu is None


def test_a_child_reaped_elsewhere_without_a_result_fails_its_run() -> None:
    out = _reaped_elsewhere("pass")
    assert not out.ok and out.error is not None and out.proc_cpu is None
