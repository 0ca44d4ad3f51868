"""aiokafka consumer code with only its import changed: starting, stopping, subscribing by name
and by pattern without a group, poll-interval expiry, argument errors and resource warnings.

Where aiokafka is the reference, each scenario is one script on aiokafka's API, run with
aiokafka and with ferrokafka against the same broker: the transcripts must be identical.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, NewTopic
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaBroker

from .group_util import FAST
from .produce_util import produce_values

pytestmark = pytest.mark.integration

PACKAGES = ["aiokafka", "ferrokafka"]


def _name(what: str) -> str:
    return f"fk-dropin-{what}-{uuid.uuid4().hex[:10]}"


async def _create(bootstrap: str, *topics: str, partitions: int = 1) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(t, partitions, 1) for t in topics])
        for t in topics:
            await admin.wait_for_topic(t, partitions=partitions, timeout=30)


async def _delete(bootstrap: str, *topics: str) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.delete_topics(list(topics))


async def _both(scenario: Any, *args: Any) -> None:
    """Run ``scenario(package, *args)`` with aiokafka, then ferrokafka: same transcript."""
    theirs = await scenario("aiokafka", *args)
    ours = await scenario("ferrokafka", *args)
    assert ours == theirs, f"aiokafka {theirs!r} != ferrokafka {ours!r}"


# -- stop() -------------------------------------------------------------------------------------


async def stop_after_unsubscribe(package: str, bootstrap: str, topic: str) -> list[Any]:
    kafka = importlib.import_module(package)
    out: list[Any] = []
    for _ in range(3):
        consumer = kafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=_name("g"), **FAST)
        await consumer.start()
        consumer.subscribe([topic])
        await asyncio.sleep(0.5)
        consumer.unsubscribe()
        started = time.monotonic()
        stopping = asyncio.ensure_future(consumer.stop())
        done, _ = await asyncio.wait({stopping}, timeout=15)
        out.append(("stopped within 15 s", bool(done)))
        if not done:  # leave nothing running: cancel, then let it go
            stopping.cancel()
            await asyncio.wait({stopping}, timeout=5)
        elif time.monotonic() - started > 5:
            out.append(("slow stop", round(time.monotonic() - started)))
    return out


async def test_stop_after_unsubscribe_returns_at_once(bootstrap_servers: str, topic: str) -> None:
    # The group task was woken (unsubscribe) and cancelled (stop) in one tick; on Python 3.10
    # and 3.11 its wait lost the cancellation and stop() never returned.
    await _both(stop_after_unsubscribe, bootstrap_servers, topic)


async def stopping_script(package: str, bootstrap: str, topic: str) -> list[Any]:
    kafka = importlib.import_module(package)
    errors = importlib.import_module(f"{package}.errors")
    tp = kafka.TopicPartition(topic, 0)
    out: list[Any] = []
    polling = kafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    iterating = kafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    for consumer in (polling, iterating):
        await consumer.start()
        consumer.assign([tp])

    async def iterate() -> str:
        async for _ in iterating:
            return "got a record"
        return "ended quietly"

    pending = asyncio.ensure_future(polling.getmany(timeout_ms=20000))
    loop_task = asyncio.ensure_future(iterate())
    await asyncio.sleep(0.5)
    await polling.stop()
    await iterating.stop()
    out.append(("pending getmany", await asyncio.wait_for(pending, 10)))
    out.append(("async for", await asyncio.wait_for(loop_task, 10)))
    for name, call in (
        ("getmany", lambda: polling.getmany(timeout_ms=100)),
        ("getone", lambda: polling.getone()),
    ):
        try:
            await call()
            out.append((name, "returned"))
        except errors.ConsumerStoppedError:
            out.append((name, "ConsumerStoppedError"))
    try:
        async for _ in polling:
            break
        out.append(("new async for", "ran"))
    except errors.ConsumerStoppedError:
        out.append(("new async for", "ConsumerStoppedError"))
    return out


async def test_stopping_while_polling_as_aiokafka(bootstrap_servers: str, topic: str) -> None:
    await _both(stopping_script, bootstrap_servers, topic)
    ours = await stopping_script("ferrokafka", bootstrap_servers, topic)
    assert ours == [
        ("pending getmany", {}),
        ("async for", "ended quietly"),
        ("getmany", "ConsumerStoppedError"),
        ("getone", "ConsumerStoppedError"),
        ("new async for", "ConsumerStoppedError"),
    ]


# -- start() with a group -----------------------------------------------------------------------


async def start_script(package: str, bootstrap: str, topic: str) -> list[Any]:
    kafka = importlib.import_module(package)
    out: list[Any] = []
    consumer = kafka.AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=_name("g"), **FAST
    )
    await consumer.start()
    try:
        # Right after start(): the assignment is there, and seeks and partition polls work.
        assignment = sorted(consumer.assignment())
        out.append(("assignment", [(tp.topic, tp.partition) for tp in assignment]))
        await consumer.seek_to_end()
        out.append(("end", [await consumer.position(tp) for tp in assignment]))
        await consumer.seek_to_beginning(*assignment)
        got = await consumer.getmany(assignment[0], timeout_ms=10000)
        out.append(("first poll", sorted((tp.partition, len(rs)) for tp, rs in got.items())))
    finally:
        await consumer.stop()
    return out


async def test_start_returns_once_the_group_assigned_partitions(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 5)
    await _both(start_script, bootstrap_servers, topic)


async def resubscribe_script(package: str, bootstrap: str, topic: str, when: str) -> list[Any]:
    """``subscribe()`` again after ``start()``, same topics and a new listener whose callbacks
    await: the group rebalances, and the new listener hears of it. ``when``: once the first
    listener's ``on_partitions_assigned`` returned, or while it is still awaiting."""
    kafka = importlib.import_module(package)
    abc = importlib.import_module(f"{package}.abc")

    class Listener(abc.ConsumerRebalanceListener):  # type: ignore[misc,name-defined]
        def __init__(self, early: bool = False) -> None:
            self.events: list[Any] = []
            self.assigned = asyncio.Event()
            self.early = early

        async def on_partitions_revoked(self, revoked: Any) -> None:
            await asyncio.sleep(0.2)
            if revoked:  # (aiokafka also tells of an empty revocation before a first join)
                self.events.append(("revoked", sorted(tp.partition for tp in revoked)))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            if self.early:
                self.assigned.set()
            await asyncio.sleep(0.5)
            self.events.append(("assigned", sorted(tp.partition for tp in assigned)))
            self.assigned.set()

    consumer = kafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=_name("g"), **FAST)
    await consumer.start()
    first, second = Listener(early=when == "during the callback"), Listener()
    try:
        consumer.subscribe([topic], listener=first)
        await asyncio.wait_for(first.assigned.wait(), 30)
        if when == "after the callback":
            got = await consumer.getmany(timeout_ms=10000)
            assert sum(len(rs) for rs in got.values()) > 0
        consumer.subscribe([topic], listener=second)
        await asyncio.wait_for(second.assigned.wait(), 30)
        assignment = sorted(tp.partition for tp in consumer.assignment())
        # Both listeners' events so far (ferrokafka also revokes on stop, as Java does).
        out = [("first", list(first.events)), ("second", list(second.events))]
    finally:
        await consumer.stop()
    return [*out, ("assignment", assignment)]


@pytest.mark.parametrize("when", ["after the callback", "during the callback"])
async def test_subscribing_again_rejoins_and_tells_the_new_listener(
    bootstrap_servers: str, make_topic: Any, when: str
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 5)
    if when == "after the callback":
        await _both(resubscribe_script, bootstrap_servers, topic, when)
    # (During the callback, aiokafka drops the first assignment without telling the new
    # listener of its revocation; ferrokafka revokes what it assigned, as in the other case.)
    ours = await resubscribe_script("ferrokafka", bootstrap_servers, topic, when)
    assert ours == [
        ("first", [("assigned", [0, 1])]),
        ("second", [("revoked", [0, 1]), ("assigned", [0, 1])]),
        ("assignment", [0, 1]),
    ]


async def pattern_group_script(package: str, bootstrap: str, topic: str, when: str) -> list[Any]:
    """A group member subscribed by pattern, without auto-commit, reading every record of a
    two-partition topic once with ``getone()`` after ``seek_to_committed()``."""
    kafka = importlib.import_module(package)
    abc = importlib.import_module(f"{package}.abc")
    out: list[Any] = []

    class Listener(abc.ConsumerRebalanceListener):  # type: ignore[misc,name-defined]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            if revoked:  # (aiokafka also tells of an empty revocation before a first join)
                out.append(("revoked", sorted(tp.partition for tp in revoked)))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            out.append(("assigned", sorted(tp.partition for tp in assigned)))

    consumer = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=_name("g"), enable_auto_commit=False, **FAST
    )
    pattern = re.escape(topic) + "$"
    if when == "before start()":
        consumer.subscribe(pattern=pattern, listener=Listener())
    await consumer.start()
    try:
        if when == "after start()":
            consumer.subscribe(pattern=pattern, listener=Listener())
            for _ in range(300):
                if consumer.assignment():
                    break
                await asyncio.sleep(0.1)
        out.append(("assignment", sorted(tp.partition for tp in consumer.assignment())))
        committed = await consumer.seek_to_committed()
        out.append(("seek_to_committed", sorted((tp.partition, o) for tp, o in committed.items())))
        got = [await asyncio.wait_for(consumer.getone(), 30) for _ in range(20)]
        out.append(("read", sorted((r.partition, r.offset) for r in got)))
        extra = await consumer.getmany(timeout_ms=1000)
        out.append(("more", sorted((tp.partition, len(rs)) for tp, rs in extra.items())))
    finally:
        out.append(("stopping",))
        await consumer.stop()
    return out[: out.index(("stopping",))]  # (ferrokafka also revokes on stop, as Java does)


@pytest.mark.parametrize("when", ["before start()", "after start()"])
async def test_a_pattern_subscription_reads_each_record_once(
    bootstrap_servers: str, make_topic: Any, when: str
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 10)
    await _both(pattern_group_script, bootstrap_servers, topic, when)
    ours = await pattern_group_script("ferrokafka", bootstrap_servers, topic, when)
    assert ours == [
        ("assigned", [0, 1]),  # one rebalance, with the topic the pattern matches
        ("assignment", [0, 1]),
        ("seek_to_committed", [(0, None), (1, None)]),
        ("read", [(p, o) for p in range(2) for o in range(10)]),
        ("more", []),
    ]


async def test_start_raises_a_join_error_that_cannot_be_retried(
    bootstrap_servers: str, topic: str
) -> None:
    # Below the broker's group.min.session.timeout.ms (1 s in the test broker).
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=_name("g"),
        session_timeout_ms=500,
        heartbeat_interval_ms=100,
    )
    with pytest.raises(Errors.InvalidSessionTimeoutError):
        await asyncio.wait_for(consumer.start(), 30)
    # start() stopped what it had started.
    with pytest.raises(Errors.ConsumerStoppedError):
        await consumer.getmany()


# -- max_poll_interval_ms -----------------------------------------------------------------------


async def poll_interval_script(package: str, bootstrap: str, topic: str, **extra: Any) -> list[Any]:
    kafka = importlib.import_module(package)
    group = _name("g")
    config = {**FAST, "enable_auto_commit": False, **extra}
    c1 = kafka.AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=group, max_poll_interval_ms=3000, **config
    )
    c2 = kafka.AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, **config)
    out: list[Any] = []
    await c1.start()
    await c2.start()
    try:
        # c1 prefetches its partition and does not poll; c2 reads everything once c1 left.
        seen: set[tuple[int, int]] = set()
        deadline = time.monotonic() + 60
        while len(seen) < 20 and time.monotonic() < deadline:
            for records in (await c2.getmany(timeout_ms=500)).values():
                seen.update((r.partition, r.offset) for r in records)
        out.append(("c2 read", len(seen)))
        await c2.commit()
        await produce_values(bootstrap, topic, 2, 10)
        # c1 polls again: it must rejoin first, and hand out only what it owns now.
        got = [await asyncio.wait_for(c1.getone(), 30) for _ in range(5)]
        out.append(("c1 got records already read by c2", [r.offset for r in got if r.offset < 10]))
        out.append(("c1 got new records", all(r.offset >= 10 for r in got)))
    finally:
        await c1.stop()
        await c2.stop()
    return out


async def test_after_a_poll_timeout_no_buffered_record_is_handed_out(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 10)
    ours = await poll_interval_script("ferrokafka", bootstrap_servers, topic)
    assert ours == [
        ("c2 read", 20),
        ("c1 got records already read by c2", []),
        ("c1 got new records", True),
    ]
    other = make_topic(partitions=2)
    await produce_values(bootstrap_servers, other, 2, 10)
    assert await poll_interval_script("aiokafka", bootstrap_servers, other) == ours
    # The same under the KIP-848 protocol (beyond aiokafka).
    kip848 = make_topic(partitions=2)
    await produce_values(bootstrap_servers, kip848, 2, 10)
    assert (
        await poll_interval_script(
            "ferrokafka", bootstrap_servers, kip848, group_protocol="consumer"
        )
        == ours
    )


# -- subscriptions without a group --------------------------------------------------------------


async def groupless_script(package: str, bootstrap: str, prefix: str) -> list[Any]:
    """Subscribe by name and by pattern to topics that do not exist yet, then create them."""
    kafka = importlib.import_module(package)
    out: list[Any] = []
    named, matched, longer, other = (
        f"{prefix}-named",
        f"{prefix}-p",
        f"{prefix}-p-longer",
        f"{prefix}-other",
    )
    by_name = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", metadata_max_age_ms=1000
    )
    by_pattern = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", metadata_max_age_ms=1000
    )
    await by_name.start()
    await by_pattern.start()
    try:
        by_name.subscribe([named])
        # re.match, as aiokafka: matches "-p" and "-p-longer", not "-other".
        by_pattern.subscribe(pattern=f"{prefix}-p")
        await asyncio.sleep(1)
        out.append(("before", sorted(by_name.assignment()), sorted(by_pattern.assignment())))
        await _create(bootstrap, named, matched, longer, other, partitions=2)
        producer = kafka.AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for t in (named, matched, longer, other):
                await producer.send_and_wait(t, t.encode(), partition=1)
        finally:
            await producer.stop()
        record = await asyncio.wait_for(by_name.getone(), 30)
        out.append(("by name", record.topic, record.partition, record.value))
        values = set()
        while len(values) < 2:
            record = await asyncio.wait_for(by_pattern.getone(), 30)
            values.add(record.value)
        out.append(("by pattern", sorted(values)))
        out.append(
            (
                "pattern assignment",
                sorted((tp.topic, tp.partition) for tp in by_pattern.assignment()),
            )
        )
        out.append(("pattern subscription", sorted(by_pattern.subscription())))
    finally:
        await by_name.stop()
        await by_pattern.stop()
        await _delete(bootstrap, named, matched, longer, other)
    return out


@pytest.mark.parametrize("package", PACKAGES)
async def test_groupless_subscriptions_follow_the_metadata(
    package: str, bootstrap_servers: str
) -> None:
    prefix = _name("gl")
    out = await groupless_script(package, bootstrap_servers, prefix)
    named, matched, longer = f"{prefix}-named", f"{prefix}-p", f"{prefix}-p-longer"
    assert out == [
        ("before", [], []),
        ("by name", named, 1, named.encode()),
        ("by pattern", sorted([matched.encode(), longer.encode()])),
        (
            "pattern assignment",
            [(matched, 0), (matched, 1), (longer, 0), (longer, 1)],
        ),
        ("pattern subscription", [matched, longer]),
    ]


@pytest.mark.parametrize("subscribed", ["before start()", "after start()"])
async def test_groupless_subscription_sees_a_new_topic_without_waiting_for_max_age(
    bootstrap_servers: str, subscribed: str
) -> None:
    # Default metadata_max_age_ms (5 min): a subscribed topic missing from the metadata is
    # looked up again after retry_backoff_ms, doubling to 1 s. Subscribed before start(), the
    # missing topic does not fail start() (aiokafka's raises after request_timeout_ms).
    topic = _name("late")
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    )
    if subscribed == "before start()":
        consumer.subscribe([topic])
    await asyncio.wait_for(consumer.start(), 10)
    try:
        if subscribed == "after start()":
            consumer.subscribe([topic])
        await asyncio.sleep(0.5)
        assert consumer.assignment() == set()
        await _create(bootstrap_servers, topic)
        await produce_values(bootstrap_servers, topic, 1, 1)
        record = await asyncio.wait_for(consumer.getone(), 15)
        assert (record.topic, record.offset) == (topic, 0)
        assert consumer.assignment() == {TopicPartition(topic, 0)}
    finally:
        await consumer.stop()
        await _delete(bootstrap_servers, topic)


# -- topic auto-creation ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def auto_create_broker() -> Iterator[str]:
    """A broker that creates topics on first use, as a default Kafka broker does."""
    broker = KafkaBroker(
        jvm_options=QUICK_START_JVM_OPTIONS,
        config={"auto.create.topics.enable": "true", "log.retention.ms": "-1"},
    )
    broker.start()
    try:
        yield broker.bootstrap_servers
    finally:
        broker.stop()


async def auto_create_script(package: str, bootstrap: str) -> list[Any]:
    kafka = importlib.import_module(package)
    out: list[Any] = []
    consumed, produced = _name("consumed"), _name("produced")
    consumer = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", metadata_max_age_ms=1000
    )
    await consumer.start()
    try:
        consumer.subscribe([consumed])
        # Waiting on a topic the consumer's own metadata requests create.
        record = None
        producer = kafka.AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for _ in range(100):
                if consumer.assignment():
                    break
                await asyncio.sleep(0.1)
            out.append(("subscribed topic created", sorted(p for _, p in consumer.assignment())))
            await producer.send_and_wait(consumed, b"to the subscribed topic")
            record = await asyncio.wait_for(consumer.getone(), 30)
            out.append(("read", record.value))
            # A producer's send creates its topic too.
            meta = await producer.send_and_wait(produced, b"x")
            out.append(("produced to a new topic", meta.topic == produced, meta.offset))
        finally:
            await producer.stop()
    finally:
        await consumer.stop()
    return out


async def test_metadata_requests_let_the_broker_create_topics(auto_create_broker: str) -> None:
    await _both(auto_create_script, auto_create_broker)


async def start_creates_topic_script(package: str, bootstrap: str, group: bool) -> list[Any]:
    """Subscribed before ``start()`` to a topic that does not exist yet."""
    kafka = importlib.import_module(package)
    errors = importlib.import_module(f"{package}.errors")
    out: list[Any] = []
    topic = _name("start-creates")
    options = {"group_id": _name("g"), **FAST} if group else {}
    consumer = kafka.AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, **options)
    await consumer.start()
    try:
        # start() had the broker create the topic, and assigned its partition.
        assignment = sorted(consumer.assignment())
        out.append(("assignment", [(tp.topic == topic, tp.partition) for tp in assignment]))
        tp = kafka.TopicPartition(topic, 0)
        out.append(("position", await asyncio.wait_for(consumer.position(tp), 10)))
        try:
            await consumer.commit()
            out.append(("commit", "ok"))
        except errors.IllegalOperation:
            out.append(("commit", "IllegalOperation"))
    finally:
        await consumer.stop()
    return out


@pytest.mark.parametrize("group", [False, True], ids=["without a group", "with a group"])
async def test_start_has_a_subscribed_topic_created(auto_create_broker: str, group: bool) -> None:
    await _both(start_creates_topic_script, auto_create_broker, group)
    ours = await start_creates_topic_script("ferrokafka", auto_create_broker, group)
    assert ours == [
        ("assignment", [(True, 0)]),
        ("position", 0),
        ("commit", "ok" if group else "IllegalOperation"),
    ]


async def test_allow_auto_create_topics_false_creates_nothing(auto_create_broker: str) -> None:
    topic = _name("not-created")
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=auto_create_broker, allow_auto_create_topics=False
    )
    await consumer.start()
    try:
        consumer.subscribe([topic])
        await asyncio.sleep(1.5)  # several metadata requests for the missing topic
        assert consumer.assignment() == set()
        assert topic not in await consumer.topics()
    finally:
        await consumer.stop()
    with pytest.raises(ValueError, match="allow_auto_create_topics"):
        AIOKafkaConsumer(allow_auto_create_topics="yes")  # type: ignore[arg-type]


# -- argument errors ----------------------------------------------------------------------------


async def argument_errors_script(package: str, bootstrap: str, topic: str) -> list[Any]:
    kafka = importlib.import_module(package)
    abc = importlib.import_module(f"{package}.abc")
    out: list[Any] = []

    class Listener(abc.ConsumerRebalanceListener):  # type: ignore[misc,name-defined]
        def on_partitions_revoked(self, revoked: Any) -> None:
            pass

        def on_partitions_assigned(self, assigned: Any) -> None:
            pass

    def outcome(call: Any) -> str:
        try:
            call()
        except Exception as exc:
            return type(exc).__name__
        return "ok"

    async def async_outcome(call: Any) -> str:
        try:
            await call()
        except Exception as exc:
            return type(exc).__name__
        return "ok"

    consumer = kafka.AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        sync_calls = [
            ("both", lambda: consumer.subscribe([topic], pattern="x")),
            ("neither", lambda: consumer.subscribe()),
            ("a string", lambda: consumer.subscribe(topic)),
            ("listener", lambda: consumer.subscribe([topic], listener=object())),
            ("bad pattern", lambda: consumer.subscribe(pattern="(unclosed")),
            ("good listener", lambda: consumer.subscribe([topic], listener=Listener())),
        ]
        out.extend((name, outcome(call)) for name, call in sync_calls)
        consumer.unsubscribe()
        assigned, other = kafka.TopicPartition(topic, 0), kafka.TopicPartition(topic, 5)
        consumer.assign([assigned])
        out.append(("seek unassigned", outcome(lambda: consumer.seek(other, 1))))
        async_calls = [
            ("seek_to_beginning unassigned", lambda: consumer.seek_to_beginning(other)),
            ("seek_to_committed unassigned", lambda: consumer.seek_to_committed(other)),
            ("seek_to_committed without group", lambda: consumer.seek_to_committed(assigned)),
            ("commit without group", lambda: consumer.commit()),
        ]
        for name, call in async_calls:
            out.append((name, await async_outcome(call)))
    finally:
        # aiokafka 0.14's group-less stop() raises CancelledError (and leaves its sockets open)
        # when it comes within moments of an assign(): give its background task time to run.
        await asyncio.sleep(0.5)
        await consumer.stop()
    return out


async def test_argument_errors_have_aiokafkas_types(bootstrap_servers: str, topic: str) -> None:
    await _both(argument_errors_script, bootstrap_servers, topic)
    ours = await argument_errors_script("ferrokafka", bootstrap_servers, topic)
    assert dict((k, v) for k, v in ours) == {
        "both": "TypeError",
        "neither": "TypeError",
        "a string": "TypeError",
        "listener": "TypeError",
        "bad pattern": "ValueError",
        "good listener": "ok",
        "seek unassigned": "IllegalStateError",
        "seek_to_beginning unassigned": "IllegalStateError",
        "seek_to_committed unassigned": "IllegalStateError",
        "seek_to_committed without group": "IllegalOperation",
        "commit without group": "IllegalOperation",
    }


# -- resource warnings and the loop argument ----------------------------------------------------


async def test_an_unclosed_consumer_or_producer_warns_when_collected(
    bootstrap_servers: str, topic: str
) -> None:
    consumer: Any = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers)
    await consumer.start()
    consumer.assign([TopicPartition(topic, 0)])
    leftovers = [consumer._fetcher.close, consumer._client.close]
    with pytest.warns(ResourceWarning, match="Unclosed AIOKafkaConsumer"):
        del consumer
        gc.collect()
    for close in leftovers:
        await close()

    producer: Any = AIOKafkaProducer(bootstrap_servers=bootstrap_servers)
    await producer.start()
    leftovers = [producer._sender.close, producer.client.close]
    with pytest.warns(ResourceWarning, match="Unclosed AIOKafkaProducer"):
        del producer
        gc.collect()
    for close in leftovers:
        await close()

    # Stopped, or never started: nothing to warn about (warnings are errors here).
    stopped: Any = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers)
    await stopped.start()
    await stopped.stop()
    never: Any = AIOKafkaProducer(bootstrap_servers=bootstrap_servers)
    del stopped, never
    gc.collect()


async def test_the_loop_argument_is_deprecated_and_ignored(bootstrap_servers: str) -> None:
    loop = asyncio.get_running_loop()
    with pytest.warns(DeprecationWarning, match="loop"):
        consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            loop=loop, bootstrap_servers=bootstrap_servers
        )
    with pytest.warns(DeprecationWarning, match="loop"):
        producer = AIOKafkaProducer(loop=loop, bootstrap_servers=bootstrap_servers)
    await consumer.start()
    await producer.start()
    await producer.stop()
    await consumer.stop()
