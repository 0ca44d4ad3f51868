"""The README's main job (``ferrokafka demo``) runs end to end against a broker it starts."""

from __future__ import annotations

import io
import re

import pytest
from ferrokafka.demo import DEMO_PARTITIONS, run_demo

pytestmark = pytest.mark.integration


def test_demo_starts_a_broker_and_describes_the_cluster() -> None:
    out = io.StringIO()
    assert run_demo(out) == 0
    text = out.getvalue()
    assert re.search(r"broker up at 127\.0\.0\.1:\d+", text)
    assert len(re.findall(r"partition \d+ +leader=1 ", text)) == DEMO_PARTITIONS
    assert "METADATA v" in text and "API_VERSIONS v" in text
    assert "connections     [-1, 1]" in text
    assert text.rstrip().endswith("s") and "broker stopped" in text
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
