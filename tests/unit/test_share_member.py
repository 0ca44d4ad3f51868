"""Share-group membership against a scripted peer, for the answers a real broker does not give
on cue: a fenced member joins again with epoch 0, and an error that ends the membership is
raised to the consumer, typed and naming the group, and stops the heartbeats."""

from __future__ import annotations

import asyncio
from typing import Any

from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.share.member import ShareMember
from ferrokafka.structs import TopicPartition

from .fake_broker import FakeBroker, metadata_reply

TOPIC, GROUP = "t", "sg"
TOPIC_ID = bytes(range(1, 17))


def _broker_reply(port: int, key: int, body: dict[str, Any]) -> dict[str, Any]:
    if key == 3:
        return metadata_reply(port, TOPIC, 2, topic_id=TOPIC_ID)
    assert key == 10, key
    return {
        "coordinators": [
            {"key": GROUP, "node_id": 1, "host": "127.0.0.1", "port": port, "error_code": 0}
        ]
    }


async def test_a_fenced_member_rejoins_and_a_fatal_error_ends_the_membership() -> None:
    replies: list[dict[str, Any]] = [
        {"error_code": 110, "error_message": "fenced", "member_epoch": -1},
        {
            "error_code": 0,
            "member_id": None,
            "member_epoch": 5,
            "heartbeat_interval_ms": 100,
            "assignment": {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 1]}]},
        },
        {"error_code": 30, "error_message": None, "member_epoch": 5},  # GROUP_AUTHORIZATION_FAILED
        {"error_code": 0, "member_epoch": -1},  # the leave on close
    ]
    heartbeats: list[dict[str, Any]] = []
    fake: FakeBroker

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == 76:
            heartbeats.append(body)
            reply = {
                "throttle_time_ms": 0,
                "error_message": None,
                "member_id": None,
                "heartbeat_interval_ms": 100,
                "assignment": None,
                **replies.pop(0),
            }
            return _native.encode_response(key, version, corr, reply)
        return _native.encode_response(key, version, corr, _broker_reply(fake.port, key, body))

    fake = await FakeBroker(handle).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{fake.port}", retry_backoff_ms=10)
    await client.bootstrap()
    member = ShareMember(client, GROUP, retry_backoff_ms=10)
    try:
        member.subscribe([TOPIC])
        member.start()
        for _ in range(200):
            if member._failure is not None:
                break
            await asyncio.sleep(0.02)
        # Joined (epoch 0), fenced, joined again with epoch 0, assigned, then refused for good.
        assert [h["member_epoch"] for h in heartbeats] == [0, 0, 5]
        assert len({h["member_id"] for h in heartbeats}) == 1
        assert heartbeats[0]["subscribed_topic_names"] == [TOPIC]
        assert heartbeats[2]["subscribed_topic_names"] is None  # unchanged since
        assert member.assignment == {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)}
        try:
            member.raise_if_failed()
        except Errors.GroupAuthorizationFailedError as exc:
            assert GROUP in str(exc)
        else:
            raise AssertionError("no failure raised")
        await asyncio.sleep(0.3)
        assert len(heartbeats) == 3, "no heartbeat after a fatal error"
        await member.close()
        assert [h["member_epoch"] for h in heartbeats] == [0, 0, 5, -1]
    finally:
        await member.close()
        await client.close()
        await fake.stop()


async def test_close_cancelled_while_leaving_is_cancelled_and_stops_the_member() -> None:
    """A caller's timeout around close(): the cancellation reaches the caller (it is not
    swallowed by the wait for the heartbeat task), and the member is stopped all the same."""
    joined = asyncio.Event()

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == 76:
            if body["member_epoch"] < 0:
                return None  # the leave is never answered
            joined.set()
            reply = {
                "throttle_time_ms": 0,
                "error_code": 0,
                "error_message": None,
                "member_id": None,
                "member_epoch": 1,
                "heartbeat_interval_ms": 60_000,
                "assignment": None,
            }
            return _native.encode_response(key, version, corr, reply)
        return _native.encode_response(key, version, corr, _broker_reply(fake.port, key, body))

    fake = await FakeBroker(handle).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{fake.port}")
    await client.bootstrap()
    member = ShareMember(client, GROUP)
    try:
        member.subscribe([TOPIC])
        member.start()
        await asyncio.wait_for(joined.wait(), 10)
        for _ in range(100):
            if member.epoch == 1:
                break
            await asyncio.sleep(0.01)
        assert member.epoch == 1
        closing = asyncio.ensure_future(member.close())
        await asyncio.sleep(0.2)  # in the unanswered leave
        assert not closing.done()
        closing.cancel()
        try:
            await closing
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError("close() swallowed its cancellation")
        assert member.epoch == -1 and member._task is None
    finally:
        await client.close()
        await fake.stop()


async def test_a_broker_without_share_groups_fails_start_naming_the_group() -> None:
    """A broker that does not speak ShareGroupHeartbeat (before Kafka 4.0, or with share groups
    off): the share consumer's start() raises a typed error naming the group, at once."""
    from ferrokafka import AIOKafkaShareConsumer

    async def handle(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        return _native.encode_response(key, version, corr, _broker_reply(fake.port, key, body))

    fake = await FakeBroker(handle, without_apis=(76, 77, 78, 79)).start()
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        TOPIC, bootstrap_servers=f"127.0.0.1:{fake.port}", group_id=GROUP
    )
    try:
        try:
            await asyncio.wait_for(consumer.start(), 10)
        except Errors.IncompatibleBrokerVersion as exc:
            assert GROUP in str(exc) and "ShareGroupHeartbeat" in str(exc), exc
        else:
            raise AssertionError("start() did not fail")
        assert consumer._closed  # a failed start() stops what it started
    finally:
        await consumer.stop()
        await fake.stop()
