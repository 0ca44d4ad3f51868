"""Authentication refused on a connection opened after ``start()`` (a revoked token, a rotated
password): the consumer's poll and the producer's send raise the typed error naming the
mechanism and the broker, reconnecting goes on with back-off rather than in a tight loop, and
once the credentials are good again consumption resumes where it was, losing and repeating
nothing."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.security import OAUTH_SCOPE, UnsecuredTokenProvider

from .secure_util import oauth_options

pytestmark = pytest.mark.integration

REFUSED = (Errors.SaslAuthenticationFailed, Errors.AuthenticationFailedError)


def _drop_connections(consumer: AIOKafkaConsumer, producer: AIOKafkaProducer) -> None:
    """Close every open connection, as a broker restart or an idle timeout would."""
    for client in (consumer._client, producer.client):
        for conn in list(client.connections.values()):
            conn.close()


async def _getmany_until_refused(consumer: AIOKafkaConsumer, within_s: float) -> BaseException:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            batch = await consumer.getmany(timeout_ms=500)
        except REFUSED as exc:
            return exc
        assert not batch, f"records while refused: {batch}"
    raise AssertionError(f"getmany did not raise the refusal within {within_s}s")


async def _read(consumer: AIOKafkaConsumer, count: int, within_s: float) -> list[bytes]:
    """``count`` values, tolerating the refusals still queued from before the credentials
    were fixed (each is raised once, so there are at most a few)."""
    values: list[bytes] = []
    stale = 0
    deadline = time.monotonic() + within_s
    while len(values) < count and time.monotonic() < deadline:
        try:
            batch = await consumer.getmany(timeout_ms=500)
        except REFUSED:
            stale += 1
            assert stale <= 3, "refusals go on after the credentials were fixed"
            continue
        values += [r.value for records in batch.values() for r in records if r.value]
    return values


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_a_token_revoked_after_start_is_raised_by_poll_and_send_then_heals(
    sasl_plaintext_broker: KafkaBroker, group_protocol: str
) -> None:
    broker = sasl_plaintext_broker
    provider = UnsecuredTokenProvider("alice")
    options = {**oauth_options(broker, provider), "retry_backoff_ms": 200}
    topic = f"fk-refused-{uuid.uuid4().hex[:10]}"
    await broker.acreate_topic(topic, partitions=1)
    producer = AIOKafkaProducer(**options)
    consumer = AIOKafkaConsumer(
        topic,
        **options,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        group_protocol=group_protocol,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        await producer.start()
        await consumer.start()
        first = [f"before-{i}".encode() for i in range(5)]
        for value in first:
            await producer.send_and_wait(topic, value)
        assert await _read(consumer, 5, 30) == first
        await consumer.commit()

        # Tokens from now on lack the scope the listener requires.
        provider.scope = ("other",)
        calls_before = provider.calls
        _drop_connections(consumer, producer)
        began = time.monotonic()
        error = await _getmany_until_refused(consumer, within_s=20)
        assert isinstance(error, Errors.SaslAuthenticationFailed), repr(error)
        assert "OAUTHBEARER authentication with node" in str(error)
        assert "insufficient_scope" in str(error)

        with pytest.raises(REFUSED) as sent:
            await producer.send_and_wait(topic, b"refused")
        assert "OAUTHBEARER authentication with node" in str(sent.value)

        # Reconnecting goes on meanwhile, with back-off: a few attempts per second per
        # connection at most (backoff from retry_backoff_ms, doubling to 1 s), not a loop.
        await asyncio.sleep(3)
        elapsed = time.monotonic() - began
        attempts = provider.calls - calls_before
        assert 1 <= attempts <= 8 * elapsed, f"{attempts} token requests in {elapsed:.1f}s"

        provider.scope = (OAUTH_SCOPE,)
        second = [f"after-{i}".encode() for i in range(5)]
        for value in second:
            await producer.send_and_wait(topic, value)
        # The refused send was never written; the rest arrive once, in order, after the
        # records read before the refusal.
        assert await _read(consumer, 5, 30) == second
        await consumer.commit()
        assert await consumer.committed(TopicPartition(topic, 0)) == 10
    finally:
        await consumer.stop()
        await producer.stop()
        await broker.adelete_topic(topic)
