"""The README's main job (``ferrokafka demo``) runs end to end against a broker it starts."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ferrokafka.demo import BENCHMARK, DEMO_PARTITIONS, DEMO_RECORDS

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_demo_starts_a_broker_and_describes_the_cluster() -> None:
    # As `make run` runs it: its own process (its Spark driver must not be this one's).
    done = subprocess.run(
        [sys.executable, "-m", "ferrokafka", "demo"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = done.stdout
    assert re.search(r"broker up at 127\.0\.0\.1:\d+", text)
    assert len(re.findall(r"partition \d+ +leader=1 ", text)) == DEMO_PARTITIONS
    assert "METADATA v" in text and "API_VERSIONS v" in text
    assert "connections     [-1, 1]" in text
    assert text.rstrip().endswith("s") and "broker stopped" in text
    # Its times are labelled a smoke run's, before the first of them, with the command that
    # measures; it prints no rate a newcomer could take for ferrokafka's throughput.
    note = text.index("timings         those below are a smoke run's")
    assert note < text.index("produced ")
    assert "not benchmark results" in text and f"docs/performance.md, from {BENCHMARK}" in text
    assert (ROOT / BENCHMARK.split()[1]).is_file()
    assert not re.search(r"records/s|rows/s", text), text
    # It wrote the sample dataset and read all of it back, as records and as Arrow.
    assert re.search(r"produced +200,000 records", text)
    assert re.search(r"consumed +200,000 records as records", text)
    assert re.search(r"consumed +200,000 records as arrow", text)
    assert "first record  partition=" in text
    # A group of three split the four partitions and read everything once.
    assert re.search(r"group +'ferrokafka-demo-group', 3 members .* read 200,000 records", text)
    members = re.findall(r"member \d +partitions \[([\d, ]*)\]", text)
    owned = sorted(int(p) for m in members for p in m.split(",") if p.strip())
    assert owned == list(range(DEMO_PARTITIONS)), text
    # Spark read the same topic, through read_kafka and the data source.
    rows = re.findall(r"read_kafka +([\d,]+) rows", text)
    assert rows and all(int(r.replace(",", "")) == DEMO_RECORDS for r in rows), text
    assert f'format("ferrokafka") counted {DEMO_RECORDS:,} rows' in text
    spread = re.search(r"per partition (\{.*\})", text)
    assert spread and sum(ast.literal_eval(spread.group(1)).values()) == DEMO_RECORDS
