"""GSSAPI principals under ``StandardAuthorizer``: the broker maps ``alice@FERROKAFKA.TEST`` to
``User:alice`` (the default ``sasl.kerberos.principal.to.local.rules``), so ACLs granted to
``User:alice`` govern what a client authenticated by Kerberos may do: refused before the grant,
allowed after it, read back by the same principal."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    AIOKafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourceType,
)
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaBroker
from ferrokafka.testing.kerberos import KerberosRealm

from ..needs import kerberos_or_skip_module
from .test_sasl_gssapi import alice, gssapi_options  # noqa: F401 (alice is a fixture)

kerberos_or_skip_module()

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kerberos_acl_broker(kerberos_realm: KerberosRealm) -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT listener accepting GSSAPI (and SCRAM for ``admin``, the super user)
    with ``StandardAuthorizer``."""
    options = kerberos_realm.broker_options("sasl_plaintext", jvm_options=QUICK_START_JVM_OPTIONS)
    broker = KafkaBroker(**options, authorizer=True)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _allow_alice(op: ACLOperation, kind: ResourceType, name: str) -> ACL:
    return ACL("User:alice", "*", op, ACLPermissionType.ALLOW, ResourcePattern(kind, name))


async def test_acls_for_user_alice_govern_her_kerberos_principal(
    kerberos_acl_broker: KafkaBroker,
    alice: KerberosRealm,  # noqa: F811
) -> None:
    broker = kerberos_acl_broker
    topic = f"fk-gssapi-acl-{uuid.uuid4().hex[:10]}"
    group = f"g-{uuid.uuid4().hex[:8]}"
    # The grants are made by `admin` over SCRAM: alice's Kerberos session may not make them.
    async with AIOKafkaAdminClient(**broker.client_options("admin", "SCRAM-SHA-512")) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        await admin.wait_for_topic(topic, partitions=1, timeout=30)
        options = gssapi_options(broker, request_timeout_ms=10_000)

        async with AIOKafkaProducer(**options) as producer:
            with pytest.raises(Errors.TopicAuthorizationFailedError) as refused:
                await asyncio.wait_for(producer.send_and_wait(topic, b"before"), 15)
            assert topic in str(refused.value)

            created = await admin.create_acls(
                [
                    _allow_alice(ACLOperation.WRITE, ResourceType.TOPIC, topic),
                    _allow_alice(ACLOperation.READ, ResourceType.TOPIC, topic),
                    _allow_alice(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic),
                    _allow_alice(ACLOperation.READ, ResourceType.GROUP, group),
                ]
            )
            assert not created["failed"], created
            for _ in range(20):  # the grant reaches the authorizer through the metadata log
                try:
                    metadata = await producer.send_and_wait(topic, b"after")
                    break
                except Errors.TopicAuthorizationFailedError:
                    await asyncio.sleep(0.5)
            else:
                raise AssertionError("alice's Kerberos principal is still refused after the grant")
        assert metadata.offset == 0

    consumer = AIOKafkaConsumer(
        topic, **options, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False
    )
    async with consumer:
        record = await asyncio.wait_for(consumer.getone(), 30)
        assert (record.offset, record.value) == (0, b"after")
        await consumer.commit()
