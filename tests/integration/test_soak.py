"""The chaos soak (``benches/soak.py``), its short version: a minute of faults on the
three-node cluster behind fault proxies (members and a broker SIGKILLed and restarted, proxy
faults), the group classic for the first half and KIP-848 for the second, then the verdict:
nothing acknowledged lost, every duplicate explained, the producer's order kept, no committed
offset ahead of a processed record, every fault recovered from."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

SOAK = Path(__file__).resolve().parents[2] / "benches" / "soak.py"
PROXY_FAULTS = {"latency", "black_hole", "cut", "refuse"}


def _stderr_summary(stderr: str) -> str:
    """The soak's own log lines (each starts with the time) and the start of its last
    traceback: the broker logs quoted in an error would push both out of a plain tail."""
    own = [line for line in stderr.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
    failure = stderr[stderr.rfind("Traceback") :][:3000] if "Traceback" in stderr else ""
    return "\n".join(
        ["--- the soak's log (last 40 lines):", *own[-40:], "--- its last traceback:", failure]
    )


@pytest.mark.timeout(600)
def test_a_minute_of_faults_loses_nothing_and_explains_every_duplicate(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    run = subprocess.run(
        [
            sys.executable,
            str(SOAK),
            "--minutes=1",
            "--gap=1,3",
            "--seed=7",
            "--rate=1500",
            f"--workdir={tmp_path / 'files'}",
            f"--out={out}",
        ],
        capture_output=True,
        text=True,
        timeout=540,
    )
    report = f"exit {run.returncode}\n{run.stdout}\n{_stderr_summary(run.stderr)}"
    assert out.exists(), report
    figures = json.loads(out.read_text())
    verdict = figures["verdict"]
    assert verdict["acknowledged"] > 10_000, report
    assert verdict["lost"] == 0, report
    assert verdict["unexplained"] == 0, report
    assert verdict["producer_errors"] == 0 and verdict["send_failures"] == 0, report
    assert verdict["topic_records"] >= verdict["acknowledged"], report
    assert figures["commit_samples"] > 10 and figures["commit_violations"] == [], report
    assert figures["crashes"] == [], report
    kinds = {fault["kind"] for fault in figures["faults"]}
    assert {"broker_kill", "member_kill"} <= kinds and kinds & PROXY_FAULTS, report
    assert {fault["protocol"] for fault in figures["faults"]} == {"classic", "consumer"}, report
    assert all(fault["recovered_s"] is not None for fault in figures["faults"]), report
    assert figures["passed"] and figures["problems"] == [], report
    assert run.returncode == 0, report
