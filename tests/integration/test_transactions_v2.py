"""Transactions under both transaction versions of the real broker (KIP-890 part 2).

Kafka 4 finalizes ``transaction.version`` 2 on a new cluster: the producer sends no
AddPartitionsToTxn or AddOffsetsToTxn (the Produce of version 12 and the TxnOffsetCommit of
version 5 add the partitions), and every commit or abort bumps the producer's epoch, so that a
write of an earlier transaction arriving late is refused instead of joining the next one. A
cluster formatted with ``transaction.version=1`` (or a 3.x one) keeps the older flow, and
requests at the versions before. Each test runs on the session's broker and on a Kafka 4.2 broker
of transaction version 1; the core run against Kafka 3.9 runs them on its broker (version 1)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka.conn import Connection
from ferrokafka.protocol import Api, key_of
from ferrokafka.structs import OffsetAndMetadata, TopicPartition
from ferrokafka.testing import ExternalKafka, KafkaBroker
from ferrokafka.testing.kraft import QUICK_START_JVM_OPTIONS

from ..conftest import KEEP_DATA
from .java_util import read_java
from .test_consumer_interop import JAVA_PRODUCER
from .test_transactions import _read_all

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tv1_broker() -> Iterator[KafkaBroker]:
    broker = KafkaBroker(
        jvm_options=QUICK_START_JVM_OPTIONS,
        config=KEEP_DATA,
        features={"transaction.version": 1},
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(params=[pytest.param("default", marks=pytest.mark.core), "tv1"])
def broker(
    request: pytest.FixtureRequest, kafka_broker: KafkaBroker | ExternalKafka
) -> KafkaBroker | ExternalKafka:
    """The session's broker (transaction version 2 on Kafka 4), or one of version 1."""
    if request.param == "tv1":
        tv1: KafkaBroker = request.getfixturevalue("tv1_broker")
        return tv1
    return kafka_broker


def _topic(broker: KafkaBroker | ExternalKafka, partitions: int = 1) -> str:
    name = f"fk-tv-{uuid.uuid4().hex[:10]}"
    broker.create_topic(name, partitions=partitions)
    return name


@pytest.fixture
def requests_sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(api key, version) of every request any connection sends, in order."""
    sent: list[tuple[int, int]] = []
    real = Connection.send

    async def send(self: Connection, api: Any, body: Any, **kw: Any) -> Any:
        key = key_of(api)
        version = kw.get("version")
        sent.append((key, self.version_for(key) if version is None else version))
        return await real(self, api, body, **kw)

    monkeypatch.setattr(Connection, "send", send)
    return sent


async def _version_of(producer: AIOKafkaProducer) -> int:
    level = producer.client.finalized_feature("transaction.version")
    return 2 if level >= 2 else 1


def _versions(sent: list[tuple[int, int]], api: Api[Any, Any]) -> set[int]:
    return {v for k, v in sent if k == api.key}


async def test_each_transaction_follows_the_cluster_transaction_version(
    broker: KafkaBroker | ExternalKafka, requests_sent: list[tuple[int, int]]
) -> None:
    topic = _topic(broker, partitions=2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    bootstrap = broker.bootstrap_servers
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"tx-{topic}")
    await producer.start()
    try:
        tv = await _version_of(producer)
        ids = producer._idempotence
        epochs = [ids.producer_epoch]
        del requests_sent[:]
        async with producer.transaction():
            await producer.send(topic, b"a", partition=0)
            await producer.send(topic, b"b", partition=1)
            await producer.send_offsets_to_transaction(
                {TopicPartition(topic, 0): OffsetAndMetadata(7, "")}, group
            )
        epochs.append(ids.producer_epoch)
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"aborted", partition=0)
        await producer.abort_transaction()
        epochs.append(ids.producer_epoch)
    finally:
        await producer.stop()

    if tv == 2:
        assert _versions(requests_sent, Api.ADD_PARTITIONS_TO_TXN) == set()
        assert _versions(requests_sent, Api.ADD_OFFSETS_TO_TXN) == set()
        assert min(_versions(requests_sent, Api.PRODUCE)) >= 12
        assert _versions(requests_sent, Api.TXN_OFFSET_COMMIT) == {5}
        assert _versions(requests_sent, Api.END_TXN) == {5}
        # Every commit and abort gives the producer its next epoch.
        assert epochs == [epochs[0], epochs[0] + 1, epochs[0] + 2]
    else:
        assert _versions(requests_sent, Api.ADD_PARTITIONS_TO_TXN)
        assert _versions(requests_sent, Api.ADD_OFFSETS_TO_TXN)
        assert max(_versions(requests_sent, Api.PRODUCE)) <= 11
        assert max(_versions(requests_sent, Api.TXN_OFFSET_COMMIT)) <= 4
        assert max(_versions(requests_sent, Api.END_TXN)) <= 4
        assert epochs == [epochs[0]] * 3
    assert await _read_all(bootstrap, topic, 2, "read_committed") == [b"a", b"b"]
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group) as consumer:
        committed = await consumer.committed(TopicPartition(topic, 0))
    assert committed == 7


async def test_a_late_write_of_a_committed_transaction_never_joins_the_next(
    broker: KafkaBroker | ExternalKafka,
) -> None:
    """A Produce of transaction 1 that arrives after its commit (a request held up in the
    network, a zombie's retry), while transaction 2 is open on the same partition."""
    topic = _topic(broker)
    bootstrap = broker.bootstrap_servers
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"tx-{topic}")
    await producer.start()
    captured: list[tuple[Any, int]] = []
    sender = producer._sender
    real_body = sender._request_body

    def request_body(payload: Any, version: int) -> Any:
        body, names = real_body(payload, version)
        captured.append((body, version))
        return body, names

    sender._request_body = request_body  # type: ignore[method-assign]
    try:
        tv = await _version_of(producer)
        async with producer.transaction():
            await producer.send_and_wait(topic, b"one", partition=0)
        late, version = captured[-1]
        await producer.begin_transaction()
        second = await producer.send_and_wait(topic, b"two", partition=0)
        leader = producer.client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None
        conn = await producer.client.ready(leader)
        answer = await conn.send(Api.PRODUCE, late, version=version)
        await producer.commit_transaction()
    finally:
        await producer.stop()
    part = answer["responses"][0]["partition_responses"][0]
    if tv == 2:
        # Its epoch is behind the one the commit gave the producer: fenced.
        assert part["error_code"] in (47, 90), part  # INVALID_PRODUCER_EPOCH, PRODUCER_FENCED
    else:
        # Same epoch, a sequence already written: at most acknowledged as the duplicate it is.
        assert part["error_code"] != 0 or part["base_offset"] < second.offset, part
    assert await _read_all(bootstrap, topic, 1, "read_committed") == [b"one", b"two"]


async def test_an_aborted_transaction_retried_is_read_once(
    broker: KafkaBroker | ExternalKafka,
) -> None:
    topic = _topic(broker, partitions=3)
    bootstrap = broker.bootstrap_servers
    values = [b"v-%d" % i for i in range(30)]
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=f"tx-{topic}"
    ) as producer:
        for attempt in range(3):
            await producer.begin_transaction()
            futures = [await producer.send(topic, v, partition=i % 3) for i, v in enumerate(values)]
            await asyncio.gather(*futures)
            if attempt < 2:
                await producer.abort_transaction()
            else:
                await producer.commit_transaction()
    assert await _read_all(bootstrap, topic, 3, "read_committed") == sorted(values)
    assert len(await _read_all(bootstrap, topic, 3, "read_uncommitted")) == 3 * len(values)


async def test_java_and_ferrokafka_transactions_interleave(
    broker: KafkaBroker | ExternalKafka,
) -> None:
    """Java's transactional producer and ferrokafka's write the same partition in turns; the
    Java consumer and ferrokafka's, both ``read_committed``, read the committed records only."""
    from ferrokafka.testing import resolve_kafka

    topic = _topic(broker)
    bootstrap = broker.bootstrap_servers
    java_count = 6  # the interop dataset's first six: values none of them null
    cmd = ["java", "-cp", resolve_kafka().classpath, str(JAVA_PRODUCER)]
    java = [*cmd, bootstrap, topic, "none", str(java_count), f"tx-java-{topic}"]
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=f"tx-fk-{topic}"
    ) as producer:
        async with producer.transaction():
            await producer.send(topic, b"fk-first", partition=0)
        proc = await asyncio.create_subprocess_exec(*java)
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"fk-aborted", partition=0)
        assert await asyncio.wait_for(proc.wait(), 120) == 0
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"fk-last", partition=0)
    ours = {b"fk-first", b"fk-last"}
    rows = await asyncio.to_thread(read_java, bootstrap, topic, java_count + len(ours))
    values = [value for *_, value, _ in rows]
    assert ours <= set(values) and b"fk-aborted" not in values
    assert len(values) == java_count + len(ours)
    assert await _read_all(bootstrap, topic, 1, "read_committed") == sorted(values)


async def test_the_next_transactions_first_produce_waits_out_the_last_ones_completion(
    broker: KafkaBroker | ExternalKafka, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under transaction version 2 the coordinator completes a transaction after answering
    EndTxn; a Produce of the next one reaching the leader before then waits 20 ms in the
    broker. Back-to-back transactions therefore send their first Produce no sooner than the
    EndTxn round trip (at most 10 ms) after its answer; under version 1 nothing is held."""
    topic = _topic(broker)
    sent: list[tuple[float, int]] = []
    answered: list[tuple[float, float]] = []
    real = Connection.send

    async def send(self: Connection, api: Any, body: Any, **kw: Any) -> Any:
        loop = asyncio.get_running_loop()
        asked = loop.time()
        sent.append((asked, key_of(api)))
        response = await real(self, api, body, **kw)
        if key_of(api) == Api.END_TXN.key:
            answered.append((asked, loop.time()))
        return response

    monkeypatch.setattr(Connection, "send", send)
    async with AIOKafkaProducer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=f"tx-{topic}"
    ) as producer:
        tv = await _version_of(producer)
        for i in range(20):
            async with producer.transaction():
                await producer.send(topic, b"%d" % i)
    produces = [t for t, key in sent if key == Api.PRODUCE.key]
    # Each Produce after the first commit against the last EndTxn answered before it (a
    # retried request only adds to the gap).
    gaps = []
    for t in produces:
        before = [(a, d) for a, d in answered if d < t]
        if before:
            asked, done = max(before)
            gaps.append((t - done, min(done - asked, 0.01)))
    assert len(gaps) >= 19
    txn = producer._txn
    assert txn is not None
    if tv == 2:
        # The loop's clock: a Produce sent at the hold's end may read a hair below it.
        assert all(held >= rtt - 0.0005 for held, rtt in gaps), gaps
    else:
        assert txn.produce_not_before == 0.0
