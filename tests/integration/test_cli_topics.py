"""``ferrokafka topics`` against the real broker: create (with a config), describe (partitions,
leader, replicas, ISR, configs), add partitions, list, delete."""

from __future__ import annotations

import json
import uuid

import pytest
from ferrokafka.cli import main

pytestmark = pytest.mark.integration


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_create_describe_grow_list_delete(
    bootstrap_servers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = f"fk-cli-topics-{uuid.uuid4().hex[:10]}"
    b = ["-b", bootstrap_servers]
    code, out, err = cli(
        capsys,
        "topics",
        "create",
        topic,
        "--partitions",
        "2",
        "--config",
        "retention.ms=123456",
        *b,
    )
    assert (code, out, err) == (0, "", "")
    try:
        code, out, err = cli(
            capsys, "topics", "describe", topic, "--configs", "--format", "json", *b
        )
        assert code == 0, err
        described = json.loads(out)
        assert described["topic"] == topic
        assert [p["partition"] for p in described["partitions"]] == [0, 1]
        for p in described["partitions"]:
            assert p["leader"] >= 0 and p["leader"] in p["replicas"] and p["isr"] == p["replicas"]
        assert described["configs"]["retention.ms"] == "123456"

        # Piped, the table is tab-separated with a header line.
        code, out, _ = cli(capsys, "topics", "describe", topic, *b)
        lines = out.splitlines()
        assert lines[0].split("\t") == ["TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR"]
        assert [line.split("\t")[:2] for line in lines[1:]] == [[topic, "0"], [topic, "1"]]

        code, _, err = cli(capsys, "topics", "add-partitions", topic, "--partitions", "5", *b)
        assert code == 0, err
        code, out, _ = cli(capsys, "topics", "describe", topic, "--format", "json", *b)
        assert len(json.loads(out)["partitions"]) == 5

        code, _, err = cli(capsys, "topics", "add-partitions", topic, "--partitions", "3", *b)
        assert code == 1 and err.startswith("ferrokafka: error: InvalidPartitionsError")
        assert len(err.splitlines()) == 1

        code, out, _ = cli(capsys, "topics", "list", *b)
        assert code == 0 and topic in out.splitlines()

        code, _, err = cli(capsys, "topics", "create", topic, *b)
        assert code == 1
        assert err.startswith(
            f"ferrokafka: error: topic {topic!r} not created: TopicAlreadyExistsError"
        )
    finally:
        code, _, err = cli(capsys, "topics", "delete", topic, *b)
    assert code == 0, err
    code, out, _ = cli(capsys, "topics", "list", *b)
    assert topic not in out.splitlines()
    code, _, err = cli(capsys, "topics", "describe", topic, *b)
    assert code == 1 and "UnknownTopicOrPartitionError" in err
