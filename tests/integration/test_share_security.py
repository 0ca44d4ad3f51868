"""The share consumer over the broker's secured listeners, as the other clients: TLS, SASL
(PLAIN, SCRAM) over plaintext and over TLS; records come with their delivery counts and are
accepted."""

from __future__ import annotations

import uuid

import pytest
from ferrokafka import AIOKafkaProducer, AIOKafkaShareConsumer
from ferrokafka.testing import KafkaBroker

from .share_util import configure_share_group, poll_until, quiet_for

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("fixture", "mechanism"),
    [
        ("ssl_broker", None),
        ("sasl_plaintext_broker", "PLAIN"),
        ("sasl_ssl_broker", "SCRAM-SHA-512"),
    ],
)
async def test_share_consumer_over_secured_listeners(
    request: pytest.FixtureRequest, fixture: str, mechanism: str | None
) -> None:
    broker: KafkaBroker = request.getfixturevalue(fixture)
    options = broker.client_options(**({"mechanism": mechanism} if mechanism else {}))
    topic = f"fk-share-sec-{uuid.uuid4().hex[:10]}"
    group = f"share-{topic}"
    broker.create_topic(topic, partitions=2)
    try:
        await configure_share_group(
            broker.plaintext_bootstrap_servers, group, share_auto_offset_reset="earliest"
        )
        async with AIOKafkaProducer(**options) as producer:
            for i in range(10):
                await producer.send(topic, b"v%d" % i, partition=i % 2)
            await producer.flush()
        async with AIOKafkaShareConsumer(topic, group_id=group, **options) as consumer:
            got = await poll_until(consumer, lambda got: len(got) >= 10, timeout=60)
            assert sorted(r.value for r in got) == sorted(b"v%d" % i for i in range(10))
            assert {r.delivery_count for r in got} == {1}
            await consumer.commit()
            assert await quiet_for(consumer, 1) == []
    finally:
        broker.delete_topic(topic)
