"""The soak refuses an ``--out`` it could not write before it runs, not after 30 minutes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "benches" / "soak.py"


@pytest.mark.parametrize("out", ["{tmp}", "{tmp}/missing/soak.json"])
def test_an_out_that_cannot_be_written_is_refused_at_once(tmp_path: Path, out: str) -> None:
    path = out.format(tmp=tmp_path)
    run = subprocess.run(
        [sys.executable, str(SOAK), "--minutes", "1", "--out", path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert f"--out {path}: wants a file path in an existing directory" in run.stderr
