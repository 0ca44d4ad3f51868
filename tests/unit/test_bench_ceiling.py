"""The ceiling benches' shared parts: a child's JSON result with the broker's CPU during it, and
the table's shares, taken of the first (raw) client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

from harness import ceiling  # noqa: E402


def test_a_child_result_carries_the_cpu_the_watched_process_spent_meanwhile() -> None:
    code = 'import json; print("progress"); print(json.dumps({"wall": 1.0, "cpu": 0.5}))'
    r = ceiling.run_child([sys.executable, "-c", code], os.getpid())
    assert r["wall"] == 1.0 and r["cpu"] == 0.5
    assert r["broker_cpu"] >= 0.0
    assert "broker_cpu" not in ceiling.run_child([sys.executable, "-c", code], None)


def test_the_table_gives_each_client_its_share_of_the_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = {
        "raw": [{"wall": 1.0, "cpu": 0.1, "broker_cpu": 1.5}, {"wall": 3.0, "cpu": 0.1}],
        "client": [{"wall": 4.0, "cpu": 2.0}],
    }
    ceiling.print_table("writer", runs, 1_000_000)
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("| writer |")
    # raw: median rate of 1M/1s and 1M/3s is 0.67M; client 0.25M is 38% of that.
    assert rows[2] == "| raw | 0.67 M | 2.00 | 0.10 | 1.50 | 1.50 | 100% |"
    assert rows[3] == "| client | 0.25 M | 4.00 | 2.00 | - | - | 38% |"
