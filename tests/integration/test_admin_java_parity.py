"""The admin client beside Java's ``Admin``: the same questions asked through Kafka's own tools
(``kafka-get-offsets``, ``kafka-topics``, ``kafka-transactions``, ``kafka-features``,
``kafka-log-dirs``, ``kafka-cluster``, ``kafka-configs``, ``kafka-consumer-groups``,
``kafka-reassign-partitions``, ``kafka-leader-election``), which answer with Java's admin
client, must get the same answers; the same changes made by both must leave the same state,
and the same mistakes be refused alike."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AbortTransactionSpec,
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ConfigResource,
    ConfigResourceType,
    ElectionType,
    FeatureUpdate,
    FeatureUpgradeType,
    OffsetSpec,
    PartitionReassignment,
    ReplicaInfo,
    ScramMechanism,
    TopicPartitionReplica,
    TransactionState,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from ferrokafka.structs import TopicPartition

from ..conftest import TopicFactory
from .conftest import PlacementCluster
from .java_util import kafka_tool, run_kafka_tool
from .placement_util import (
    THROTTLED,
    create_topic,
    eventually,
    fill,
    placed,
    set_broker_configs,
    throttle,
)
from .produce_util import produce_values

pytestmark = pytest.mark.integration

TOOLS = "org.apache.kafka.tools."
BASE_TS = 1_700_000_000_000


async def _log_dirs_tool(bootstrap: str, brokers: str, topic: str) -> str:
    """What ``kafka-log-dirs.sh --describe`` prints of ``topic`` on ``brokers`` ("1,2")."""
    return await asyncio.to_thread(
        kafka_tool,
        TOOLS + "LogDirsCommand",
        "--bootstrap-server",
        bootstrap,
        "--describe",
        "--broker-list",
        brokers,
        "--topic-list",
        topic,
    )


async def test_list_offsets_as_kafka_get_offsets(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=3)
    await produce_values(bootstrap_servers, topic, 3, 7, timestamp=BASE_TS)
    tps = [TopicPartition(topic, p) for p in range(3)]
    for java_time, spec in (
        ("-1", OffsetSpec.latest()),
        ("-2", OffsetSpec.earliest()),
        ("-3", OffsetSpec.max_timestamp()),
        (str(BASE_TS + 3), OffsetSpec.for_timestamp(BASE_TS + 3)),
    ):
        out = await asyncio.to_thread(
            kafka_tool,
            TOOLS + "GetOffsetShell",
            "--bootstrap-server",
            bootstrap_servers,
            "--topic",
            topic,
            "--time",
            java_time,
        )
        java = {}
        for line in out.split():
            name, partition, offset = line.rsplit(":", 2)
            java[TopicPartition(name, int(partition))] = int(offset)
        ours = await admin.list_offsets(dict.fromkeys(tps, spec))
        assert {tp: info.offset for tp, info in ours.items()} == java, java_time


async def test_transactions_as_kafka_transactions(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=1)
    tid = f"fk-parity-txn-{uuid.uuid4().hex[:10]}"
    tool = (TOOLS + "TransactionsCommand", "--bootstrap-server", bootstrap_servers)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=tid
    ) as producer:
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"open", partition=0)

        listed = await asyncio.to_thread(kafka_tool, *tool, "list")
        [java_row] = [r.split() for r in listed.splitlines() if r.split()[:1] == [tid]]
        described = await asyncio.to_thread(
            kafka_tool, *tool, "describe", "--transactional-id", tid
        )
        header, row = (line.split() for line in described.splitlines()[:2])
        java_txn = dict(zip(header, row, strict=False))
        producers = await asyncio.to_thread(
            kafka_tool, *tool, "describe-producers", "--topic", topic, "--partition", "0"
        )
        header, row = (line.split() for line in producers.splitlines()[:2])
        java_producer = dict(zip(header, row, strict=True))

        ours_listed = [t for t in await admin.list_transactions() if t.transactional_id == tid]
        ours = (await admin.describe_transactions([tid]))[tid]
        [state] = (await admin.describe_producers([TopicPartition(topic, 0)]))[
            TopicPartition(topic, 0)
        ]
        await producer.abort_transaction()

    # list: TransactionalId Coordinator ProducerId TransactionState
    assert java_row == [tid, str(ours.coordinator_id), str(ours.producer_id), "Ongoing"]
    assert [(t.producer_id, t.state.value) for t in ours_listed] == [(ours.producer_id, "Ongoing")]
    assert java_txn["CoordinatorId"] == str(ours.coordinator_id)
    assert java_txn["ProducerId"] == str(ours.producer_id)
    assert java_txn["ProducerEpoch"] == str(ours.producer_epoch)
    assert java_txn["TransactionState"] == ours.state.value
    assert java_txn["TransactionTimeoutMs"] == str(ours.transaction_timeout_ms)
    assert java_txn["CurrentTransactionStartTimeMs"] == str(ours.transaction_start_time_ms)
    assert java_producer["ProducerId"] == str(state.producer_id)
    assert java_producer["ProducerEpoch"] == str(state.producer_epoch)
    assert java_producer["LastSequence"] == str(state.last_sequence)
    assert java_producer["LastTimestamp"] == str(state.last_timestamp)
    assert java_producer["CurrentTransactionStartOffset"] == str(
        state.current_transaction_start_offset
    )


async def test_features_log_dirs_and_cluster_id_as_kafka_tools(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=1)
    await produce_values(bootstrap_servers, topic, 1, 20)
    cluster = await admin.describe_cluster_result()
    java_id = await asyncio.to_thread(
        kafka_tool, TOOLS + "ClusterTool", "cluster-id", "--bootstrap-server", bootstrap_servers
    )
    assert java_id.split() == ["Cluster", "ID:", cluster.cluster_id]

    features = await admin.describe_features()
    described = await asyncio.to_thread(
        kafka_tool, TOOLS + "FeatureCommand", "--bootstrap-server", bootstrap_servers, "describe"
    )
    later = await admin.describe_features()
    java_features = {}
    for line in described.splitlines():
        fields = dict(f.split(": ", 1) for f in line.split("\t") if ": " in f)
        java_features[fields["Feature"]] = fields
    assert set(java_features) == set(features.supported_features)
    for name, java in java_features.items():
        if name == "metadata.version":  # named by release there (4.2-IV1), numbered here
            continue
        supported = features.supported_features[name]
        assert (int(java["SupportedMinVersion"]), int(java["SupportedMaxVersion"])) == (
            supported.min_version,
            supported.max_version,
        ), name
        finalized = features.finalized_features.get(name)
        assert int(java["FinalizedVersionLevel"]) == (finalized.max_version if finalized else 0)
        # The epoch is the metadata log's offset at the answer: it moves on between calls.
        before, after = features.finalized_features_epoch, later.finalized_features_epoch
        assert before is not None and after is not None
        assert before <= int(java["Epoch"]) <= after

    broker = int(cluster.brokers[0].nodeId)
    out = await _log_dirs_tool(bootstrap_servers, str(broker), topic)
    java_dirs = json.loads(out.splitlines()[-1])
    [java_broker] = java_dirs["brokers"]
    ours = (await admin.describe_log_dirs([broker]))[broker]
    tp = TopicPartition(topic, 0)
    java_replicas = {
        (d["logDir"], p["partition"]): (p["size"], p["offsetLag"], p["isFuture"])
        for d in java_broker["logDirs"]
        for p in d["partitions"]
    }
    ours_replicas = {
        (path, f"{tp.topic}-{tp.partition}"): tuple(d.replicas[tp])
        for path, d in ours.items()
        if tp in d.replicas
    }
    assert ours_replicas == java_replicas
    assert {d["logDir"] for d in java_broker["logDirs"]} == set(ours)


async def test_client_quotas_as_kafka_configs(
    admin: AIOKafkaAdminClient, bootstrap_servers: str
) -> None:
    user = f"fk-parity-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity.of({"user": user})
    tool = ("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap_servers)
    which = ("--entity-type", "users", "--entity-name", user)
    # Set by one side, read by the other, both ways.
    await admin.alter_client_quotas([ClientQuotaAlteration(entity, {"producer_byte_rate": 1024})])
    await asyncio.to_thread(
        kafka_tool, *tool, "--alter", *which, "--add-config", "consumer_byte_rate=2048"
    )
    expected = {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}
    ours: dict[str, float] = {}
    for _ in range(50):
        ours = (await admin.describe_client_quotas()).get(entity, {})
        if ours == expected:
            break
        await asyncio.sleep(0.1)
    assert ours == expected
    described = await asyncio.to_thread(kafka_tool, *tool, "--describe", *which)
    java = described.rsplit(" are ", 1)[1].strip()
    assert dict(kv.split("=") for kv in java.split(", ")) == {
        k: str(v) for k, v in expected.items()
    }


TOPIC_CONFIG = 1
"""DescribeConfigs' config source of a value set on the topic (DYNAMIC_TOPIC_CONFIG)."""


def _java_topic_configs(described: str) -> dict[str, dict[str, str]]:
    """``kafka-configs.sh --describe``'s ``Dynamic configs for topic T are:`` then one
    ``  name=value sensitive=... synonyms={...}`` line per config, by topic."""
    found: dict[str, dict[str, str]] = {}
    configs: dict[str, str] = {}
    for line in described.splitlines():
        if line.startswith("Dynamic configs for topic "):
            configs = found[line.split()[4]] = {}
        elif line.startswith("  "):
            name, value = line.strip().split(" sensitive=")[0].split("=", 1)
            configs[name] = value
    return found


async def test_incremental_alter_configs_as_kafka_configs(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    ours, java = make_topic(partitions=1), make_topic(partitions=1)
    tool = ("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap_servers)
    throttled = "leader.replication.throttled.replicas"
    op = AlterConfigOpType
    # Each step: ferrokafka's operations on one topic, kafka-configs.sh's on the other (which
    # sets a list config whole), and the topic configs both must have afterwards.
    steps: list[tuple[list[AlterConfigOp], list[str], dict[str, str]]] = [
        (
            [
                AlterConfigOp("retention.ms", "86400000", op.SET),
                AlterConfigOp("cleanup.policy", "delete", op.SET),
                AlterConfigOp(throttled, "0:1", op.SET),
            ],
            ["--add-config", f"retention.ms=86400000,cleanup.policy=delete,{throttled}=0:1"],
            {"retention.ms": "86400000", "cleanup.policy": "delete", throttled: "0:1"},
        ),
        (
            [
                AlterConfigOp("cleanup.policy", "compact", op.APPEND),
                AlterConfigOp(throttled, "0:2", op.APPEND),
            ],
            ["--add-config", f"cleanup.policy=[delete,compact],{throttled}=[0:1,0:2]"],
            {"retention.ms": "86400000", "cleanup.policy": "delete,compact", throttled: "0:1,0:2"},
        ),
        (
            [
                AlterConfigOp("cleanup.policy", "delete", op.SUBTRACT),
                AlterConfigOp(throttled, "0:1", op.SUBTRACT),
                AlterConfigOp("retention.ms", None, op.DELETE),
            ],
            [
                "--add-config",
                f"cleanup.policy=[compact],{throttled}=0:2",
                "--delete-config",
                "retention.ms",
            ],
            {"cleanup.policy": "compact", throttled: "0:2"},
        ),
    ]

    async def topic_configs() -> dict[str, dict[str, str]]:
        described = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in (ours, java)]
        )
        return {
            result["resource_name"]: {
                c["name"]: c["value"]
                for c in result["configs"]
                if c["config_source"] == TOPIC_CONFIG
            }
            for response in described
            for result in response["results"]
        }

    for ops, java_flags, expected in steps:
        await admin.incremental_alter_configs({ConfigResource(ConfigResourceType.TOPIC, ours): ops})
        await asyncio.to_thread(
            kafka_tool,
            *tool,
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            java,
            *java_flags,
        )
        # A broker applies a change when its metadata log carries it.
        want = {ours: expected, java: expected}
        await eventually(topic_configs, lambda found, want=want: found == want)
        described = await asyncio.gather(
            *(
                asyncio.to_thread(
                    kafka_tool, *tool, "--describe", "--entity-type", "topics", "--entity-name", t
                )
                for t in (ours, java)
            )
        )
        assert _java_topic_configs("".join(described)) == want, described


async def _java_group_offsets(bootstrap_servers: str, group: str) -> list[list[str]]:
    """``kafka-consumer-groups.sh --describe --offsets``: TOPIC PARTITION CURRENT-OFFSET ...
    per partition of ``group``."""
    described = await asyncio.to_thread(
        kafka_tool,
        TOOLS + "consumer.group.ConsumerGroupCommand",
        "--bootstrap-server",
        bootstrap_servers,
        "--describe",
        "--offsets",
        "--group",
        group,
    )
    return [line.split()[1:] for line in described.splitlines() if line.split()[:1] == [group]]


async def test_delete_consumer_group_offsets_as_kafka_consumer_groups(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    a, other = make_topic(partitions=2), make_topic(partitions=1)
    ours, java = (f"fk-parity-offdel-{uuid.uuid4().hex[:10]}-{side}" for side in ("a", "b"))
    a0, a1, o0 = TopicPartition(a, 0), TopicPartition(a, 1), TopicPartition(other, 0)
    for group in (ours, java):
        await admin.alter_consumer_group_offsets(group, {a0: 1, a1: 2, o0: 3})
    tool = (TOOLS + "consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap_servers)

    # One partition of a topic, and every partition of another.
    await admin.delete_consumer_group_offsets(ours, [a1, o0])
    deleted = await asyncio.to_thread(
        kafka_tool,
        *tool,
        "--delete-offsets",
        "--group",
        java,
        "--topic",
        f"{a}:1",
        "--topic",
        other,
    )

    # Java: TOPIC PARTITION STATUS, one row per partition.
    statuses = {
        tuple(line.split()) for line in deleted.splitlines() if line.split()[:1] in ([a], [other])
    }
    assert statuses == {(a, "1", "Successful"), (other, "0", "Successful")}, deleted
    left = {group: await admin.list_consumer_group_offsets(group) for group in (ours, java)}
    assert {g: {tp: o.offset for tp, o in offsets.items()} for g, offsets in left.items()} == {
        ours: {a0: 1},
        java: {a0: 1},
    }

    java_ours, java_java = await asyncio.gather(
        *(_java_group_offsets(bootstrap_servers, g) for g in (ours, java))
    )
    assert java_ours == java_java
    assert [row[:3] for row in java_ours] == [[a, "0", "1"]]


@pytest.mark.cluster
async def test_describe_cluster_result_as_kafka_broker_api_versions(
    placement_cluster: PlacementCluster,
) -> None:
    """The brokers ``describe_cluster_result`` names (id, host, port, rack) are those Kafka's
    ``kafka-broker-api-versions.sh`` lists, one line per broker:
    ``host:port (id: 1 rack: r1 isFenced: false) -> (``."""
    bootstrap = placement_cluster.bootstrap_servers
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        ours = await eventually(
            admin.describe_cluster_result, lambda found: len(found.brokers) == 3
        )
    out = await asyncio.to_thread(
        kafka_tool, TOOLS + "BrokerApiVersionsCommand", "--bootstrap-server", bootstrap
    )
    java = set()
    for line in out.splitlines():
        found = re.match(r"(\S+):(\d+) \(id: (\d+) rack: (\S+) isFenced: (\w+)\) -> \(", line)
        if found:
            host, port, node, rack, fenced = found.groups()
            assert fenced == "false", line
            java.add((int(node), host, int(port), rack))
    assert java == {(b.nodeId, b.host, b.port, b.rack) for b in ours.brokers}
    assert len(java) == 3


@pytest.mark.cluster
async def test_reassignments_and_elections_as_kafka_reassign_partitions(
    placement_cluster: PlacementCluster,
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = await create_topic(admin, [1, 2], **THROTTLED)
        tp = TopicPartition(topic, 0)
        await fill(bootstrap, topic, 300, 1000)
        await throttle(admin, "1000")
        try:
            # Broker 3 copies ~300 kB at 1 kB/s: the move stays in progress.
            await admin.alter_partition_reassignments({tp: [2, 3]})
            ours = await eventually(
                lambda: admin.list_partition_reassignments([tp]), lambda f: tp in f
            )
            listed = await asyncio.to_thread(
                kafka_tool,
                TOOLS + "reassign.ReassignPartitionsCommand",
                "--bootstrap-server",
                bootstrap,
                "--list",
            )
            await admin.alter_partition_reassignments({tp: None})
        finally:
            await throttle(admin, None)
        await eventually(lambda: admin.list_partition_reassignments([tp]), lambda f: not f)
        # Reordered, 2 is the preferred leader; 1 leads until an election.
        await admin.alter_partition_reassignments({tp: [2, 1]})
        await eventually(lambda: placed(admin, tp), lambda p: p == ([2, 1], 1))
        elected = await asyncio.to_thread(
            kafka_tool,
            TOOLS + "LeaderElectionCommand",
            "--bootstrap-server",
            bootstrap,
            "--election-type",
            "PREFERRED",
            "--topic",
            topic,
            "--partition",
            "0",
        )
        again = await admin.elect_leaders(ElectionType.PREFERRED, [tp])

    # Java: "<topic>-0: replicas: 2,3,1. adding: 3. removing: 1."
    [line] = [x for x in listed.splitlines() if x.strip().startswith(f"{topic}-0")]
    r = ours[tp]
    assert r == PartitionReassignment((2, 3, 1), (3,), (1,))
    for part, ids in (
        ("replicas", r.replicas),
        ("adding", r.adding_replicas),
        ("removing", r.removing_replicas),
    ):
        assert f"{part}: {','.join(map(str, ids))}." in line, line
    # Java elected 2; then ours finds it led by its preferred replica already.
    assert f"Successfully completed leader election (PREFERRED) for partitions {topic}-0" in (
        elected
    )
    assert isinstance(again[tp], Errors.ElectionNotNeededError)


def _java_uuid(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 of the 16 bytes, unpadded."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def _tab_fields(line: str) -> dict[str, str]:
    """A ``kafka-topics.sh --describe`` line: tab-separated ``Key: value`` fields."""
    return {k: v.strip() for k, _, v in (f.strip().partition(":") for f in line.split("\t")) if k}


@pytest.mark.cluster
async def test_describe_topics_result_as_kafka_topics(
    placement_cluster: PlacementCluster,
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    assignments = [{0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [2, 1]}, {0: [3], 1: [1], 2: [2]}]
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topics = [await create_topic(admin, a) for a in assignments]
        # Every replica in sync first, so that nothing moves between the answers.
        ours = await eventually(
            lambda: admin.describe_topics_result(topics),
            lambda d: all(
                sorted(p.isr) == sorted(p.replicas) for t in d.values() for p in t.partitions
            ),
        )
        # One partition a response: the cursor carries on within a topic and into the next.
        paged = await admin.describe_topics_result(topics, page_partitions=1)
        described = await asyncio.to_thread(
            kafka_tool,
            TOOLS + "TopicCommand",
            "--bootstrap-server",
            bootstrap,
            "--describe",
            "--topic",
            "|".join(topics),
            "--partition-size-limit-per-response",
            "1",
        )

    assert paged == ours

    def ids(found: tuple[int, ...] | None) -> str:
        return ",".join(map(str, found or ()))

    java: dict[str, list[dict[str, str]]] = {}
    for line in described.splitlines():
        if line.strip():
            fields = _tab_fields(line)
            java.setdefault(fields["Topic"], []).append(fields)
    assert sorted(java) == sorted(topics), described
    for topic, assignment in zip(topics, assignments, strict=True):
        [head, *rows] = java[topic]
        d = ours[topic]
        assert head["TopicId"] == _java_uuid(d.topic_id)
        assert head["PartitionCount"] == str(len(d.partitions))
        assert head["ReplicationFactor"] == str(len(assignment[0]))
        assert [
            (r["Partition"], r["Leader"], r["Replicas"], r["Isr"], r["Elr"], r["LastKnownElr"])
            for r in rows
        ] == [
            (
                str(p.partition),
                "none" if p.leader is None else str(p.leader),
                ids(p.replicas),
                ids(p.isr),
                ids(p.eligible_leader_replicas),
                ids(p.last_known_elr),
            )
            for p in d.partitions
        ], described
        assert [p.replicas for p in d.partitions] == [tuple(r) for r in assignment.values()]
        assert [p.leader for p in d.partitions] == [r[0] for r in assignment.values()]


def _java_scram(described: str) -> dict[str, set[tuple[str, int]]]:
    """``kafka-configs.sh --describe --entity-type users``: ``SCRAM credential configs for
    user-principal 'U' are SCRAM-SHA-256=iterations=8192, ...`` by user."""
    found: dict[str, set[tuple[str, int]]] = {}
    for line in described.splitlines():
        if line.startswith("SCRAM credential configs for user-principal "):
            user = line.split("'")[1]
            creds = line.split(" are ", 1)[1].split(", ")
            found[user] = {
                (mechanism, int(iterations.removeprefix("iterations=")))
                for mechanism, iterations in (c.split("=", 1) for c in creds)
            }
    return found


def _java_error(done: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """A failed tool's cause, Java's ``org.apache.kafka.common.errors.NameException`` and its
    message, as (``Name``, message)."""
    assert done.returncode != 0, done.stdout
    [cause] = re.findall(
        r"^Caused by: org\.apache\.kafka\.common\.errors\.(\w+)Exception: (.*)$",
        done.stdout + done.stderr,
        re.MULTILINE,
    )
    return cause[0], cause[1]


def _error_name(error: BaseException) -> str:
    """A ferrokafka error's name as Java's exception names it, without ``Exception``."""
    return type(error).__name__.removesuffix("Error")


async def test_user_scram_credentials_as_kafka_configs(
    admin: AIOKafkaAdminClient, bootstrap_servers: str
) -> None:
    ours, java = (f"fk-parity-scram-{uuid.uuid4().hex[:8]}-{side}" for side in ("a", "b"))
    tool = ("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap_servers)
    sha256, sha512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
    upsert_256 = UserScramCredentialUpsertion(ours, sha256, "pw-256", iterations=8192)
    upsert_512 = UserScramCredentialUpsertion(ours, sha512, "pw-512")

    async def java_alter(*change: str) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(
            run_kafka_tool,
            *tool,
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            java,
            *change,
        )

    # Refused alike by the controller, each naming the user, changing nothing: both
    # mechanisms of a user in one request (one change of a user per request), too many
    # iterations, and deleting a credential the user does not have.
    refusals = [
        (
            [upsert_256, upsert_512],
            "--add-config",
            "SCRAM-SHA-256=[iterations=8192,password=pw-256],SCRAM-SHA-512=[password=pw-512]",
        ),
        (
            [UserScramCredentialUpsertion(ours, sha256, "pw", iterations=20000)],
            "--add-config",
            "SCRAM-SHA-256=[iterations=20000,password=pw]",
        ),
        ([UserScramCredentialDeletion(ours, sha512)], "--delete-config", "SCRAM-SHA-512"),
    ]
    java_refused = await asyncio.gather(*(java_alter(*flags) for _, *flags in refusals))
    for (changes, *flags), done in zip(refusals, java_refused, strict=True):
        with pytest.raises(Errors.KafkaError, match=ours) as caught:
            await admin.alter_user_scram_credentials(changes)
        assert _java_error(done) == (
            _error_name(caught.value),
            str(caught.value).rsplit(": ", 1)[1],
        ), flags
    assert [_java_error(done)[0] for done in java_refused] == [
        "DuplicateResource",
        "UnacceptableCredential",
        "ResourceNotFound",
    ]
    for user in (ours, java):
        with pytest.raises(Errors.ResourceNotFoundError, match=user):
            await admin.describe_user_scram_credentials([user])

    for change in (upsert_256, upsert_512):
        await admin.alter_user_scram_credentials([change])
    added = await asyncio.gather(
        java_alter("--add-config", "SCRAM-SHA-256=[iterations=8192,password=pw-256]"),
        java_alter("--add-config", "SCRAM-SHA-512=[password=pw-512]"),
    )
    assert [done.returncode for done in added] == [0, 0], [done.stderr for done in added]

    async def both_ways() -> tuple[
        dict[str, set[tuple[str, int]]], dict[str, set[tuple[str, int]]]
    ]:
        """What each side describes of the two users, as (mechanism name, iterations)."""
        described = await asyncio.to_thread(
            kafka_tool, *tool, "--describe", "--entity-type", "users"
        )
        java_found = _java_scram(described)
        found = await admin.describe_user_scram_credentials([ours, java])
        # Every user (Java's tool describes every user when given none).
        every = await admin.describe_user_scram_credentials()
        assert {u: {(m.name.replace("_", "-"), i) for m, i in c} for u, c in every.items()} == (
            java_found
        )
        return {u: java_found.get(u, set()) for u in (ours, java)}, {
            user: {(c.mechanism.name.replace("_", "-"), c.iterations) for c in creds}
            for user, creds in found.items()
        }

    both = {("SCRAM-SHA-256", 8192), ("SCRAM-SHA-512", 4096)}
    assert await both_ways() == ({ours: both, java: both},) * 2

    await admin.alter_user_scram_credentials([UserScramCredentialDeletion(ours, sha512)])
    assert (await java_alter("--delete-config", "SCRAM-SHA-512")).returncode == 0
    left = {("SCRAM-SHA-256", 8192)}
    assert await both_ways() == ({ours: left, java: left},) * 2


async def test_alter_consumer_group_offsets_as_kafka_consumer_groups_reset(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    a, b = make_topic(partitions=2), make_topic(partitions=1)
    await produce_values(bootstrap_servers, a, 2, 10)
    await produce_values(bootstrap_servers, b, 1, 10)
    ours, java = (f"fk-parity-reset-{uuid.uuid4().hex[:10]}-{side}" for side in ("a", "b"))
    a0, a1, b0 = TopicPartition(a, 0), TopicPartition(a, 1), TopicPartition(b, 0)
    tool = (TOOLS + "consumer.group.ConsumerGroupCommand", "--bootstrap-server", bootstrap_servers)
    # Each step: ferrokafka's offsets, the tool's --topic arguments and offset (within the
    # logs: the tool moves an offset outside a log's range to its nearest end).
    steps = [
        ({a0: 4, a1: 4, b0: 4}, ["--topic", a, "--topic", b], 4),
        ({a1: 7}, ["--topic", f"{a}:1"], 7),
    ]
    for offsets, topics, offset in steps:
        committed = await admin.alter_consumer_group_offsets(ours, offsets)
        reset = await asyncio.to_thread(
            kafka_tool,
            *tool,
            "--reset-offsets",
            "--group",
            java,
            *topics,
            "--to-offset",
            str(offset),
            "--execute",
        )
        # Java: GROUP TOPIC PARTITION NEW-OFFSET, one row per partition.
        java_reset = {
            TopicPartition(row[1], int(row[2])): int(row[3])
            for row in (line.split() for line in reset.splitlines())
            if row[:1] == [java]
        }
        assert {tp: om.offset for tp, om in committed.items()} == java_reset == offsets

    expected = {a0: 4, a1: 7, b0: 4}
    for group in (ours, java):
        found = await admin.list_consumer_group_offsets(group)
        assert {tp: (om.offset, om.metadata) for tp, om in found.items()} == {
            tp: (o, "") for tp, o in expected.items()
        }, group
    java_ours, java_java = await asyncio.gather(
        *(_java_group_offsets(bootstrap_servers, g) for g in (ours, java))
    )
    assert java_ours == java_java
    assert sorted((row[0], int(row[1]), int(row[2])) for row in java_ours) == sorted(
        (tp.topic, tp.partition, o) for tp, o in expected.items()
    )


def _java_table(out: str) -> dict[str, str]:
    """The first row of a ``kafka-transactions.sh`` table, by its header's column names."""
    header, row = (line.split() for line in out.splitlines()[:2])
    return dict(zip(header, row, strict=False))


async def test_abort_transaction_and_fence_producers_as_kafka_transactions(
    make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=2)
    ours, java = TopicPartition(topic, 0), TopicPartition(topic, 1)
    tids = {tp: f"fk-parity-hang-{uuid.uuid4().hex[:10]}-{tp.partition}" for tp in (ours, java)}
    tool = (TOOLS + "TransactionsCommand", "--bootstrap-server", bootstrap_servers)
    producers = {
        tp: AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=tid)
        for tp, tid in tids.items()
    }
    # Java's Admin fences with its request timeout as the transaction timeout (30 s by
    # default), as ferrokafka does with its own (40 s by default, aiokafka's): the same here.
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=30_000)
    await admin.start()
    try:
        # Each producer leaves a transaction open in its partition and is abandoned.
        for tp, producer in producers.items():
            await producer.start()
            await producer.begin_transaction()
            for _ in range(3):
                await producer.send_and_wait(topic, b"hanging", partition=tp.partition)
        [state] = (await admin.describe_producers([ours]))[ours]
        await admin.abort_transaction(AbortTransactionSpec.from_producer_state(ours, state))
        await asyncio.to_thread(
            kafka_tool, *tool, "abort", "--topic", topic, "--partition", "1", "--start-offset", "0"
        )

        aborted = await admin.describe_producers([ours, java])
        java_aborted = [
            _java_table(
                await asyncio.to_thread(
                    kafka_tool,
                    *tool,
                    "describe-producers",
                    "--topic",
                    topic,
                    "--partition",
                    str(tp.partition),
                )
            )
            for tp in (ours, java)
        ]
        ends = {
            isolation: await admin.list_offsets(
                dict.fromkeys([ours, java], OffsetSpec.latest()), isolation
            )
            for isolation in ("read_committed", "read_uncommitted")
        }

        before = await admin.describe_transactions(tids.values())
        await admin.fence_producers([tids[ours]])
        await asyncio.to_thread(
            kafka_tool, *tool, "forceTerminateTransaction", "--transactionalId", tids[java]
        )
        fenced = await admin.describe_transactions(tids.values())
        java_fenced = [
            _java_table(
                await asyncio.to_thread(kafka_tool, *tool, "describe", "--transactional-id", tid)
            )
            for tid in tids.values()
        ]
        refused = {}
        for tp, producer in producers.items():
            with pytest.raises(Errors.KafkaError) as caught:
                await producer.send_and_wait(topic, b"late", partition=tp.partition)
            refused[tp] = caught.type
    finally:
        for producer in producers.values():
            await producer.stop()
        await admin.close()

    # Both partitions: the producer without an open transaction, the three records and the
    # abort marker readable by read_committed readers.
    for tp, java_row in zip((ours, java), java_aborted, strict=True):
        [p] = aborted[tp]
        assert p.current_transaction_start_offset is None
        assert java_row["CurrentTransactionStartOffset"] == "None"
        assert (p.producer_id, p.producer_epoch, p.last_sequence, p.coordinator_epoch) == (
            int(java_row["ProducerId"]),
            int(java_row["ProducerEpoch"]),
            int(java_row["LastSequence"]),
            int(java_row["LatestCoordinatorEpoch"]),
        )
    assert [(p.producer_epoch, p.last_sequence) for tp in (ours, java) for p in aborted[tp]] == [
        (0, 2),
        (0, 2),
    ]
    assert {i: {tp: o.offset for tp, o in e.items()} for i, e in ends.items()} == {
        "read_committed": {ours: 4, java: 4},
        "read_uncommitted": {ours: 4, java: 4},
    }

    # Both ids: the epoch bumped alike, the transaction ended, the coordinator's entry the
    # same to both readers.
    ours_tid, java_tid = tids[ours], tids[java]
    bumps = [fenced[t].producer_epoch - before[t].producer_epoch for t in (ours_tid, java_tid)]
    assert bumps[0] == bumps[1] > 0
    for tid, java_row in zip((ours_tid, java_tid), java_fenced, strict=True):
        d = fenced[tid]
        assert (d.state, d.topic_partitions, d.transaction_start_time_ms) == (
            TransactionState.EMPTY,
            frozenset(),
            None,
        )
        assert java_row == {
            "CoordinatorId": str(d.coordinator_id),
            "TransactionalId": tid,
            "ProducerId": str(d.producer_id),
            "ProducerEpoch": str(d.producer_epoch),
            "TransactionState": d.state.value,
            "TransactionTimeoutMs": str(d.transaction_timeout_ms),
            "CurrentTransactionStartTimeMs": "None",
            "TransactionDurationMs": "None",
        }
    assert [fenced[t].transaction_timeout_ms for t in (ours_tid, java_tid)] == [30_000, 30_000]
    # The abandoned producers' next sends: fenced, both.
    assert refused == {ours: Errors.ProducerFenced, java: Errors.ProducerFenced}


@pytest.mark.cluster
async def test_alter_replica_log_dirs_as_kafka_reassign_partitions(
    placement_cluster: PlacementCluster, tmp_path: Path
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = await create_topic(admin, {0: [1, 2], 1: [1, 2]})
        await produce_values(bootstrap, topic, 2, 50)
        ours, java = TopicPartition(topic, 0), TopicPartition(topic, 1)

        async def where() -> dict[tuple[int, TopicPartition], tuple[str, ReplicaInfo]]:
            """Each replica's log dir and state, by broker and partition."""
            described = await admin.describe_log_dirs([1, 2])
            return {
                (broker, tp): (path, info)
                for broker, dirs in described.items()
                for path, d in dirs.items()
                for tp, info in d.replicas.items()
                if tp.topic == topic
            }

        start = await where()
        a, b = placement_cluster.log_dirs[1]
        target = {tp: b if start[1, tp][0] == a else a for tp in (ours, java)}

        async def java_move(path: str) -> subprocess.CompletedProcess[str]:
            """Broker 1's replica of partition 1 to ``path``, by kafka-reassign-partitions.sh."""
            plan = tmp_path / "log-dirs.json"
            replica = {"topic": topic, "partition": 1, "replicas": [1, 2]}
            plan.write_text(
                json.dumps({"version": 1, "partitions": [{**replica, "log_dirs": [path, "any"]}]})
            )
            return await asyncio.to_thread(
                run_kafka_tool,
                TOOLS + "reassign.ReassignPartitionsCommand",
                "--bootstrap-server",
                bootstrap,
                "--execute",
                "--reassignment-json-file",
                str(plan),
            )

        # A directory the broker does not have: refused alike, nothing moved.
        with pytest.raises(Errors.KafkaError) as caught:
            await admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 1): "/no/dir"})
        assert _java_error(await java_move("/no/dir"))[0] == _error_name(caught.value)
        assert isinstance(caught.value, Errors.LogDirNotFound)
        assert await where() == start

        # Broker 1's replicas of both partitions to its other log dir: one by each side.
        await admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 1): target[ours]})
        assert (await java_move(target[java])).returncode == 0
        moved = await eventually(
            where,
            lambda found: (
                all(found[1, tp][0] == target[tp] for tp in (ours, java))
                and not any(info.is_future for _, info in found.values())
                and len(found) == 4
            ),
        )
        out = await _log_dirs_tool(bootstrap, "1,2", topic)

    java_dirs = json.loads(out.splitlines()[-1])
    java_where = {
        (b["broker"], d["logDir"], p["partition"]): (p["size"], p["offsetLag"], p["isFuture"])
        for b in java_dirs["brokers"]
        for d in b["logDirs"]
        for p in d["partitions"]
    }
    assert java_where == {
        (broker, path, f"{tp.topic}-{tp.partition}"): tuple(info)
        for (broker, tp), (path, info) in moved.items()
    }
    assert {tp: moved[1, tp][0] for tp in (ours, java)} == target


async def test_update_features_as_kafka_features_dry_run(
    admin: AIOKafkaAdminClient, bootstrap_servers: str
) -> None:
    features = await admin.describe_features()
    name = "transaction.version"
    level = features.finalized_features[name].max_version
    top = features.supported_features[name].max_version
    up, safe = FeatureUpgradeType.UPGRADE, FeatureUpgradeType.SAFE_DOWNGRADE
    # (feature, level, how it moves, kafka-features.sh's action for that).
    cases = [
        (name, level, up, "upgrade"),
        (name, top + 1, up, "upgrade"),
        (name, level - 1, up, "upgrade"),
        (name, level - 1, safe, "downgrade"),
        (name, 0, up, "upgrade"),
        (name, -1, up, "upgrade"),
        ("fk.no.such.feature", 1, up, "upgrade"),
        (" ", 1, up, "upgrade"),
    ]
    tool = (TOOLS + "FeatureCommand", "--bootstrap-server", bootstrap_servers)
    java = await asyncio.gather(
        *(
            asyncio.to_thread(
                run_kafka_tool, *tool, action, "--feature", f"{feature}={to}", "--dry-run"
            )
            for feature, to, _, action in cases
        )
    )
    kinds = []
    for (feature, to, how, _), done in zip(cases, java, strict=True):
        try:
            await admin.update_features({feature: FeatureUpdate(to, how)}, validate_only=True)
            ours: Errors.KafkaError | None = None
        except Errors.KafkaError as exc:
            ours = exc
        case = (feature, to, how.name, str(ours), done.stdout, done.stderr)
        if done.returncode == 0:
            moved = "upgraded" if how is up else "downgraded"
            assert done.stdout.strip() == f"{feature} can be {moved} to {to}.", case
            assert ours is None, case
        elif done.stdout.startswith("Can not "):
            # Refused by the controller: the tool prints its message after its own sentence.
            controller = done.stdout.split(". ", 1)[1].strip()
            assert isinstance(ours, Errors.InvalidUpdateVersionError), case
            assert str(ours).endswith(controller), case
        else:
            # Refused by Java's Admin before any request (a blank name; FeatureUpdate's own
            # checks of the level): the tool prints why.
            assert isinstance(ours, Errors.IllegalArgumentError), case
            assert done.stderr.strip().rstrip(".").lower() in str(ours).lower(), case
        kinds.append(None if ours is None else type(ours))
    invalid, illegal = Errors.InvalidUpdateVersionError, Errors.IllegalArgumentError
    assert kinds == [None, invalid, invalid, None, illegal, illegal, invalid, illegal]
    # A dry run changes nothing.
    after = await admin.describe_features()
    assert after.finalized_features[name].max_version == level


@pytest.mark.cluster
async def test_describe_log_dirs_during_a_move_as_kafka_log_dirs(
    placement_cluster: PlacementCluster,
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    rate = "replica.alter.log.dirs.io.max.bytes.per.second"
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = await create_topic(admin, [1, 2])
        tp = TopicPartition(topic, 0)
        await fill(bootstrap, topic, 300, 1000)

        async def where() -> set[tuple[str, bool]]:
            """Broker 1's log dirs holding the partition, and whether as the future replica."""
            described = (await admin.describe_log_dirs([1]))[1]
            return {
                (path, d.replicas[tp].is_future)
                for path, d in described.items()
                if tp in d.replicas
            }

        [(current, _)] = await where()
        a, b = placement_cluster.log_dirs[1]
        other = b if current == a else a
        # ~300 kB copied at 1 kB/s: the copy stays a future replica beside the current one.
        await set_broker_configs(admin, {rate: "1000"}, (1,))
        try:
            await admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 1): other})
            moving = {(current, False), (other, True)}
            ours = await eventually(where, lambda found: found == moving)
            out = await _log_dirs_tool(bootstrap, "1", topic)
            ours_after = await where()
        finally:
            await set_broker_configs(admin, {rate: None}, (1,))
        await eventually(where, lambda found: found == {(other, False)})

    [java_broker] = json.loads(out.splitlines()[-1])["brokers"]
    java = {
        (d["logDir"], p["isFuture"])
        for d in java_broker["logDirs"]
        for p in d["partitions"]
        if p["partition"] == f"{topic}-0"
    }
    assert java == ours == ours_after == moving
