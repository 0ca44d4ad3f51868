"""``ferrokafka log-dirs`` on the three-node placement cluster (two log directories per node):
the directories and replicas described as the admin client reads them, a replica moved to its
broker's other directory, and the refusals of bad replicas and brokers."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from ferrokafka.admin import AIOKafkaAdminClient, LogDirDescription
from ferrokafka.structs import TopicPartition

from .cli_util import cli
from .conftest import PlacementCluster
from .placement_util import create_topic, fill

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

Rows = list[dict[str, Any]]


async def _filled_topic(bootstrap: str) -> str:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = await create_topic(admin, [1, 2, 3])
    await fill(bootstrap, topic, 50, 1000)
    return topic


async def _log_dirs(bootstrap: str, broker: int) -> dict[str, LogDirDescription]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        return (await admin.describe_log_dirs([broker]))[broker]


def _described(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> Rows:
    code, out, err = cli(capsys, "log-dirs", "describe", *argv, "--format", "json", "-b", bootstrap)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def _holding(rows: Rows, topic: str) -> Rows:
    """The rows of ``topic``'s replicas in use (not a move's future copy)."""
    return [r for r in rows if r["topic"] == topic and not r["is_future"]]


def _until(capsys: pytest.CaptureFixture[str], bootstrap: str, argv: list[str], done: Any) -> Rows:
    deadline = time.monotonic() + 60
    while True:
        rows = _described(capsys, bootstrap, *argv)
        if done(rows):
            return rows
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


def test_describe_then_move_a_replica_between_dirs(
    placement_cluster: PlacementCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    topic = asyncio.run(_filled_topic(bootstrap))
    tp = TopicPartition(topic, 0)

    # Every broker, only this topic: one replica of 50 kB on each, the other dirs empty.
    rows = _until(
        capsys,
        bootstrap,
        ["-t", topic],
        lambda rows: (
            len(_holding(rows, topic)) == 3
            and all(r["size"] > 50_000 for r in _holding(rows, topic))
        ),
    )
    assert {r["broker"] for r in _holding(rows, topic)} == {1, 2, 3}
    assert {(r["broker"], r["log_dir"]) for r in rows} == {
        (n, path) for n, paths in placement_cluster.log_dirs.items() for path in paths
    }
    assert all(r["error"] is None for r in rows)
    assert all(r["topic"] in (topic, None) for r in rows)
    assert len(rows) == 6  # each node's other dir has a row of its own

    # One broker, every topic: what the admin client reads.
    rows = _described(capsys, bootstrap, "--broker", "2")
    ours = asyncio.run(_log_dirs(bootstrap, 2))
    assert {r["broker"] for r in rows} == {2}
    assert {r["log_dir"] for r in rows} == set(ours)
    [row] = _holding(rows, topic)
    assert (row["partition"], row["size"], row["offset_lag"]) == (
        0,
        ours[row["log_dir"]].replicas[tp].size,
        ours[row["log_dir"]].replicas[tp].offset_lag,
    )

    source = row["log_dir"]
    [target] = [p for p in placement_cluster.log_dirs[2] if p != source]
    code, out, err = cli(
        capsys, "log-dirs", "move", "--replica", f"{topic}:0:2={target}", "-b", bootstrap
    )
    assert (code, out) == (0, ""), err
    rows = _until(
        capsys,
        bootstrap,
        ["--broker", "2", "-t", topic],
        lambda rows: [r["log_dir"] for r in rows if r["topic"] == topic] == [target],
    )
    [moved] = _holding(rows, topic)
    assert moved["size"] > 50_000
    after = asyncio.run(_log_dirs(bootstrap, 2))
    assert tp in after[target].replicas and tp not in after[source].replicas


def test_bad_replicas_and_brokers(
    placement_cluster: PlacementCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    b = ["-b", bootstrap]
    topic = asyncio.run(_filled_topic(bootstrap))

    code, out, err = cli(capsys, "log-dirs", "describe", "--broker", "9", *b)
    assert (code, out) == (2, "")
    assert "--broker: no broker 9 in the cluster (its brokers: 1, 2, 3)" in err
    code, _, err = cli(capsys, "log-dirs", "move", "--replica", f"{topic}:0:7=/data", *b)
    assert code == 2 and "--replica: no broker 7" in err
    code, _, err = cli(
        capsys,
        "log-dirs",
        "move",
        "--replica",
        f"{topic}:0:2=/data/a",
        "--replica",
        f"{topic}:0:2=/data/b",
        *b,
    )
    assert code == 2 and f"--replica {topic}:0:2: given two directories" in err
    # The broker's refusal, naming the replica and the directory.
    code, _, err = cli(capsys, "log-dirs", "move", "--replica", f"{topic}:0:2=/nowhere", *b)
    assert code == 1
    assert f"topic {topic!r} partition 0 on broker 2 to '/nowhere'" in err
    assert "LogDirNotFound" in err or "KafkaStorageError" in err
    assert "Traceback" not in err

    with pytest.raises(SystemExit) as exited:
        cli(capsys, "log-dirs", "move", "--replica", f"{topic}:0=/data", *b)
    assert exited.value.code == 2
    assert "expected TOPIC:PARTITION:BROKER=PATH" in capsys.readouterr().err
