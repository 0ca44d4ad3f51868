"""The admin command lines against the real broker: ``configs``, ``offsets``,
``transactions``, ``groups delete-offsets``, ``quotas``, ``features`` and ``cluster``, each
checked against what the admin client reads back."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ClusterDescription,
    ConfigResource,
    ConfigResourceType,
    FeatureMetadata,
)
from ferrokafka.structs import OffsetAndMetadata, TopicPartition

from ..conftest import TopicFactory
from .cli_util import cli
from .produce_util import produce_values

pytestmark = pytest.mark.integration


def _json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


async def _topic_config(bootstrap: str, topic: str, key: str) -> str | None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    [result] = response["results"]
    [config] = [c for c in result["configs"] if c["name"] == key]
    value: str | None = config["value"]
    return value


def test_configs_alter_and_describe(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=1, configs={"cleanup.policy": "delete"})
    b = ["-b", bootstrap_servers]
    code, out, err = cli(
        capsys,
        "configs",
        "alter",
        "-t",
        topic,
        "--set",
        "retention.ms=7777",
        "--append",
        "cleanup.policy=compact",
        *b,
    )
    assert (code, out, err) == (0, "", "")
    for _ in range(50):  # a broker applies the change when its metadata log carries it
        code, out, err = cli(capsys, "configs", "describe", "-t", topic, "--format", "json", *b)
        assert code == 0, err
        rows = {r["name"]: r for r in _json_lines(out)}
        if rows.get("retention.ms", {}).get("value") == "7777":
            break
        asyncio.run(asyncio.sleep(0.1))
    assert rows["retention.ms"] == {"name": "retention.ms", "value": "7777", "source": "topic"}
    assert rows["cleanup.policy"]["value"] == "delete,compact"
    assert asyncio.run(_topic_config(bootstrap_servers, topic, "retention.ms")) == "7777"

    code, _, err = cli(capsys, "configs", "alter", "-t", topic, "--set", "retention.ms=x", *b)
    assert code == 1
    assert "InvalidConfigurationError" in err and topic in err


def test_offsets_of_every_partition(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=2)
    asyncio.run(produce_values(bootstrap_servers, topic, 2, 5, timestamp=1_700_000_000_000))
    b = ["-b", bootstrap_servers, "--format", "json"]
    code, out, err = cli(capsys, "offsets", topic, *b)
    assert code == 0, err
    assert [(r["partition"], r["offset"]) for r in _json_lines(out)] == [(0, 5), (1, 5)]
    code, out, _ = cli(capsys, "offsets", "-t", topic, "-p", "1", "--earliest", *b)
    assert [(r["partition"], r["offset"]) for r in _json_lines(out)] == [(1, 0)]
    code, out, _ = cli(capsys, "offsets", topic, "-p", "0", "--time", "1700000000003", *b)
    [row] = _json_lines(out)
    assert (row["offset"], row["timestamp"]) == (3, 1_700_000_000_003)
    code, out, _ = cli(capsys, "offsets", topic, "-p", "0", "--max-timestamp", *b)
    [row] = _json_lines(out)
    assert (row["offset"], row["timestamp"]) == (4, 1_700_000_000_004)


def test_transactions_list_describe_producers_abort(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=1)
    tid = f"fk-cli-txn-{uuid.uuid4().hex[:10]}"
    b = ["-b", bootstrap_servers]
    opened = asyncio.Event()
    done = asyncio.Event()

    async def hold_open() -> None:
        async with AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers, transactional_id=tid
        ) as producer:
            await producer.begin_transaction()
            await producer.send_and_wait(topic, b"open", partition=0)
            opened.set()
            await done.wait()

    async def scenario() -> list[tuple[int, str, str]]:
        holder = asyncio.create_task(hold_open())
        await opened.wait()
        results = []
        for argv in (
            ["transactions", "list", "--state", "Ongoing", "--format", "json"],
            ["transactions", "describe", tid, "--format", "json"],
            ["transactions", "producers", "-t", topic, "-p", "0", "--format", "json"],
            ["transactions", "abort", "-t", topic, "-p", "0", "--start-offset", "5"],
            ["transactions", "abort", "-t", topic, "-p", "0", "--start-offset", "0"],
            ["transactions", "producers", "-t", topic, "-p", "0", "--format", "json"],
        ):
            results.append(await asyncio.to_thread(cli, capsys, *argv, *b))
        done.set()
        await holder
        return results

    listed, described, producers, wrong, aborted, after = asyncio.run(scenario())
    assert listed[0] == 0, listed[2]
    [mine] = [r for r in _json_lines(listed[1]) if r["transactional_id"] == tid]
    assert mine["state"] == "Ongoing"
    [desc] = _json_lines(described[1])
    assert desc["producer_id"] == mine["producer_id"]
    assert desc["partitions"] == [f"{topic}:0"]
    [state] = _json_lines(producers[1])
    assert (state["producer_id"], state["txn_start_offset"]) == (mine["producer_id"], 0)
    assert wrong[0] == 1 and "starts at offset 5 (open ones start at: 0)" in wrong[2]
    assert aborted[0] == 0, aborted[2]
    [state] = _json_lines(after[1])
    assert state["txn_start_offset"] is None


def test_groups_delete_offsets(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    a, other = make_topic(partitions=2), make_topic(partitions=1)
    group = f"fk-cli-offdel-{uuid.uuid4().hex[:10]}"
    a0, a1, o0 = TopicPartition(a, 0), TopicPartition(a, 1), TopicPartition(other, 0)

    async def commit_then_read(run: bool) -> dict[TopicPartition, OffsetAndMetadata]:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            if not run:
                await admin.alter_consumer_group_offsets(group, {a0: 1, a1: 2, o0: 3})
            return await admin.list_consumer_group_offsets(group)

    asyncio.run(commit_then_read(False))
    code, _, err = cli(
        capsys,
        "groups",
        "delete-offsets",
        group,
        "-t",
        a,
        "-t",
        f"{other}:0",
        "-b",
        bootstrap_servers,
    )
    assert code == 0, err
    assert asyncio.run(commit_then_read(True)) == {}
    code, _, err = cli(
        capsys, "groups", "delete-offsets", "-g", f"{group}-none", "-t", a, "-b", bootstrap_servers
    )
    assert code == 1 and "GroupIdNotFound" in err


def test_quotas_alter_and_describe(
    bootstrap_servers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    user = f"fk-cli-quota-{uuid.uuid4().hex[:8]}"
    b = ["-b", bootstrap_servers]
    code, out, err = cli(
        capsys, "quotas", "alter", "--user", user, "--set", "producer_byte_rate=4096", *b
    )
    assert (code, out) == (0, ""), err
    rows: list[dict[str, object]] = []
    for _ in range(50):  # applied when the broker's metadata log carries it
        code, out, err = cli(capsys, "quotas", "describe", "--user", user, "--format", "json", *b)
        assert code == 0, err
        rows = _json_lines(out)
        if rows:
            break
        asyncio.run(asyncio.sleep(0.1))
    assert rows == [{"entity": f"user={user}", "quota": "producer_byte_rate", "value": 4096.0}]
    code, _, err = cli(
        capsys, "quotas", "alter", "--user", user, "--remove", "producer_byte_rate", *b
    )
    assert code == 0, err
    code, _, err = cli(capsys, "quotas", "alter", "--set", "producer_byte_rate=1", *b)
    assert code == 2 and "an entity is needed" in err


async def _features(bootstrap: str) -> FeatureMetadata:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        return await admin.describe_features()


def test_features_describe_and_dry_runs(
    bootstrap_servers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["-b", bootstrap_servers]
    before = asyncio.run(_features(bootstrap_servers))
    code, out, err = cli(capsys, "features", "describe", "--format", "json", *b)
    later = asyncio.run(_features(bootstrap_servers))
    assert code == 0, err
    rows = {r["feature"]: r for r in _json_lines(out)}
    assert set(rows) == set(before.supported_features) | set(before.finalized_features)
    for name, supported in before.supported_features.items():
        finalized = before.finalized_features.get(name)
        assert (
            rows[name]["supported_min_version"],
            rows[name]["supported_max_version"],
            rows[name]["finalized_version_level"],
        ) == (
            supported.min_version,
            supported.max_version,
            finalized.max_version if finalized else 0,
        )
    # The epoch is the metadata log's offset at the answer: it moves on between calls.
    epochs = {r["epoch"] for r in rows.values()}
    assert len(epochs) == 1
    [epoch] = epochs
    first, last = before.finalized_features_epoch, later.finalized_features_epoch
    assert first is not None and last is not None
    assert first <= epoch <= last

    name = "metadata.version"  # finalized on every KRaft cluster
    level = before.finalized_features[name].max_version
    top = before.supported_features[name].max_version
    for action, to in (("upgrade", level), ("downgrade", level - 1)):
        code, out, err = cli(
            capsys, "features", action, "--feature", f"{name}={to}", "--dry-run", *b
        )
        assert (code, out, err) == (0, "", ""), action
    assert asyncio.run(_features(bootstrap_servers)).finalized_features[name].max_version == level

    # Refused by the controller, naming the feature: a level no broker can run, and a lower
    # level asked for as an upgrade.
    for to in (top + 1, level - 1):
        code, out, err = cli(
            capsys, "features", "upgrade", "--feature", f"{name}={to}", "--dry-run", *b
        )
        assert (code, out) == (1, "")
        assert "InvalidUpdateVersionError" in err and f"update_features: {name}" in err
    code, _, err = cli(
        capsys, "features", "downgrade", "--feature", f"{name}=1", "--feature", f"{name}=2", *b
    )
    assert code == 2 and f"--feature {name}: given two levels, 1 and 2" in err


def test_cluster_describe(bootstrap_servers: str, capsys: pytest.CaptureFixture[str]) -> None:
    async def described() -> ClusterDescription:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            return await admin.describe_cluster_result(include_authorized_operations=True)

    found = asyncio.run(described())
    b = ["-b", bootstrap_servers, "--format", "json"]
    code, out, err = cli(capsys, "cluster", "describe", *b)
    assert code == 0, err
    assert found.controller is not None
    assert _json_lines(out) == [
        {
            "cluster_id": found.cluster_id,
            "broker": broker.nodeId,
            "host": broker.host,
            "port": broker.port,
            "rack": broker.rack,
            "controller": broker == found.controller,
        }
        for broker in found.brokers
    ]
    code, out, err = cli(capsys, "cluster", "describe", "--authorized-operations", *b)
    assert code == 0, err
    [row] = _json_lines(out)
    # Without an authorizer, every cluster operation is allowed.
    assert found.authorized_operations is not None
    ops = row["authorized_operations"]
    assert isinstance(ops, list) and {"ALTER", "CREATE", "DESCRIBE"} <= set(ops)
    assert ops == sorted(op.name for op in found.authorized_operations)
