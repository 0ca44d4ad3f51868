"""Network faults between the client and one broker of a three-node cluster, through the
harness's fault proxies (``KafkaCluster(faults=True)``): a black-holed broker, a connection cut
in the middle of a response, heartbeats delayed past the session timeout, a slow link. Records
are produced over the brokers' direct listeners, so only the consumer's path is degraded; each
test counts what was consumed against what was written: nothing lost, nothing repeated."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.arrow import read_async
from ferrokafka.testing import KafkaCluster
from ferrokafka.testing.kraft import QUICK_START_JVM_OPTIONS

from ..needs import CLUSTER_START_S

pytestmark = pytest.mark.integration

PARTITIONS = 6


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    kafka = KafkaCluster(
        3, faults=True, jvm_options=QUICK_START_JVM_OPTIONS, start_timeout=CLUSTER_START_S
    )
    kafka.start()
    try:
        yield kafka
    finally:
        kafka.stop()


async def _topic(cluster: KafkaCluster, replication_factor: int | None) -> AsyncIterator[str]:
    name = f"fk-faults-{uuid.uuid4().hex[:10]}"
    await cluster.acreate_topic(name, partitions=PARTITIONS, replication_factor=replication_factor)
    try:
        yield name
    finally:
        cluster.heal()
        await cluster.adelete_topic(name)


@pytest.fixture
async def topic(cluster: KafkaCluster) -> AsyncIterator[str]:
    async for name in _topic(cluster, None):
        yield name


@pytest.fixture
async def unmoving_topic(cluster: KafkaCluster) -> AsyncIterator[str]:
    """One replica per partition: a leader cannot move. On a loaded machine a broker may miss
    its controller heartbeats and be fenced, which moves a replicated partition's leadership
    to a node the test did not silence."""
    async for name in _topic(cluster, 1):
        yield name


async def _produce(cluster: KafkaCluster, topic: str, per_partition: int, tag: str) -> None:
    """``per_partition`` records to every partition, over the direct listeners."""
    async with AIOKafkaProducer(
        bootstrap_servers=cluster.plaintext_bootstrap_servers, linger_ms=5
    ) as producer:
        futures = [
            await producer.send(topic, f"{tag}-{p}-{i}".encode(), partition=p)
            for p in range(PARTITIONS)
            for i in range(per_partition)
        ]
        await asyncio.gather(*futures)


def _leaders(consumer: AIOKafkaConsumer, topic: str) -> dict[int, int]:
    cluster = consumer._client.cluster
    leaders = {}
    for p in range(PARTITIONS):
        leader = cluster.leader_for_partition(TopicPartition(topic, p))
        assert leader is not None and leader >= 0
        leaders[p] = leader
    return leaders


class Seen:
    """Offsets consumed per partition, in order; a repeat or a gap fails at once."""

    def __init__(self) -> None:
        self.offsets: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}

    def add(self, batch: dict[TopicPartition, list[object]]) -> None:
        for tp, records in batch.items():
            got = self.offsets[tp.partition]
            for record in records:
                offset = record.offset  # type: ignore[attr-defined]
                expected = got[-1] + 1 if got else 0
                assert offset == expected, (
                    f"partition {tp.partition}: {offset} after {expected - 1}"
                )
                got.append(offset)

    def count(self, partitions: set[int] | None = None) -> int:
        return sum(len(v) for p, v in self.offsets.items() if partitions is None or p in partitions)


async def _read_until(
    consumer: AIOKafkaConsumer, seen: Seen, want: int, partitions: set[int], within_s: float
) -> None:
    deadline = time.monotonic() + within_s
    while seen.count(partitions) < want and time.monotonic() < deadline:
        seen.add(await consumer.getmany(timeout_ms=500))
    assert seen.count(partitions) == want, f"{seen.count(partitions)} of {want} in {within_s}s"


def _assigned_consumer(cluster: KafkaCluster, **options: object) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        request_timeout_ms=4000,
        fetch_max_wait_ms=200,
        retry_backoff_ms=100,
        **options,  # type: ignore[arg-type]
    )


async def test_a_black_holed_broker_is_detected_and_the_others_keep_flowing(
    cluster: KafkaCluster, topic: str
) -> None:
    await _produce(cluster, topic, 50, "a")
    consumer = _assigned_consumer(cluster)
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        seen = Seen()
        await _read_until(consumer, seen, 50 * PARTITIONS, set(range(PARTITIONS)), 30)
        leaders = _leaders(consumer, topic)
        victim = leaders[0]
        held = {p for p, node in leaders.items() if node == victim}
        others = set(range(PARTITIONS)) - held
        assert others, f"every partition is led by node {victim}: {leaders}"
        proxy = cluster.proxy(victim)
        old = consumer._client.connections.get(victim)
        accepted = proxy.accepted

        proxy.black_hole()
        await _produce(cluster, topic, 40, "b")
        # The other brokers' partitions keep flowing while the victim answers nothing.
        await _read_until(consumer, seen, 90 * len(others), others, 20)
        assert seen.count(held) == 50 * len(held)
        # The silent connection is given up at request_timeout_ms and a new one attempted.
        deadline = time.monotonic() + 15
        while proxy.accepted == accepted and time.monotonic() < deadline:
            seen.add(await consumer.getmany(timeout_ms=500))
        assert proxy.accepted > accepted, "no new connection to the black-holed broker"
        assert old is None or old.closed

        proxy.heal()
        await _read_until(consumer, seen, 90 * PARTITIONS, set(range(PARTITIONS)), 30)

        # Nothing hangs: stopping while the broker is black-holed returns.
        proxy.black_hole()
        began = time.monotonic()
        await asyncio.wait_for(consumer.stop(), 15)
        assert time.monotonic() - began < 15
    finally:
        cluster.heal()
        await consumer.stop()


async def test_a_cut_in_the_middle_of_responses_loses_and_repeats_nothing(
    cluster: KafkaCluster, topic: str
) -> None:
    per_partition = 3000
    await _produce(cluster, topic, per_partition, "c")
    # Small fetches: many responses, so that cuts land inside them.
    consumer = _assigned_consumer(cluster, max_partition_fetch_bytes=16 * 1024)
    await consumer.start()
    rng = random.Random(7)
    cuts = 0
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        seen = Seen()
        deadline = time.monotonic() + 90
        want = per_partition * PARTITIONS
        while seen.count() < want and time.monotonic() < deadline:
            # At least 5 cuts whatever the pace (a fast read once ended after 4).
            if cuts < 5 or rng.random() < 0.3:
                node = rng.choice(list(cluster.node_ids))
                cluster.proxy(node).cut(after_bytes=rng.randrange(10, 20_000))
                cuts += 1
            seen.add(await consumer.getmany(timeout_ms=500))
        assert seen.count() == want, f"{seen.count()} of {want} after {cuts} cuts"
        assert cuts >= 5
    finally:
        await consumer.stop()


async def test_a_slow_link_does_not_stall_partitions_on_other_brokers(
    cluster: KafkaCluster, topic: str
) -> None:
    consumer = _assigned_consumer(cluster)
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        await consumer.getmany(timeout_ms=500)
        leaders = _leaders(consumer, topic)
        slow = leaders[0]
        held = {p for p, node in leaders.items() if node == slow}
        others = set(range(PARTITIONS)) - held
        assert others, f"every partition is led by node {slow}: {leaders}"
        # About 4 s for the slow broker's share alone (half a second a chunk, 8 kB/s).
        cluster.proxy(slow).delay(500)
        cluster.proxy(slow).limit(8_000)
        per_partition = 300
        await _produce(cluster, topic, per_partition, "s")
        seen = Seen()
        await _read_until(consumer, seen, per_partition * len(others), others, 20)
        assert seen.count(held) < per_partition * len(held), "the slow link was not slow"
        cluster.heal()
        await _read_until(consumer, seen, per_partition * PARTITIONS, set(range(PARTITIONS)), 30)
    finally:
        cluster.heal()
        await consumer.stop()


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[TopicPartition]]] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.events.append(("revoked", frozenset(revoked)))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.events.append(("assigned", frozenset(assigned)))


async def test_an_arrow_read_whose_leader_answers_nothing_fails_after_its_poll_timeout(
    cluster: KafkaCluster, unmoving_topic: str
) -> None:
    topic = unmoving_topic
    pytest.importorskip("pyarrow")
    await _produce(cluster, topic, 30, "a")
    async with read_async(
        cluster.bootstrap_servers,
        topic,
        # Well above the request timeout: the read's first requests may wait one or two out on
        # the silent node before the other nodes' partitions flow, and more on a loaded machine.
        poll_timeout_ms=20_000,
        request_timeout_ms=3000,
        retry_backoff_ms=100,
    ) as reader:
        await reader.ranges()
        leaders = _leaders(reader._consumer, topic)
        victim = leaders[0]
        held = {p for p, node in leaders.items() if node == victim}
        cluster.proxy(victim).black_hole()
        began = time.monotonic()
        got: dict[int, int] = {}
        with pytest.raises(Errors.KafkaTimeoutError) as info:
            async for batch in reader:
                for p in batch.column("partition").to_pylist():
                    got[p] = got.get(p, 0) + 1
        waited = time.monotonic() - began
    cluster.heal()
    stuck = min(held)
    assert f"no record of {topic}-" in str(info.value) and "option poll_timeout_ms" in str(
        info.value
    )
    assert "reading [0, 30)" in str(info.value)
    # The other brokers' partitions were read whole; the silent one's, not at all.
    assert {p: n for p, n in got.items() if p not in held} == {
        p: 30 for p in range(PARTITIONS) if p not in held
    }
    assert stuck not in got
    assert 20 <= waited < 60


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_heartbeats_held_past_the_session_timeout_rejoin_with_revocation_first(
    cluster: KafkaCluster, topic: str, group_protocol: str
) -> None:
    await _produce(cluster, topic, 20, "h")
    recorder = Recorder()
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=group,
        group_protocol=group_protocol,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        request_timeout_ms=4000,
        **(
            {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}
            if group_protocol == "classic"
            else {}
        ),
    )
    consumer.subscribe([topic], listener=recorder)
    await consumer.start()
    try:
        seen = Seen()
        await _read_until(consumer, seen, 20 * PARTITIONS, set(range(PARTITIONS)), 30)
        await consumer.commit()
        coordinator = consumer._coordinator.coordinator_id  # type: ignore[attr-defined]
        assert coordinator is not None
        first = list(recorder.events)
        assert [kind for kind, _ in first] == ["assigned"]

        # The coordinator hears nothing from the member for longer than the session timeout
        # (the broker's, 10 s, for KIP-848), so it fences the member.
        cluster.proxy(coordinator).black_hole()
        await asyncio.sleep(14)
        cluster.heal()
        # The member learns it was fenced from its next heartbeat: it gives the partitions up
        # first, then joins again and gets them back (polling meanwhile, as an application
        # does; nothing new was produced, so nothing is read).
        deadline = time.monotonic() + 40
        while len(recorder.events) < 3 and time.monotonic() < deadline:
            seen.add(await consumer.getmany(timeout_ms=500))
        await _produce(cluster, topic, 10, "h2")
        await _read_until(consumer, seen, 30 * PARTITIONS, set(range(PARTITIONS)), 60)
        kinds = [kind for kind, _ in recorder.events]
        assert kinds[:3] == ["assigned", "revoked", "assigned"], recorder.events
        await consumer.commit()
        for p in range(PARTITIONS):
            committed = await consumer.committed(TopicPartition(topic, p))
            assert committed == 30, (p, committed)
    finally:
        cluster.heal()
        await consumer.stop()


async def test_share_group_members_lose_nothing_through_cut_connections(
    cluster: KafkaCluster, topic: str
) -> None:
    """Share consumers (KIP-932) through the proxies while connections are cut mid-response:
    every record is handed out, a record comes again only with a higher delivery count (its
    lock went with the cut session, or ran out), and in the end every one was accepted."""
    from ferrokafka import AIOKafkaShareConsumer

    from .share_util import configure_share_group, quiet_for

    per_partition = 2000
    group = f"share-faults-{topic}"
    await configure_share_group(
        cluster.plaintext_bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_record_lock_duration_ms="15000",
    )
    await _produce(cluster, topic, per_partition, "s")
    options = {"request_timeout_ms": 4000, "retry_backoff_ms": 100, "group_id": group}
    members = [
        AIOKafkaShareConsumer(topic, bootstrap_servers=cluster.bootstrap_servers, **options)
        for _ in range(2)
    ]
    counts: dict[tuple[int, int], list[int]] = {}
    want = per_partition * PARTITIONS
    rng = random.Random(11)
    cuts = 0

    async def work(member: AIOKafkaShareConsumer[bytes, bytes]) -> None:
        nonlocal cuts
        deadline = time.monotonic() + 120
        while len(counts) < want and time.monotonic() < deadline:
            if cuts < 5 or (cuts < 12 and rng.random() < 0.2):
                cluster.proxy(rng.choice(list(cluster.node_ids))).cut(
                    after_bytes=rng.randrange(10, 20_000)
                )
                cuts += 1
            for tp, records in (await member.getmany(timeout_ms=500, max_records=200)).items():
                for r in records:
                    assert r.value == f"s-{tp.partition}-{r.offset}".encode()
                    counts.setdefault((tp.partition, r.offset), []).append(r.delivery_count or 0)

    try:
        await asyncio.gather(*(m.start() for m in members))
        await asyncio.gather(*(work(m) for m in members))
    finally:
        await asyncio.gather(*(m.stop() for m in members))
    assert len(counts) == want, f"{len(counts)} of {want} records after {cuts} cuts"
    assert cuts >= 5
    for key, deliveries in counts.items():
        assert deliveries == sorted(set(deliveries)), (key, deliveries)  # again: a higher count
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=cluster.plaintext_bootstrap_servers, group_id=group
    ) as late:
        assert await quiet_for(late, 3) == []
