"""benches/gather_floor.py: it runs, and what it times is the gather it says it times (every
future awaited, none left pending)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

import gather_floor  # noqa: E402


def test_each_kind_of_future_is_settled_and_awaited() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        for make in (gather_floor.asyncio_futures, gather_floor.record_futures):
            futures, settle = make(loop, 50)
            assert not any(f.done() for f in futures)
            loop.call_soon(settle)
            await asyncio.gather(*futures)
            assert all(f.done() and f.exception() is None for f in futures)

    asyncio.run(run())


def test_it_prints_one_row_per_kind_of_future() -> None:
    program = str(ROOT / "benches" / "gather_floor.py")
    done = subprocess.run(
        [sys.executable, program, "--futures", "200", "--rounds", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = [
        line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line
    ]
    assert [r.split("|")[1].strip() for r in rows[1:]] == [
        "asyncio `Future`",
        "ferrokafka `RecordFuture`",
    ]
    for row in rows[1:]:
        after, before = (float(cell) for cell in row.split("|")[2:4])
        assert after > 0 and before > 0
