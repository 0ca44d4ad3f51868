"""The share fetcher against a scripted peer, for answers a real broker does not give on cue:
a share session the broker lost (INVALID_SHARE_SESSION_EPOCH) is opened again with epoch 0 and
the records keep coming; the acknowledgements the refused request carried are reported as
failed to the callback, naming the group; acknowledgements of records from a session that
ended never ride the ShareFetch that opens the next one (the broker refuses such a request); a
starting poll sends what the broker can work on while the application works through its
records (the acknowledgements of a partition handed out whole, the next fetch when it will
leave little buffered)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ferrokafka import AcknowledgeType, AIOKafkaShareConsumer, _native
from ferrokafka import errors as Errors
from ferrokafka.share import AcknowledgementCommitFailedError
from ferrokafka.structs import TopicPartition

from .fake_broker import (
    FakeBroker,
    metadata_reply,
    share_member_reply,
    share_partition,
    share_reply,
)

TOPIC, GROUP = "t", "sg"
TOPIC_ID = bytes(range(1, 17))


def _partition(offset: int | None) -> dict[str, Any]:
    """Partition 0's answer: the record at ``offset`` acquired, or nothing."""
    return share_partition(offset, [] if offset is None else [b"v%d" % offset])


def _recording_consumer(
    port: int, answered: list[tuple[Any, Any]]
) -> AIOKafkaShareConsumer[bytes, bytes]:
    """A share consumer of the peer at ``port`` whose acknowledgement-commit callback appends
    each ``(offsets, exception)`` to ``answered``."""
    return AIOKafkaShareConsumer(
        TOPIC,
        bootstrap_servers=f"127.0.0.1:{port}",
        group_id=GROUP,
        retry_backoff_ms=10,
        acknowledgement_commit_callback=lambda offsets, exc: answered.append((offsets, exc)),
    )


async def test_a_lost_share_session_is_opened_again() -> None:
    fetches: list[dict[str, Any]] = []
    next_offset = 0

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        nonlocal next_offset
        member = share_member_reply(key, body, fake.port, GROUP, TOPIC, TOPIC_ID)
        if member is not None:
            return _native.encode_response(key, version, corr, member)
        if key == 78:
            fetches.append(body)
            # The third request finds its session gone.
            lost = len(fetches) == 3
            parts = [] if lost else [_partition(next_offset if next_offset < 3 else None)]
            if not lost and next_offset < 3:
                next_offset += 1
            lost_code = Errors.InvalidShareSessionEpochError.errno if lost else 0
            reply = share_reply(TOPIC_ID, parts, lost_code)
        elif key == 79:
            reply = share_reply(TOPIC_ID, [])
        else:
            raise AssertionError(key)
        return _native.encode_response(key, version, corr, reply)

    fake = await FakeBroker(handle).start()
    answered: list[tuple[Any, Any]] = []
    consumer = _recording_consumer(fake.port, answered)
    try:
        await consumer.start()
        got = []
        for _ in range(200):
            for records in (await consumer.getmany(timeout_ms=50)).values():
                got += [r.value for r in records]
            if len(got) == 3:
                break
        assert got == [b"v0", b"v1", b"v2"]
        epochs = [f["share_session_epoch"] for f in fetches]
        assert epochs[:3] == [0, 1, 2] and epochs[3] == 0, epochs  # lost at 2: opened again
        refused = [exc for _, exc in answered if exc is not None]
        assert refused and isinstance(refused[0], Errors.InvalidShareSessionEpochError)
        assert GROUP in str(refused[0])
    finally:
        await consumer.stop()
        await fake.stop()


async def test_a_commit_whose_fetch_never_comes_back_fails_and_stop_is_prompt() -> None:
    """A commit riding on a ShareFetch the broker never answers ends with the request's
    timeout, typed and naming the partition, and stop() (whose closing request is not answered
    either) still ends."""
    carried = asyncio.Event()

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == 78:
            acks = [
                b
                for t in body["topics"]
                for p in t["partitions"]
                for b in p["acknowledgement_batches"]
            ]
            if acks:
                carried.set()
                return None  # never answered
            offset = 0 if body["share_session_epoch"] == 0 else None
            reply = share_reply(TOPIC_ID, [_partition(offset)])
        elif (
            member := share_member_reply(key, body, fake.port, GROUP, TOPIC, TOPIC_ID)
        ) is not None:
            reply = member
        else:
            return None  # the closing ShareAcknowledge: no answer either
        return _native.encode_response(key, version, corr, reply)

    fake = await FakeBroker(handle).start()
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC,
        bootstrap_servers=f"127.0.0.1:{fake.port}",
        group_id=GROUP,
        share_acknowledgement_mode="explicit",
        request_timeout_ms=1000,
        fetch_max_wait_ms=100,
    )
    try:
        await consumer.start()
        record = None
        for _ in range(100):
            for records in (await consumer.getmany(timeout_ms=50)).values():
                record = records[0]
            if record is not None:
                break
        assert record is not None
        consumer.acknowledge(record)
        commit = asyncio.create_task(consumer.commit())
        await asyncio.wait_for(carried.wait(), 5)
        await asyncio.wait_for(consumer.stop(), 10)
        done, _ = await asyncio.wait({commit}, timeout=5)
        assert done, "commit() still waits after stop()"
        with pytest.raises(AcknowledgementCommitFailedError, match=r"t-0.*RequestTimedOut"):
            commit.result()
    finally:
        await consumer.stop()
        await fake.stop()


async def test_acknowledgements_of_an_ended_session_do_not_ride_the_fetch_opening_the_next() -> (
    None
):
    # v0 is accepted (implicitly, by the next poll) after its session ended: the fetch ahead
    # found the session gone. A ShareFetch with epoch 0 may not carry acknowledgements (a real
    # broker refuses the whole request with INVALID_REQUEST, as this peer does), so v0's
    # acknowledgement fails, named, and the member goes on fetching in a new session.
    fetches: list[dict[str, Any]] = []
    lost = asyncio.Event()
    sent_v2 = False

    def carries_acks(body: dict[str, Any]) -> bool:
        return any(p["acknowledgement_batches"] for t in body["topics"] for p in t["partitions"])

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        nonlocal sent_v2
        member = share_member_reply(key, body, fake.port, GROUP, TOPIC, TOPIC_ID)
        if member is not None:
            return _native.encode_response(key, version, corr, member)
        if key == 78:
            fetches.append(body)
            if body["share_session_epoch"] == 0 and carries_acks(body):
                reply = share_reply(TOPIC_ID, [], Errors.InvalidRequestError.errno)
            elif len(fetches) == 1:
                reply = share_reply(TOPIC_ID, [share_partition(0, [b"v0", b"v1"])])
            elif len(fetches) == 2:
                lost.set()
                reply = share_reply(TOPIC_ID, [], Errors.InvalidShareSessionEpochError.errno)
            elif not sent_v2:
                sent_v2 = True
                reply = share_reply(TOPIC_ID, [share_partition(2, [b"v2"])])
            else:
                reply = share_reply(TOPIC_ID, [_partition(None)])
            return _native.encode_response(key, version, corr, reply)
        if key == 79:
            return _native.encode_response(key, version, corr, share_reply(TOPIC_ID, []))
        raise AssertionError(key)

    fake = await FakeBroker(handle).start()
    answered: list[tuple[Any, Any]] = []
    consumer = _recording_consumer(fake.port, answered)

    async def next_values() -> list[bytes | None]:
        for _ in range(200):
            for records in (await consumer.getmany(timeout_ms=50, max_records=1)).values():
                return [r.value for r in records]
        raise AssertionError(f"no record; fetches {fetches}")

    try:
        await consumer.start()
        assert await next_values() == [b"v0"]
        await asyncio.wait_for(lost.wait(), 10)  # the fetch ahead found the session gone
        await asyncio.sleep(0.1)
        assert await next_values() == [b"v1"]  # and v0 is accepted now
        assert await next_values() == [b"v2"]
        assert not any(f["share_session_epoch"] == 0 and carries_acks(f) for f in fetches)
        gone = [(offsets, exc) for offsets, exc in answered if exc is not None]
        assert gone, answered
        offsets, exc = gone[0]
        assert isinstance(exc, Errors.ShareSessionNotFoundError) and GROUP in str(exc)
        # v0, and v1 too when its acceptance came before the new session's first fetch: both
        # were acquired in the session that ended.
        assert list(offsets) == [TopicPartition(TOPIC, 0)]
        assert {0} <= offsets[TopicPartition(TOPIC, 0)] <= {0, 1}
    finally:
        await consumer.stop()
        await fake.stop()


def _two_partitions(key: int, body: dict[str, Any], port: int) -> dict[str, Any] | None:
    """``share_member_reply`` with the topic's partitions 0 and 1 assigned to the member."""
    if key == 3:
        return metadata_reply(port, TOPIC, 2, topic_id=TOPIC_ID)
    reply = share_member_reply(key, body, port, GROUP, TOPIC, TOPIC_ID)
    if key == 76 and reply is not None:
        reply["assignment"] = {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 1]}]}
    return reply


def _answer(partition: int, first: int, count: int) -> dict[str, Any]:
    return {
        **share_partition(first, [b"v%d" % (first + i) for i in range(count)]),
        "partition_index": partition,
    }


def _acks(body: dict[str, Any]) -> dict[int, list[tuple[int, int, list[int]]]]:
    """Partition -> the acknowledgement batches a request carries."""
    return {
        p["partition_index"]: [
            (b["first_offset"], b["last_offset"], b["acknowledge_types"])
            for b in p["acknowledgement_batches"]
        ]
        for t in body["topics"]
        for p in t["partitions"]
        if p["acknowledgement_batches"]
    }


async def _scripted(
    first_fetch: list[dict[str, Any]], requests: list[tuple[int, dict[str, Any]]]
) -> FakeBroker:
    """A peer whose first ShareFetch answers ``first_fetch`` and the others nothing (after a
    little while); every ShareFetch and ShareAcknowledge is kept in ``requests``."""

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        member = _two_partitions(key, body, fake.port)
        if member is not None:
            return _native.encode_response(key, version, corr, member)
        assert key in (78, 79), key
        requests.append((key, body))
        fetches = [b for k, b in requests if k == 78]
        if key == 78 and len(fetches) == 1:
            return _native.encode_response(key, version, corr, share_reply(TOPIC_ID, first_fetch))
        await asyncio.sleep(0.02)
        return _native.encode_response(key, version, corr, share_reply(TOPIC_ID, []))

    fake = await FakeBroker(handle).start()
    return fake


async def _first_poll(consumer: AIOKafkaShareConsumer[bytes, bytes], n: int) -> list[int]:
    for _ in range(200):
        data = await consumer.getmany(timeout_ms=50, max_records=n)
        if data:
            return [r.offset for records in data.values() for r in records]
    raise AssertionError("no records")


async def test_acknowledgements_of_a_partition_handed_out_whole_go_at_the_next_poll() -> None:
    # Both partitions come in one fetch; the first poll hands out one of them. The next poll
    # accepts it and, since the other is still buffered (no fetch is about to go), sends the
    # acknowledgements in a ShareAcknowledge as it starts, before it hands out the other:
    # the broker stores them while the application works, and the partition is free for the
    # next fetch.
    requests: list[tuple[int, dict[str, Any]]] = []
    fake = await _scripted([_answer(0, 0, 200), _answer(1, 0, 200)], requests)
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC, bootstrap_servers=f"127.0.0.1:{fake.port}", group_id=GROUP
    )
    try:
        await consumer.start()
        first = await consumer.getmany(timeout_ms=5_000, max_records=200)
        while not first:
            first = await consumer.getmany(timeout_ms=5_000, max_records=200)
        [(tp, records)] = first.items()
        assert [r.offset for r in records] == list(range(200))
        second = await consumer.getmany(max_records=200)
        assert [len(rs) for rs in second.values()] == [200] and tp not in second
        assert consumer._fetcher._carrying  # on its way before the application had the poll
        for _ in range(100):
            if any(k == 79 for k, _ in requests):
                break
            await asyncio.sleep(0.01)
        kinds = [(k, _acks(b)) for k, b in requests]
        sent = (79, {tp.partition: [(0, 199, [AcknowledgeType.ACCEPT])]})
        assert sent in kinds, kinds
        assert all(not acks for _, acks in kinds[: kinds.index(sent)])  # none carried before
    finally:
        await consumer.stop()
        await fake.stop()


async def test_a_poll_that_leaves_little_buffered_fetches_before_it_hands_out() -> None:
    # Only partition 0 comes in the first fetch, 600 records. The first poll takes 100 (500
    # stay buffered, as many as a fetch asks for: no fetch yet). The second takes the other
    # 500, and partition 1 is free to acquire: the next ShareFetch goes as the poll starts (not
    # waiting for records, carrying the first poll's acknowledgements), so it is in flight by
    # the time the application has the poll's records.
    requests: list[tuple[int, dict[str, Any]]] = []
    fake = await _scripted([_answer(0, 0, 600)], requests)
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC, bootstrap_servers=f"127.0.0.1:{fake.port}", group_id=GROUP
    )
    try:
        await consumer.start()
        assert await _first_poll(consumer, 100) == list(range(100))
        assert not consumer._fetcher._fetching
        fetches = len([k for k, _ in requests if k == 78])
        second = await consumer.getmany(max_records=500)
        assert [r.offset for rs in second.values() for r in rs] == list(range(100, 600))
        assert 1 in consumer._fetcher._fetching  # node 1's ShareFetch is in flight
        for _ in range(100):
            if len([k for k, _ in requests if k == 78]) > fetches:
                break
            await asyncio.sleep(0.01)
        ahead = [b for k, b in requests if k == 78][fetches]
        assert ahead["max_wait_ms"] == 0
        assert _acks(ahead) == {0: [(0, 99, [AcknowledgeType.ACCEPT])]}
    finally:
        await consumer.stop()
        await fake.stop()


async def test_getone_hands_out_every_record_once_in_order_and_accepts_each() -> None:
    # getone() takes a decoded record straight from the buffer; the record before it is
    # accepted at each call, and every acknowledgement reaches the broker.
    requests: list[tuple[int, dict[str, Any]]] = []
    fake = await _scripted([_answer(0, 0, 600), _answer(1, 0, 600)], requests)
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC, bootstrap_servers=f"127.0.0.1:{fake.port}", group_id=GROUP
    )
    try:
        await consumer.start()
        got = [await asyncio.wait_for(consumer.getone(), 5) for _ in range(1200)]
        assert sorted((r.partition, r.offset) for r in got) == [
            (p, o) for p in (0, 1) for o in range(600)
        ]
        for p in (0, 1):
            mine = [r.offset for r in got if r.partition == p]
            assert mine == list(range(600)) and all(r.delivery_count == 1 for r in got)
        await consumer.commit()
        accepted = {
            (p, o)
            for _, body in requests
            for p, batches in _acks(body).items()
            for first, last, types in batches
            if types == [AcknowledgeType.ACCEPT]
            for o in range(first, last + 1)
        }
        assert accepted == {(p, o) for p in (0, 1) for o in range(600)}
    finally:
        await consumer.stop()
        await fake.stop()


async def test_getone_in_explicit_mode_refuses_until_the_last_record_is_answered() -> None:
    requests: list[tuple[int, dict[str, Any]]] = []
    fake = await _scripted([_answer(0, 0, 3)], requests)
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC,
        bootstrap_servers=f"127.0.0.1:{fake.port}",
        group_id=GROUP,
        share_acknowledgement_mode="explicit",
    )
    try:
        await consumer.start()
        first = await asyncio.wait_for(consumer.getone(), 5)
        assert first.offset == 0
        with pytest.raises(Errors.IllegalStateError, match="not acknowledged"):
            await consumer.getone()
        consumer.acknowledge(first, AcknowledgeType.RELEASE)
        assert (await asyncio.wait_for(consumer.getone(), 5)).offset == 1
    finally:
        await consumer.stop()
        await fake.stop()
