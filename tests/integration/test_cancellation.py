"""A cancelled call costs only itself (issue 35), against the real broker: services cancel calls
all the time (``asyncio.wait_for`` around a send in a request handler, a task group shutting
down). The two reported cases (sends to new topics cancelled while their metadata is looked up;
commits cancelled as they start), then every public coroutine of the consumer, producer and
admin client cancelled at random points: each time the client goes on working, loses and
duplicates nothing it acknowledged, and stops at once. The timeouts here only detect a hang;
the loops are seeded, so a failure replays."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pyarrow as pa
import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient, OffsetSpec
from ferrokafka.metrics import MetricName

from .cancel_util import STOP_WITHIN, Canceller
from .produce_util import produce_values, value_of

pytestmark = [pytest.mark.integration, pytest.mark.core]


def _connections_made(metrics: dict[MetricName, float]) -> float:
    return max(v for n, v in metrics.items() if n.name == "connection-creation-total")


async def _read_values(bootstrap_servers: str, topic: str, partitions: int) -> list[bytes]:
    """Every value in ``topic`` (from the start to the end offsets at the time of the call)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    out: list[bytes] = []
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + 20
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            assert time.monotonic() < deadline, "the topic could not be read back"
            for records in (await consumer.getmany(timeout_ms=500)).values():
                out.extend(r.value for r in records)
    return out


# ---- the reported cases ----------------------------------------------------------------------


async def test_sends_to_new_topics_cancelled_in_their_metadata_wait_cost_only_themselves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """Four coroutines send_and_wait with an idempotent producer while a fifth sends to topics
    that do not exist, each send cancelled within 5 ms, mostly while its Metadata request is in
    flight on the connection the records go over. The cancelled lookups used to close that
    connection (and cancel the others' shared lookups and connection attempts, the sender's
    requests among them): an uncancelled send_and_wait then never completed, nor did stop()."""
    topic = make_topic(partitions=3)
    cancel = Canceller()
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, enable_idempotence=True, request_timeout_ms=10000
    )
    await producer.start()
    sent: list[bytes] = []
    cancelled = 0
    running = True

    async def worker(w: int) -> None:
        # At least 150 records each, and on until the canceller has had enough turns: by
        # count, not time (how many fit in a time depends on the machine and the producer).
        i = 0
        while i < 150 or (cancelled <= 60 and not cancelling.done()):
            value = b"w%d-%04d" % (w, i)
            await asyncio.wait_for(producer.send_and_wait(topic, value), 15)
            sent.append(value)
            i += 1

    async def canceller() -> None:
        nonlocal cancelled
        while running:
            missing = f"fk-missing-{uuid.uuid4().hex[:12]}"
            outcome = await cancel.run(producer.send_and_wait(missing, b"x"), 0.005)
            assert isinstance(outcome, asyncio.CancelledError), outcome
            cancelled += 1

    try:
        cancelling = asyncio.ensure_future(canceller())
        await asyncio.gather(*(worker(w) for w in range(4)))
        running = False
        await cancelling
        assert cancelled > 50
        made = _connections_made(producer.metrics())
        assert made <= 3, f"{made} connections for {cancelled} cancelled sends"
        await asyncio.wait_for(producer.send_and_wait(topic, b"after"), 15)
    finally:
        running = False
        await asyncio.wait_for(producer.stop(), STOP_WITHIN)
    values = await _read_values(bootstrap_servers, topic, 3)
    assert Counter(values) == Counter([*sent, b"after"])


async def test_commits_cancelled_as_they_start_keep_the_member_in_its_group(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """commit() cancelled 0-3 ms after it starts, 50 times. Each cancelled commit's answer
    closed the coordinator connection, failing the heartbeat in flight on it, and a cancelled
    coordinator lookup or connection attempt cancelled the heartbeat task itself: the member
    stopped heartbeating and was dropped from the group, and after the session timeout a plain
    commit() raised CommitFailedError."""
    topic = make_topic(partitions=1)
    await produce_values(bootstrap_servers, topic, 1, 50)
    cancel = Canceller()
    session_ms = 2000
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=f"g-{topic}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        heartbeat_interval_ms=100,
        session_timeout_ms=session_ms,
    )
    await consumer.start()
    try:
        got = 0
        deadline = time.monotonic() + 15
        while got < 50:
            assert time.monotonic() < deadline, f"read {got} of 50 records"
            got += sum(len(r) for r in (await consumer.getmany(timeout_ms=500)).values())
        made = _connections_made(consumer.metrics())
        # Until 50 were cancelled (a count, not a time: on a loaded machine fewer fit in any
        # given time, and more of them end before their cancellation).
        cancelled = 0
        deadline = time.monotonic() + 60
        while cancelled <= 50:
            assert time.monotonic() < deadline, f"{cancelled} commits cancelled in 60 s"
            outcome = await cancel.run(consumer.commit(), 0.003)
            cancelled += isinstance(outcome, asyncio.CancelledError)
        # Longer than the session: a member that stopped heartbeating is gone by then.
        until = time.monotonic() + session_ms / 1000 + 1
        while time.monotonic() < until:
            await consumer.getmany(timeout_ms=200)
        await asyncio.wait_for(consumer.commit(), 10)
        tp = TopicPartition(topic, 0)
        assert await consumer.committed(tp) == 50
        assert consumer.assignment() == {tp}
        new = _connections_made(consumer.metrics()) - made
        assert new == 0, f"{new} new connections for {cancelled} cancelled commits"
    finally:
        await asyncio.wait_for(consumer.stop(), 5)


# ---- every public coroutine, cancelled at random points --------------------------------------


async def test_producer_calls_cancelled_at_random_points_cost_only_themselves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """send, send_and_wait, send_arrow (and the wait for its result) and flush, each cancelled
    at a random point. Records whose futures completed are each in the topic exactly once
    (idempotence: nothing is written twice at all), the producer still sends, and stop()
    returns at once."""
    topic = make_topic(partitions=3)
    cancel = Canceller()
    rng = cancel.rng
    acked: list[bytes] = []
    futures: list[tuple[bytes, Any]] = []
    counter = 0

    def value() -> bytes:
        nonlocal counter
        counter += 1
        return b"r%06d" % counter

    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, enable_idempotence=True, linger_ms=2
    )
    await producer.start()

    async def send() -> None:
        v = value()
        outcome = await cancel.run(producer.send(topic, v, key=v[-2:]), 0.002)
        if not isinstance(outcome, asyncio.CancelledError):
            futures.append((v, outcome))

    async def send_and_wait() -> None:
        v = value()
        outcome = await cancel.run(producer.send_and_wait(topic, v), 0.01)
        if not isinstance(outcome, asyncio.CancelledError):
            acked.append(v)

    async def send_arrow() -> None:
        rows = [value() for _ in range(rng.randrange(1, 20))]
        data = pa.record_batch({"value": pa.array(rows, pa.binary())})
        outcome = await cancel.run(producer.send_arrow(topic, data), 0.002)
        if isinstance(outcome, asyncio.CancelledError):
            return
        results = await cancel.run(asyncio.shield(outcome), 0.01)
        if rng.random() < 0.5:
            results = await cancel.run(outcome, 0.01)
        if isinstance(results, list):
            assert sum(r.record_count for r in results) == len(rows)
            acked.extend(rows)

    async def flush() -> None:
        await cancel.run(producer.flush(), 0.01)

    calls: list[Callable[[], Awaitable[None]]] = [send, send_and_wait, send_arrow, flush]
    try:
        await cancel.exercise(calls, rounds=400, least=50)
        await asyncio.wait_for(producer.send_and_wait(topic, b"after"), 15)
        acked.append(b"after")
        await asyncio.wait_for(producer.flush(), 15)
        for v, future in futures:
            if future.done() and not future.cancelled() and future.exception() is None:
                acked.append(v)
        made = _connections_made(producer.metrics())
        assert made <= 3, f"{made} connections"  # bootstrap and the broker (one to spare)
    finally:
        await asyncio.wait_for(producer.stop(), STOP_WITHIN)
    assert len(acked) > 100
    counts = Counter(await _read_values(bootstrap_servers, topic, 3))
    assert [v for v in acked if counts[v] != 1] == []
    assert [v for v, n in counts.items() if n > 1] == []


async def test_consumer_calls_cancelled_at_random_points_cost_only_themselves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """getmany, getone, poll (also without updating offsets), commit, committed,
    seek_to_beginning, seek_to_end, position and end_offsets, each cancelled at a random point:
    the records handed out follow each other with no gap and no repeat (but after a seek, and
    what a poll without updating offsets returned, which comes again), and afterwards the
    consumer reads the whole topic, commits, and stops at once."""
    topic = make_topic(partitions=2)
    per_partition = 2000
    await produce_values(bootstrap_servers, topic, 2, per_partition)
    tps = [TopicPartition(topic, p) for p in range(2)]
    cancel = Canceller()
    rng = cancel.rng
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=f"g-{topic}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_poll_records=50,
    )
    await consumer.start()
    consumer.assign(tps)
    next_offset: dict[TopicPartition, int | None] = dict.fromkeys(tps)
    """The offset the next record of each partition must have (None: unknown after a seek)."""
    handed_out = 0

    def check(tp: TopicPartition, offsets: list[int]) -> None:
        nonlocal handed_out
        expected = next_offset[tp]
        start = offsets[0] if expected is None else expected
        assert offsets == list(range(start, start + len(offsets))), (tp, expected, offsets[:5])
        next_offset[tp] = offsets[-1] + 1
        handed_out += len(offsets)

    async def getmany() -> None:
        batch = await cancel.run(consumer.getmany(timeout_ms=rng.randrange(0, 20)), 0.01)
        if isinstance(batch, dict):
            for tp, records in batch.items():
                check(tp, [r.offset for r in records])

    async def poll() -> None:
        batch = await cancel.run(consumer.poll(timeout_ms=rng.randrange(0, 20)), 0.01)
        if isinstance(batch, dict):
            for tp, records in batch.items():
                check(tp, [r.offset for r in records])

    async def peek() -> None:
        call = consumer.poll(timeout_ms=rng.randrange(0, 20), update_offsets=False)
        batch = await cancel.run(call, 0.01)
        if isinstance(batch, dict):
            for tp, records in batch.items():
                offsets = [r.offset for r in records]
                start = offsets[0] if next_offset[tp] is None else next_offset[tp]
                assert offsets == list(range(start, start + len(offsets))), (tp, start, offsets)

    async def getone() -> None:
        record = await cancel.run(consumer.getone(), 0.01)
        if not isinstance(record, asyncio.CancelledError):
            check(TopicPartition(record.topic, record.partition), [record.offset])

    async def commit() -> None:
        await cancel.run(consumer.commit(), 0.005)

    async def committed() -> None:
        await cancel.run(consumer.committed(rng.choice(tps)), 0.005)

    async def seek(reset: Callable[..., Awaitable[None]]) -> None:
        tp = rng.choice(tps)
        # The reset is requested when the call starts; it completes whether or not the wait
        # for the new position is cancelled.
        next_offset[tp] = None
        await cancel.run(reset(tp), 0.005)

    async def seek_to_beginning() -> None:
        await seek(consumer.seek_to_beginning)

    async def seek_to_end() -> None:
        await seek(consumer.seek_to_end)

    async def position() -> None:
        tp = rng.choice(tps)
        found = await cancel.run(consumer.position(tp), 0.005)
        if isinstance(found, int) and next_offset[tp] is not None:
            assert found == next_offset[tp]

    async def end_offsets() -> None:
        ends = await cancel.run(consumer.end_offsets(tps), 0.005)
        if isinstance(ends, dict):
            assert ends == dict.fromkeys(tps, per_partition)

    calls: list[Callable[[], Awaitable[None]]] = [
        getmany,
        getmany,
        poll,
        peek,
        getone,
        commit,
        committed,
        seek_to_beginning,
        seek_to_end,
        position,
        end_offsets,
    ]
    try:
        await cancel.exercise(calls, rounds=500, least=50)
        assert handed_out > 0
        await asyncio.wait_for(consumer.seek_to_beginning(), 10)
        values: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(values) < 2 * per_partition:
            assert time.monotonic() < deadline, f"read {len(values)} records"
            batch = await consumer.getmany(timeout_ms=500, max_records=1000)
            values.extend(r.value for records in batch.values() for r in records)
        everything = [value_of(p, i) for p in range(2) for i in range(per_partition)]
        assert sorted(values) == sorted(everything)
        await asyncio.wait_for(consumer.commit(), 10)
        assert await consumer.committed(tps[0]) == per_partition
        made = _connections_made(consumer.metrics())
        assert made <= 3, f"{made} connections"  # bootstrap, the broker, the coordinator
    finally:
        await asyncio.wait_for(consumer.stop(), STOP_WITHIN)


async def test_admin_calls_cancelled_at_random_points_cost_only_themselves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    cancel = Canceller()
    rng = cancel.rng
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers)
    await admin.start()
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: admin.describe_topics([topic]),
        admin.list_topics,
        admin.describe_cluster,
        admin.list_consumer_groups,
        # Java's Admin calls: to each leader, to every broker, to any broker.
        lambda: admin.list_offsets(dict.fromkeys(tps, OffsetSpec.latest())),
        lambda: admin.describe_producers(tps),
        admin.describe_log_dirs,
        admin.list_transactions,
        admin.describe_cluster_result,
        admin.describe_features,
        admin.describe_client_quotas,
        admin.list_partition_reassignments,
    ]

    async def one_call() -> None:
        assert await cancel.run(rng.choice(calls)(), 0.005) is not None

    try:
        await cancel.exercise([one_call], rounds=200, least=20)
        (described,) = await asyncio.wait_for(admin.describe_topics([topic]), 10)
        assert len(described["partitions"]) == 2
        assert topic in await asyncio.wait_for(admin.list_topics(), 10)
        made = _connections_made(admin.metrics())
        assert made <= 3, f"{made} connections for 200 calls"
    finally:
        await asyncio.wait_for(admin.close(), STOP_WITHIN)
