"""What the ceiling benches (``fetch_ceiling.py``, ``produce_ceiling.py``) share: running one
client in its own process while reading the broker's CPU, and the table of medians with each
client's share of the raw ceiling."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int | None) -> float | None:
    """User plus system CPU seconds of a process so far (None without a pid)."""
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command name: state is field 3, utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def run_child(argv: list[str], broker_pid: int | None) -> dict[str, Any]:
    """Run one client's process, which prints its result as JSON on its last line; the result,
    with ``broker_cpu``: the broker's CPU seconds during the run (for a broker whose pid is
    known, that is one this program started)."""
    before = process_cpu(broker_pid)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    after = process_cpu(broker_pid)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if before is not None and after is not None:
        result["broker_cpu"] = after - before
    return result


def describe_run(label: str, name: str, records: int, r: dict[str, Any]) -> str:
    """One run's line for the progress log."""
    return (
        f"{label} {name}: {records / r['wall'] / 1e6:.2f} M rec/s, cpu {r['cpu']:.2f}s, "
        f"broker cpu {r.get('broker_cpu', float('nan')):.2f}s"
    )


def print_table(column: str, runs: dict[str, list[dict[str, Any]]], records: int) -> None:
    """Markdown table of medians per client (``column`` names them), the first being the raw
    ceiling every share is of."""
    rate = {c: statistics.median(records / r["wall"] for r in rs) for c, rs in runs.items()}
    ceiling = rate[next(iter(runs))]
    print(
        f"| {column} | records/s | wall s | client CPU s | broker CPU s "
        "| broker cores busy | share of ceiling |"
    )
    print("|---|---|---|---|---|---|---|")
    for c, rs in runs.items():
        wall = statistics.median(r["wall"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        watched = [r for r in rs if "broker_cpu" in r]
        if watched:
            broker = statistics.median(r["broker_cpu"] for r in watched)
            busy = statistics.median(r["broker_cpu"] / r["wall"] for r in watched)
            broker_cols = f"{broker:.2f} | {busy:.2f}"
        else:
            broker_cols = "- | -"  # an external broker: its pid is not ours to read
        print(
            f"| {c} | {rate[c] / 1e6:.2f} M | {wall:.2f} | {cpu:.2f} | {broker_cols} "
            f"| {rate[c] / ceiling:.0%} |"
        )
