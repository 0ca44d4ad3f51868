"""``ferrokafka produce`` and ``consume`` end to end against the real broker: a stdin round trip
in real processes (exit codes, nothing but records on stdout), where reading starts and stops
(offsets, -N, counts, times), and a group member that commits what it printed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka.cli import main

from ..conftest import TopicFactory

pytestmark = pytest.mark.integration


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``ferrokafka argv`` in this process: exit code, stdout, stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def spawn(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrokafka", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_produce_stdin_then_consume_json_round_trip(bootstrap_servers: str, topic: str) -> None:
    lines = 'k1:hello\nk2:{"n": 2}\nk3:with:colons\n'
    produced = spawn(
        "produce",
        "-b",
        bootstrap_servers,
        "-t",
        topic,
        "-K",
        ":",
        "-H",
        "src=cli",
        "-H",
        "n=1",
        stdin=lines,
    )
    assert produced.returncode == 0, produced.stderr
    assert produced.stdout == "" and produced.stderr == ""  # not a terminal: no summary

    consumed = spawn("consume", "-b", bootstrap_servers, "-t", topic, "--format", "json")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stderr == ""
    rows = [json.loads(line) for line in consumed.stdout.splitlines()]
    assert [(r["key"], r["value"]) for r in rows] == [
        ("k1", "hello"),
        ("k2", '{"n": 2}'),
        ("k3", "with:colons"),
    ]
    assert [r["offset"] for r in rows] == [0, 1, 2]
    assert all(r["topic"] == topic and r["partition"] == 0 for r in rows)
    assert all(r["headers"] == [["src", "cli"], ["n", "1"]] for r in rows)
    assert all(isinstance(r["timestamp"], int) and r["timestamp"] > 0 for r in rows)

    # JSON values decoded as JSON; keys as base64 bytes.
    decoded = spawn(
        "consume",
        "-b",
        bootstrap_servers,
        "-t",
        topic,
        "--format",
        "json",
        "--offset",
        "1",
        "-c",
        "1",
        "--value-decoder",
        "json",
        "--key-decoder",
        "bytes",
    )
    assert decoded.returncode == 0, decoded.stderr
    row = json.loads(decoded.stdout)
    assert row["value"] == {"n": 2} and row["key"] == "azI="  # base64 of b"k2"


def test_produce_fails_on_a_line_without_the_separator(bootstrap_servers: str, topic: str) -> None:
    done = spawn("produce", "-b", bootstrap_servers, "-t", topic, "-K", "|", stdin="a|1\nno key\n")
    assert done.returncode == 1
    assert done.stderr.strip() == "ferrokafka: error: line 2: no key separator '|'"
    assert "Traceback" not in done.stderr


async def _produce(
    bootstrap: str, topic: str, count: int, timestamps: list[int] | None = None
) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(count):
            ts = timestamps[i] if timestamps else None
            await producer.send_and_wait(
                topic, f"v{i}".encode(), key=f"k{i}".encode(), timestamp_ms=ts
            )


def test_offsets_counts_and_times(
    bootstrap_servers: str, topic: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_produce(bootstrap_servers, topic, 6, [1000, 2000, 3000, 4000, 5000, 6000]))
    base = ["consume", "-b", bootstrap_servers, "-t", topic]

    def values(*extra: str) -> list[str]:
        code, out, err = cli(capsys, *base, *extra)
        assert code == 0, err
        return out.splitlines()

    assert values() == [f"v{i}" for i in range(6)]
    assert values("-c", "2") == ["v0", "v1"]
    assert values("--offset", "4") == ["v4", "v5"]
    assert values("--offset", "-2") == ["v4", "v5"]
    assert values("--offset", "latest") == []
    assert values("--offset", "earliest", "--to-offset", "2") == ["v0", "v1"]
    assert values("--from-timestamp", "3000", "--to-timestamp", "5000") == ["v2", "v3"]
    assert values("--from-timestamp", "1970-01-01T00:00:05Z") == ["v4", "v5"]
    assert values("-p", "0", "-K", "=", "-c", "1") == ["k0=v0"]


def test_consume_stops_at_the_end_of_partitions_and_reports_unknown_ones(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=3)
    asyncio.run(_produce(bootstrap_servers, topic, 7))
    code, out, _ = cli(capsys, "consume", "-b", bootstrap_servers, "-t", topic, "--format", "json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert sorted(r["value"] for r in rows) == sorted(f"v{i}" for i in range(7))
    code, _, err = cli(capsys, "consume", "-b", bootstrap_servers, "-t", topic, "-p", "7")
    assert code == 1
    assert err.strip() == f"ferrokafka: error: topic {topic!r} has no partition [7] (has 3)"


def test_group_consume_commits_then_describe_shows_no_lag(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=2)
    group = f"{topic}-group"
    asyncio.run(_produce(bootstrap_servers, topic, 10))
    code, out, err = cli(capsys, "consume", "-b", bootstrap_servers, "-t", topic, "-g", group)
    assert code == 0, err
    assert len(out.splitlines()) == 10

    code, out, err = cli(
        capsys, "groups", "describe", group, "-b", bootstrap_servers, "--format", "json"
    )
    assert code == 0, err
    described = json.loads(out)
    assert described["state"] == "Empty" and described["members"] == []
    offsets = {o["partition"]: o for o in described["offsets"]}
    assert sorted(offsets) == [0, 1]
    assert sum(o["committed"] for o in offsets.values()) == 10
    assert all(o["lag"] == 0 and o["committed"] == o["log_end"] for o in offsets.values())

    # Read again as the group: nothing new, the committed offsets hold.
    code, out, _ = cli(capsys, "consume", "-b", bootstrap_servers, "-t", topic, "-g", group)
    assert code == 0 and out == ""
