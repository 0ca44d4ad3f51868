"""The share fetcher against a scripted peer, for answers a real broker does not give on cue:
a share session the broker lost (INVALID_SHARE_SESSION_EPOCH) is opened again with epoch 0 and
the records keep coming; the acknowledgements the refused request carried are reported as
failed to the callback, naming the group."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ferrokafka import AIOKafkaShareConsumer, _native
from ferrokafka import errors as Errors
from ferrokafka.records import encode_batch
from ferrokafka.share import AcknowledgementCommitFailedError

from .fake_broker import FakeBroker, metadata_reply

TOPIC, GROUP = "t", "sg"
TOPIC_ID = bytes(range(1, 17))


def _partition(offset: int | None) -> dict[str, Any]:
    """Partition 0's answer: the record at ``offset`` acquired, or nothing."""
    records = None
    acquired: list[dict[str, Any]] = []
    if offset is not None:
        records = encode_batch([(1, None, b"v%d" % offset, [])], base_offset=offset)
        acquired = [{"first_offset": offset, "last_offset": offset, "delivery_count": 1}]
    return {
        "partition_index": 0,
        "error_code": 0,
        "error_message": None,
        "acknowledge_error_code": 0,
        "acknowledge_error_message": None,
        "current_leader": {"leader_id": 1, "leader_epoch": 0},
        "records": records,
        "acquired_records": acquired,
    }


async def test_a_lost_share_session_is_opened_again() -> None:
    fetches: list[dict[str, Any]] = []
    next_offset = 0

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        nonlocal next_offset
        if key == 3:
            reply: dict[str, Any] = metadata_reply(fake.port, TOPIC, 1, topic_id=TOPIC_ID)
        elif key == 10:
            reply = {
                "coordinators": [
                    {
                        "key": GROUP,
                        "node_id": 1,
                        "host": "127.0.0.1",
                        "port": fake.port,
                        "error_code": 0,
                    }
                ]
            }
        elif key == 76:
            reply = {
                "throttle_time_ms": 0,
                "error_code": 0,
                "error_message": None,
                "member_id": None,
                "member_epoch": 1 if body["member_epoch"] >= 0 else -1,
                "heartbeat_interval_ms": 60_000,
                "assignment": {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0]}]},
            }
        elif key == 78:
            fetches.append(body)
            # The third request finds its session gone.
            lost = len(fetches) == 3
            parts = [] if lost else [_partition(next_offset if next_offset < 3 else None)]
            if not lost and next_offset < 3:
                next_offset += 1
            reply = {
                "throttle_time_ms": 0,
                "error_code": Errors.InvalidShareSessionEpochError.errno if lost else 0,
                "error_message": "epoch" if lost else None,
                "acquisition_lock_timeout_ms": 30_000,
                "responses": [{"topic_id": TOPIC_ID, "partitions": parts}] if parts else [],
                "node_endpoints": [],
            }
        elif key == 79:
            reply = {
                "throttle_time_ms": 0,
                "error_code": 0,
                "error_message": None,
                "acquisition_lock_timeout_ms": 30_000,
                "responses": [],
                "node_endpoints": [],
            }
        else:
            raise AssertionError(key)
        return _native.encode_response(key, version, corr, reply)

    fake = await FakeBroker(handle).start()
    answered: list[tuple[Any, Any]] = []
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC,
        bootstrap_servers=f"127.0.0.1:{fake.port}",
        group_id=GROUP,
        retry_backoff_ms=10,
        acknowledgement_commit_callback=lambda offsets, exc: answered.append((offsets, exc)),
    )
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
            reply: dict[str, Any] = {
                "throttle_time_ms": 0,
                "error_code": 0,
                "error_message": None,
                "acquisition_lock_timeout_ms": 30_000,
                "responses": [{"topic_id": TOPIC_ID, "partitions": [_partition(offset)]}],
                "node_endpoints": [],
            }
        elif key == 3:
            reply = metadata_reply(fake.port, TOPIC, 1, topic_id=TOPIC_ID)
        elif key == 10:
            reply = {
                "coordinators": [
                    {
                        "key": GROUP,
                        "node_id": 1,
                        "host": "127.0.0.1",
                        "port": fake.port,
                        "error_code": 0,
                    }
                ]
            }
        elif key == 76:
            reply = {
                "throttle_time_ms": 0,
                "error_code": 0,
                "error_message": None,
                "member_id": None,
                "member_epoch": 1 if body["member_epoch"] >= 0 else -1,
                "heartbeat_interval_ms": 60_000,
                "assignment": {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0]}]},
            }
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
