"""AIOKafkaAdminClient against the real broker: topics, configs, partitions, records and
consumer groups, read back through independent paths (metadata, ListOffsets, raw requests,
librdkafka consumers)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ConfigResource,
    ConfigResourceType,
    NewPartitions,
    NewTopic,
    RecordsToDelete,
)
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import ApiKey
from ferrokafka.structs import OffsetAndMetadata, TopicPartition

from .kafka_versions import CONSUMER_PROTOCOL
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]


def _name(prefix: str) -> str:
    return f"fk-admin-{prefix}-{uuid.uuid4().hex[:10]}"


def _configs(response: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [result] = response["results"]
    return {c["name"]: c for c in result["configs"]}


async def _commit(
    bootstrap_servers: str, coordinator: int, group: str, offsets: dict[TopicPartition, int]
) -> None:
    """OffsetCommit v9 as a non-member (member "" / generation -1), which the broker accepts
    for a group without members."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, offset in offsets.items():
        topics.setdefault(tp.topic, []).append(
            {
                "partition_index": tp.partition,
                "committed_offset": offset,
                "committed_leader_epoch": -1,
                "committed_metadata": f"m{offset}",
            }
        )
    body = {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        # A new group's offsets partition may still be loading on the coordinator
        # (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE: retriable): ask again, as a
        # client would.
        for _ in range(100):
            response = await client.send(coordinator, ApiKey.OFFSET_COMMIT, body, version=9)
            codes = {p["error_code"] for t in response["topics"] for p in t["partitions"]}
            if not codes & {14, 15}:
                break
            await asyncio.sleep(0.1)
    for t in response["topics"]:
        for p in t["partitions"]:
            assert p["error_code"] == 0, (t["name"], p)


async def _earliest(bootstrap_servers: str, tp: TopicPartition) -> int:
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        client.add_topic(tp.topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(tp)
        assert leader is not None
        response = await client.send(
            leader,
            ApiKey.LIST_OFFSETS,
            {
                "replica_id": -1,
                "topics": [
                    {
                        "name": tp.topic,
                        "partitions": [{"partition_index": tp.partition, "timestamp": -2}],
                    }
                ],
            },
        )
    [topic] = response["topics"]
    [partition] = topic["partitions"]
    assert partition["error_code"] == 0
    offset: int = partition["offset"]
    return offset


@pytest.fixture
async def admin(bootstrap_servers: str) -> Any:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as client:
        yield client


# ---- topics ---------------------------------------------------------------------------------


async def test_create_topic_with_configs_then_describe_and_delete(
    admin: AIOKafkaAdminClient,
) -> None:
    name = _name("create")
    response = await admin.create_topics(
        [
            NewTopic(
                name,
                2,
                1,
                topic_configs={"retention.ms": "123456", "cleanup.policy": "compact"},
            )
        ]
    )
    try:
        [created] = response["topics"]
        assert (created["name"], created["error_code"]) == (name, 0)
        await admin.wait_for_topic(name, partitions=2, timeout=30)

        assert name in await admin.list_topics()
        [described] = await admin.describe_topics([name])
        assert described["name"] == name and described["error_code"] == 0
        assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1]

        # Every key, with synonyms: the two we set are dynamic topic configs (source 1).
        [every] = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, name)], include_synonyms=True
        )
        configs = _configs(every)
        assert configs["retention.ms"]["value"] == "123456"
        assert configs["retention.ms"]["config_source"] == 1
        assert configs["retention.ms"]["synonyms"][0]["value"] == "123456"
        assert configs["cleanup.policy"]["value"] == "compact"
        assert configs["segment.bytes"]["config_source"] != 1
        assert len(configs) > 10

        # Named keys only (the type may be given by name, as in aiokafka).
        [some] = await admin.describe_configs(
            [ConfigResource("topic", name, {"retention.ms": None})]
        )
        assert list(_configs(some)) == ["retention.ms"]
    finally:
        deleted = await admin.delete_topics([name])
        assert [(t["name"], t["error_code"]) for t in deleted["responses"]] == [(name, 0)]
    await admin.wait_for_topic(name, present=False, timeout=30)
    assert name not in await admin.list_topics()


async def test_create_existing_topic_reports_the_error(
    admin: AIOKafkaAdminClient, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    response = await admin.create_topics([NewTopic(topic, 1, 1)])
    [created] = response["topics"]
    assert created["error_code"] == Errors.TopicAlreadyExistsError.errno


async def test_describe_topics_of_unknown_topic_raises(admin: AIOKafkaAdminClient) -> None:
    name = _name("missing")
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=name):
        await admin.describe_topics([name])


async def test_describe_cluster_names_the_broker(
    admin: AIOKafkaAdminClient, bootstrap_servers: str
) -> None:
    cluster = await admin.describe_cluster()
    assert cluster["cluster_id"]
    assert "topics" not in cluster
    ports = {b["port"] for b in cluster["brokers"]}
    assert int(bootstrap_servers.rsplit(":", 1)[1]) in ports
    assert cluster["controller_id"] in {b["node_id"] for b in cluster["brokers"]} | {-1}


async def test_describe_broker_configs(admin: AIOKafkaAdminClient) -> None:
    cluster = await admin.describe_cluster()
    broker = cluster["brokers"][0]["node_id"]
    [response] = await admin.describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(broker), {"num.partitions": None})]
    )
    configs = _configs(response)
    assert list(configs) == ["num.partitions"]
    assert int(configs["num.partitions"]["value"]) >= 1


async def test_alter_configs_replaces_a_topics_dynamic_configs(
    admin: AIOKafkaAdminClient, make_topic: Any
) -> None:
    topic = make_topic(partitions=1, configs={"cleanup.policy": "compact"})
    described = ConfigResource(ConfigResourceType.TOPIC, topic)
    wanted = ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": 654321})

    # validate_only changes nothing.
    [checked] = await admin.alter_configs([wanted], validate_only=True)
    assert checked["responses"][0]["error_code"] == 0
    [before] = await admin.describe_configs([described])
    assert _configs(before)["retention.ms"]["value"] != "654321"

    [done] = await admin.alter_configs([wanted])
    assert [(r["resource_name"], r["error_code"]) for r in done["responses"]] == [(topic, 0)]
    # The broker applies the change once its metadata log carries it: describe until then.
    for _ in range(50):
        [after] = await admin.describe_configs([described])
        configs = _configs(after)
        if configs["retention.ms"]["value"] == "654321":
            break
        await asyncio.sleep(0.1)
    assert (configs["retention.ms"]["value"], configs["retention.ms"]["config_source"]) == (
        "654321",
        1,
    )
    # AlterConfigs replaces the set: the key it did not name is back to its default.
    assert configs["cleanup.policy"]["value"] == "delete"

    bad = ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": "soon"})
    with pytest.raises(Errors.InvalidConfigurationError, match=f"alter_configs: topic '{topic}'"):
        await admin.alter_configs([bad])
    missing = ConfigResource(ConfigResourceType.TOPIC, _name("missing"), {"retention.ms": 1})
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing.name):
        await admin.alter_configs([missing])


async def test_describe_configs_of_unknown_topic_raises(admin: AIOKafkaAdminClient) -> None:
    name = _name("missing")
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=name):
        await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])


# ---- partitions -----------------------------------------------------------------------------


async def test_create_partitions_grows_the_topic(
    admin: AIOKafkaAdminClient, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    response = await admin.create_partitions({topic: NewPartitions(3)})
    assert [(r["name"], r["error_code"]) for r in response["results"]] == [(topic, 0)]
    await admin.wait_for_topic(topic, partitions=3, timeout=30)
    [described] = await admin.describe_topics([topic])
    assert sorted(p["partition_index"] for p in described["partitions"]) == [0, 1, 2]


async def test_create_partitions_validate_only_changes_nothing(
    admin: AIOKafkaAdminClient, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    await admin.create_partitions({topic: NewPartitions(4)}, validate_only=True)
    [described] = await admin.describe_topics([topic])
    assert len(described["partitions"]) == 1


async def test_create_partitions_rejects_bad_input(
    admin: AIOKafkaAdminClient, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    with pytest.raises(Errors.InvalidPartitionsError, match=topic):
        await admin.create_partitions({topic: NewPartitions(1)})
    missing = _name("missing")
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing):
        await admin.create_partitions({missing: NewPartitions(2)})


# ---- records --------------------------------------------------------------------------------


async def test_delete_records_moves_the_log_start_offset(
    admin: AIOKafkaAdminClient, make_topic: Any, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 10)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    assert await _earliest(bootstrap_servers, tp0) == 0

    low = await admin.delete_records({tp0: RecordsToDelete(4), tp1: RecordsToDelete(-1)})
    assert low == {tp0: 4, tp1: 10}
    assert await _earliest(bootstrap_servers, tp0) == 4
    assert await _earliest(bootstrap_servers, tp1) == 10


async def test_delete_records_rejects_bad_input(
    admin: AIOKafkaAdminClient, make_topic: Any, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=1)
    await produce_values(bootstrap_servers, topic, 1, 3)
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=topic):
        await admin.delete_records({TopicPartition(topic, 5): RecordsToDelete(1)})
    missing = _name("missing")
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing):
        await admin.delete_records({TopicPartition(missing, 0): RecordsToDelete(1)})
    with pytest.raises(Errors.OffsetOutOfRangeError, match=topic):
        await admin.delete_records({TopicPartition(topic, 0): RecordsToDelete(100)})


# ---- consumer groups ------------------------------------------------------------------------


async def test_committed_offsets_show_in_every_group_method(
    admin: AIOKafkaAdminClient, make_topic: Any, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=3)
    group = _name("group")
    tp0, tp1, tp2 = (TopicPartition(topic, p) for p in range(3))
    coordinator = await admin.find_coordinator(group)
    assert coordinator in {b["node_id"] for b in (await admin.describe_cluster())["brokers"]}
    await _commit(bootstrap_servers, coordinator, group, {tp0: 5, tp1: 7})

    groups = await admin.list_consumer_groups()
    assert (group, "") in groups
    assert groups == list(dict.fromkeys(groups)), "each group once"

    [response] = await admin.describe_consumer_groups([group])
    [described] = response["groups"]
    assert described["group_id"] == group
    assert described["error_code"] == 0
    assert described["group_state"] == "Empty"
    assert described["members"] == []

    offsets = await admin.list_consumer_group_offsets(group)
    assert offsets == {tp0: OffsetAndMetadata(5, "m5"), tp1: OffsetAndMetadata(7, "m7")}

    # Asked explicitly, a partition without a commit is -1; pinning the coordinator works.
    some = await admin.list_consumer_group_offsets(
        group, group_coordinator_id=coordinator, partitions=[tp1, tp2]
    )
    assert some == {tp1: OffsetAndMetadata(7, "m7"), tp2: OffsetAndMetadata(-1, "")}


async def test_unknown_group(admin: AIOKafkaAdminClient) -> None:
    """GroupIdNotFound naming the group: DescribeGroups v6+ says so (KIP-1043); before v6
    (Kafka 3.9) the broker describes a group in state Dead with no protocol, which the client
    reads the same way. Also on a fresh broker whose offsets topic is still being created."""
    group = _name("nobody")
    with pytest.raises(Errors.GroupIdNotFound, match=group):
        await admin.describe_consumer_groups([group])
    assert await admin.list_consumer_group_offsets(group) == {}
    assert group not in {g for g, _ in await admin.list_consumer_groups()}


class _RdkafkaMember:
    """A librdkafka group member polling in a thread until stopped."""

    def __init__(self, bootstrap_servers: str, group: str, topic: str, protocol: str) -> None:
        from confluent_kafka import Consumer

        config: dict[str, Any] = {
            "bootstrap.servers": bootstrap_servers,
            "group.id": group,
            "client.id": "rdkafka-admin-test",
            "group.protocol": protocol,
            "enable.auto.commit": False,
        }
        if protocol == "classic":
            config["session.timeout.ms"] = 10000
        self._consumer = Consumer(config)
        self._consumer.subscribe([topic])
        self.assigned = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._consumer.poll(0.1)
            if self._consumer.assignment():
                self.assigned.set()
        self._consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


@pytest.fixture
def rdkafka_member(bootstrap_servers: str) -> Iterator[Any]:
    members: list[_RdkafkaMember] = []

    def start(group: str, topic: str, protocol: str) -> _RdkafkaMember:
        member = _RdkafkaMember(bootstrap_servers, group, topic, protocol)
        members.append(member)
        return member

    yield start
    for member in members:
        member.stop()


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_describe_group_with_a_live_member(
    admin: AIOKafkaAdminClient, make_topic: Any, rdkafka_member: Any, protocol: str
) -> None:
    topic = make_topic(partitions=2)
    group = _name(protocol)
    member = rdkafka_member(group, topic, protocol)
    assert await asyncio.to_thread(member.assigned.wait, 45), "never assigned"

    [response] = await admin.describe_consumer_groups([group])
    [described] = response["groups"]
    assert described["group_state"] == "Stable"
    assert described["protocol_type"] == "consumer"
    [m] = described["members"]
    assert m["client_id"] == "rdkafka-admin-test"
    if protocol == "consumer":
        assert sorted(m["assignment"]) == [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    assert (group, "consumer") in await admin.list_consumer_groups()


async def test_delete_consumer_groups_removes_the_group_and_its_offsets(
    admin: AIOKafkaAdminClient, make_topic: Any, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=2)
    group = _name("deleted")
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    await _commit(bootstrap_servers, await admin.find_coordinator(group), group, {tp0: 3, tp1: 4})
    assert await admin.list_consumer_group_offsets(group) == {
        tp0: OffsetAndMetadata(3, "m3"),
        tp1: OffsetAndMetadata(4, "m4"),
    }
    assert (group, "") in await admin.list_consumer_groups()

    # A repeated id is sent and reported once.
    assert await admin.delete_consumer_groups([group, group]) == [(group, Errors.NoError)]

    assert group not in {g for g, _ in await admin.list_consumer_groups()}
    assert await admin.list_consumer_group_offsets(group) == {}
    with pytest.raises(Errors.GroupIdNotFound, match=group):
        await admin.describe_consumer_groups([group])
    assert await admin.delete_consumer_groups([]) == []


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_delete_consumer_groups_keeps_a_group_with_members(
    admin: AIOKafkaAdminClient,
    make_topic: Any,
    rdkafka_member: Any,
    bootstrap_servers: str,
    protocol: str,
) -> None:
    """One request with both groups: the one with a live member is refused, the other is
    deleted all the same."""
    topic = make_topic(partitions=2)
    busy, idle = _name(protocol), _name("idle")
    tp0 = TopicPartition(topic, 0)
    await _commit(bootstrap_servers, await admin.find_coordinator(idle), idle, {tp0: 1})
    member = rdkafka_member(busy, topic, protocol)
    assert await asyncio.to_thread(member.assigned.wait, 45), "never assigned"

    results = await admin.delete_consumer_groups([busy, idle])

    assert results == [(busy, Errors.NonEmptyGroup), (idle, Errors.NoError)]
    groups = {g for g, _ in await admin.list_consumer_groups()}
    assert busy in groups
    assert idle not in groups
    assert await admin.list_consumer_group_offsets(idle) == {}


async def test_delete_unknown_consumer_group(admin: AIOKafkaAdminClient) -> None:
    group = _name("nobody")
    assert await admin.delete_consumer_groups([group]) == [(group, Errors.GroupIdNotFound)]
    # The coordinator given is used as it is.
    coordinator = await admin.find_coordinator(group)
    assert await admin.delete_consumer_groups([group], group_coordinator_id=coordinator) == [
        (group, Errors.GroupIdNotFound)
    ]


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_alter_consumer_group_offsets_of_an_empty_group_only(
    admin: AIOKafkaAdminClient, make_topic: Any, rdkafka_member: Any, protocol: str
) -> None:
    topic = make_topic(partitions=2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    group = _name("altered")
    # A group that does not exist yet is made by the commit; plain ints and metadata both go.
    done = await admin.alter_consumer_group_offsets(group, {tp0: 3, tp1: OffsetAndMetadata(9, "m")})
    assert done == {tp0: OffsetAndMetadata(3, ""), tp1: OffsetAndMetadata(9, "m")}
    assert await admin.list_consumer_group_offsets(group) == done
    assert await admin.alter_consumer_group_offsets(group, {tp0: 0}) == {
        tp0: OffsetAndMetadata(0, "")
    }
    assert (await admin.list_consumer_group_offsets(group))[tp0].offset == 0
    with pytest.raises(ValueError, match="must be an int >= 0"):
        await admin.alter_consumer_group_offsets(group, {tp0: -1})
    # A group with a live member refuses commits from outside it, naming the group.
    busy = _name(protocol)
    member = rdkafka_member(busy, topic, protocol)
    assert await asyncio.to_thread(member.assigned.wait, 45), "never assigned"
    with pytest.raises(Errors.KafkaError, match=busy) as refused:
        await admin.alter_consumer_group_offsets(busy, {tp0: 1})
    assert isinstance(
        refused.value,
        (Errors.UnknownMemberIdError, Errors.IllegalGenerationError, Errors.StaleMemberEpochError),
    ), refused.value
