"""The harness's command line: W5's run lengths can be set (a short run's p99.9 is one stall)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

from harness.cli import parse  # noqa: E402
from harness.workloads import FULL  # noqa: E402


def test_w5_seconds_sets_the_rates_and_lengths() -> None:
    assert parse(["--w5-seconds", "50000=30,1000=60"]).w5_seconds == {50000: 30.0, 1000: 60.0}
    assert parse([]).w5_seconds is None  # the full sizes: FULL.w5_seconds
    assert FULL.w5_seconds


@pytest.mark.parametrize("bad", ["x", "50000", "50000=0", "0=5", "50000=a"])
def test_a_bad_w5_seconds_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse(["--w5-seconds", bad])
    assert exit_info.value.code == 2
    assert "--w5-seconds" in capsys.readouterr().err


def test_w6_records_sets_the_produce_runs_size() -> None:
    assert parse(["--w6-records", "200000"]).w6_records == 200_000
    assert parse([]).w6_records is None  # FULL.w6_records


@pytest.mark.parametrize("bad", ["0", "-5", "many"])
def test_a_bad_w6_records_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["--w6-records", bad])
    assert "--w6-records" in capsys.readouterr().err
