"""KIP-368 against a real listener with ``connections.max.reauth.ms=10000``: a producer and a
consumer in a group kept busy for 25 s re-authenticate on their sockets before each session
ends (SCRAM and OAUTHBEARER), and the broker closes none of their connections."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka.conn import Connection
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaBroker
from ferrokafka.testing.security import UnsecuredTokenProvider

pytestmark = pytest.mark.integration

REAUTH_MS = 10_000
BUSY_FOR = 25.0


@pytest.fixture(scope="module")
def reauth_broker() -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT listener whose sessions last ``REAUTH_MS``."""
    broker = KafkaBroker(
        jvm_options=QUICK_START_JVM_OPTIONS,
        security="sasl_plaintext",
        config={"connections.max.reauth.ms": REAUTH_MS},
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _options(broker: KafkaBroker, mechanism: str) -> dict[str, Any]:
    options = broker.client_options(mechanism="SCRAM-SHA-512")
    if mechanism == "OAUTHBEARER":
        del options["sasl_plain_username"], options["sasl_plain_password"]
        options.update(
            sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=UnsecuredTokenProvider()
        )
    return options


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "OAUTHBEARER"])
async def test_busy_clients_outlive_their_sessions(
    reauth_broker: KafkaBroker, mechanism: str, caplog: pytest.LogCaptureFixture
) -> None:
    options = _options(reauth_broker, mechanism)
    await busy_clients_outlive_their_sessions(reauth_broker, options, mechanism, caplog)


async def busy_clients_outlive_their_sessions(
    reauth_broker: KafkaBroker,
    options: dict[str, Any],
    mechanism: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A producer and a group consumer with ``options`` kept busy for ``BUSY_FOR`` seconds on
    ``reauth_broker`` (sessions of ``REAUTH_MS``) keep every connection, re-authenticating."""
    topic = f"fk-reauth-{uuid.uuid4().hex[:10]}"
    await reauth_broker.acreate_topic(topic, partitions=2)
    caplog.set_level(logging.DEBUG, logger="ferrokafka")
    producer = AIOKafkaProducer(**options)
    consumer = AIOKafkaConsumer(
        topic, **options, group_id=f"g-{uuid.uuid4().hex[:8]}", auto_offset_reset="earliest"
    )
    sent: list[bytes] = []
    seen: list[bytes] = []
    seen_connections: set[Connection] = set()
    try:
        await producer.start()
        await consumer.start()

        def note_connections() -> None:
            for client in (producer.client, consumer._client):
                seen_connections.update(client.connections.values())

        async def produce() -> None:
            began = time.monotonic()
            while time.monotonic() - began < BUSY_FOR:
                value = f"{mechanism}-{len(sent)}".encode()
                await producer.send_and_wait(topic, value)
                sent.append(value)
                note_connections()
                await asyncio.sleep(0.05)

        async def consume() -> None:
            deadline = time.monotonic() + BUSY_FOR + 15
            while time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=500)
                seen.extend(r.value for rs in batch.values() for r in rs if r.value is not None)
                note_connections()
                if len(sent) > 10 and len(seen) >= len(sent) and producing.done():
                    return

        producing = asyncio.ensure_future(produce())
        await asyncio.gather(producing, consume())
        await consumer.commit()
        note_connections()
    finally:
        await consumer.stop()
        await producer.stop()
        await reauth_broker.adelete_topic(topic)

    assert sorted(seen) == sorted(sent)
    # Every connection lived through the whole run: no connection was closed by the broker
    # (nor replaced), and the long-lived ones re-authenticated on their sockets.
    closed = [r.getMessage() for r in caplog.records if "closed" in r.getMessage()]
    assert not [m for m in closed if "connection to node" in m], closed
    assert not [r for r in caplog.records if "re-authentication" in r.getMessage()]
    lifetimes = {c.sasl_session_lifetime_ms for c in seen_connections}
    assert lifetimes and all(0 < lt <= REAUTH_MS for lt in lifetimes if lt is not None)
    busiest = max(c.sasl_authentications for c in seen_connections)
    assert busiest >= 3, [c.sasl_authentications for c in seen_connections]
    reauthenticated = [r for r in caplog.records if r.getMessage().startswith("re-authenticated")]
    assert len(reauthenticated) >= 2
