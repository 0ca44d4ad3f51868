"""ACLs against a broker with ``StandardAuthorizer``: the admin client creates, describes and
deletes bindings; a principal without them gets the typed authorization error naming the topic,
group or transactional id, promptly, from every call that needs it; a grant makes the same call
work."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    AIOKafkaAdminClient,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from ferrokafka.testing import KafkaBroker

pytestmark = pytest.mark.integration

T = TypeVar("T")

PROMPTLY = 10.0
"""Seconds within which a refused call must raise (it must not retry until a timeout)."""


def _name(kind: str) -> str:
    return f"fk-acl-{kind}-{uuid.uuid4().hex[:10]}"


def _allow(op: ACLOperation, kind: ResourceType, name: str, user: str = "alice") -> ACL:
    return ACL(f"User:{user}", "*", op, ACLPermissionType.ALLOW, ResourcePattern(kind, name))


async def _refused(call: Awaitable[T], error: type[Errors.KafkaError], *names: str) -> str:
    """Await ``call``, which must raise ``error`` within ``PROMPTLY`` seconds naming every one
    of ``names``; the message."""
    with pytest.raises(error) as info:
        await asyncio.wait_for(call, PROMPTLY)
    message = str(info.value)
    for name in names:
        assert name in message, message
    return message


async def _refused_once_current(
    call: Callable[[], Awaitable[object]], error: type[Errors.KafkaError], *names: str
) -> str:
    """Like ``_refused``, calling ``call()`` again while the refusal raised does not name
    every one of ``names`` yet (it may still be the one reported before a grant, as a Java
    client's may); the message."""
    message = ""
    for _ in range(20):
        with pytest.raises(error) as info:
            await asyncio.wait_for(call(), PROMPTLY)
        message = str(info.value)
        if all(name in message for name in names):
            return message
    raise AssertionError(message)


async def _after_grant(call: Any) -> Any:
    """``call()``, retried while it still raises a refusal reported before the grant."""
    for _ in range(5):
        try:
            return await asyncio.wait_for(call(), PROMPTLY)
        except Errors.TopicAuthorizationFailedError:
            await asyncio.sleep(0.2)
    return await asyncio.wait_for(call(), PROMPTLY)


@pytest.fixture
async def admin(acl_broker: KafkaBroker) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(**acl_broker.client_options("admin")) as client:
        yield client


@pytest.fixture
def alice(acl_broker: KafkaBroker) -> dict[str, Any]:
    return acl_broker.client_options("alice")


@pytest.fixture
async def topic(acl_broker: KafkaBroker) -> AsyncIterator[str]:
    name = _name("t")
    await acl_broker.acreate_topic(name, partitions=1)
    yield name
    await acl_broker.adelete_topic(name)


async def _grant(admin: AIOKafkaAdminClient, *acls: ACL) -> None:
    result = await admin.create_acls(list(acls))
    assert result == {"succeeded": list(acls), "failed": []}
    # The authorizer applies new bindings once the metadata log carrying them is replayed.
    for acl in acls:
        pattern = acl.resource_pattern
        want = ACLFilter(
            acl.principal,
            acl.host,
            acl.operation,
            acl.permission_type,
            ResourcePatternFilter(
                pattern.resource_type, pattern.resource_name, pattern.pattern_type
            ),
        )
        for _ in range(50):
            found, _ = await admin.describe_acls(want)
            if acl in found:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"{acl} never described")


# ---- the admin calls ---------------------------------------------------------------------------


async def test_create_describe_delete_round_trip(admin: AIOKafkaAdminClient) -> None:
    topic = _name("t")
    prefix = _name("p")
    read = _allow(ACLOperation.READ, ResourceType.TOPIC, topic)
    write = ACL(
        "User:alice",
        "127.0.0.1",
        ACLOperation.WRITE,
        ACLPermissionType.DENY,
        ResourcePattern(ResourceType.TOPIC, prefix, ACLResourcePatternType.PREFIXED),
    )
    group = _allow(ACLOperation.READ, ResourceType.GROUP, _name("g"), user="bob")
    await _grant(admin, read, write, group)

    by_alice = ACLFilter(
        "User:alice",
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY),
    )
    found, error = await admin.describe_acls(by_alice)
    assert error is Errors.NoError
    assert read in found and write in found and group not in found

    # MATCH: the bindings that apply to one resource, the prefixed one included.
    matching = ACLFilter(
        None,
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.TOPIC, prefix + "-x", ACLResourcePatternType.MATCH),
    )
    assert (await admin.describe_acls(matching))[0] == [write]

    any_topic_acl = ACLFilter(
        None,
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )
    deleted = await admin.delete_acls(
        [
            ACLFilter(
                "User:alice",
                None,
                ACLOperation.ANY,
                ACLPermissionType.ANY,
                ResourcePatternFilter(ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL),
            ),
            ACLFilter(
                None,
                None,
                ACLOperation.ANY,
                ACLPermissionType.ANY,
                ResourcePatternFilter(ResourceType.ANY, prefix, ACLResourcePatternType.ANY),
            ),
            ACLFilter(
                "User:bob",
                None,
                ACLOperation.ANY,
                ACLPermissionType.ANY,
                ResourcePatternFilter(ResourceType.GROUP, None, ACLResourcePatternType.ANY),
            ),
        ]
    )
    assert [(acls, error) for _, acls, error in deleted] == [
        ([read], Errors.NoError),
        ([write], Errors.NoError),
        ([group], Errors.NoError),
    ]
    for _ in range(50):
        remaining, _ = await admin.describe_acls(any_topic_acl)
        if not {read, write, group} & set(remaining):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"deleted ACLs still described: {remaining}")


async def test_a_principal_without_alter_may_not_manage_acls(
    alice: dict[str, Any], topic: str
) -> None:
    async with AIOKafkaAdminClient(**alice) as admin:
        acl = _allow(ACLOperation.READ, ResourceType.TOPIC, topic)
        result = await asyncio.wait_for(admin.create_acls([acl]), PROMPTLY)
        assert result["succeeded"] == []
        [(failed, error)] = result["failed"]
        assert failed == acl
        assert isinstance(error, Errors.ClusterAuthorizationFailedError)
        assert topic in str(error)
        everything = ACLFilter(
            None,
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )
        await _refused(admin.describe_acls(everything), Errors.ClusterAuthorizationFailedError)


async def test_admin_calls_name_the_refused_topic(
    admin: AIOKafkaAdminClient, alice: dict[str, Any], topic: str
) -> None:
    new = _name("new")
    async with AIOKafkaAdminClient(**alice) as client:
        # Per-topic CreateTopics errors are reported in the response, as aiokafka does.
        response = await asyncio.wait_for(client.create_topics([NewTopic(new, 1, 1)]), PROMPTLY)
        [result] = response["topics"]
        assert (result["name"], result["error_code"]) == (new, 29)  # TOPIC_AUTHORIZATION_FAILED
        await _refused(client.describe_topics([topic]), Errors.TopicAuthorizationFailedError, topic)
        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        await _refused(
            client.describe_configs([resource]), Errors.TopicAuthorizationFailedError, topic
        )
        await _grant(admin, _allow(ACLOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, topic))
        [response] = await client.describe_configs([resource])
        assert response["results"][0]["configs"]


# ---- the consumer and the producer -------------------------------------------------------------


async def test_fetch_without_describe_or_read_names_the_topic(
    acl_broker: KafkaBroker, admin: AIOKafkaAdminClient, alice: dict[str, Any], topic: str
) -> None:
    async with AIOKafkaProducer(**acl_broker.client_options("admin")) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(**alice, auto_offset_reset="earliest") as consumer:
        consumer.assign([tp])
        # Without DESCRIBE the metadata refuses the topic (no position can be looked up).
        await _refused(
            consumer.getmany(timeout_ms=5000), Errors.TopicAuthorizationFailedError, topic
        )
        await _refused(consumer.getone(), Errors.TopicAuthorizationFailedError, topic)
        # With DESCRIBE but not READ the Fetch itself is refused.
        await _grant(admin, _allow(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic))
        await _refused_once_current(
            lambda: consumer.getmany(timeout_ms=2000),
            Errors.TopicAuthorizationFailedError,
            "not authorized to read",
            topic,
        )
        await _refused(
            consumer.getmany(timeout_ms=5000), Errors.TopicAuthorizationFailedError, topic
        )
        await _grant(admin, _allow(ACLOperation.READ, ResourceType.TOPIC, topic))
        record = await _after_grant(consumer.getone)
        assert record.value == b"v"


async def test_send_without_write_names_the_topic(
    admin: AIOKafkaAdminClient, alice: dict[str, Any], topic: str
) -> None:
    async with AIOKafkaProducer(**alice) as producer:
        await _refused(
            producer.send_and_wait(topic, b"v", partition=0),
            Errors.TopicAuthorizationFailedError,
            topic,
        )
        # With DESCRIBE but not WRITE the Produce itself is refused.
        await _grant(admin, _allow(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic))
        message = await _refused_once_current(
            lambda: producer.send_and_wait(topic, b"v", partition=0),
            Errors.TopicAuthorizationFailedError,
            f"{topic}[0]",
        )
        assert "Topic authorization failed" in message
        await _grant(admin, _allow(ACLOperation.WRITE, ResourceType.TOPIC, topic))
        metadata = await asyncio.wait_for(
            producer.send_and_wait(topic, b"v", partition=0), PROMPTLY
        )
        assert metadata.topic == topic


async def test_group_without_read_names_the_group(
    admin: AIOKafkaAdminClient, alice: dict[str, Any], topic: str
) -> None:
    group = _name("g")
    await _grant(
        admin,
        _allow(ACLOperation.READ, ResourceType.TOPIC, topic),
        _allow(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic),
    )
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(**alice, group_id=group, enable_auto_commit=False) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        await _refused(consumer.commit(), Errors.GroupAuthorizationFailedError, group)
        await _refused(consumer.committed(tp), Errors.GroupAuthorizationFailedError, group)

    subscriber = AIOKafkaConsumer(topic, **alice, group_id=group)
    await _refused(subscriber.start(), Errors.GroupAuthorizationFailedError, group)
    await subscriber.stop()

    await _grant(admin, _allow(ACLOperation.READ, ResourceType.GROUP, group))
    async with AIOKafkaConsumer(**alice, group_id=group, enable_auto_commit=False) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        await asyncio.wait_for(consumer.commit(), PROMPTLY)
        assert await consumer.committed(tp) == 0


async def test_transactional_id_without_write_is_refused(
    admin: AIOKafkaAdminClient, alice: dict[str, Any], topic: str
) -> None:
    txn = _name("txn")
    producer = AIOKafkaProducer(**alice, transactional_id=txn)
    await _refused(producer.start(), Errors.TransactionalIdAuthorizationFailed, txn)
    await producer.stop()

    await _grant(
        admin,
        _allow(ACLOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn),
        _allow(ACLOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, txn),
        _allow(ACLOperation.WRITE, ResourceType.TOPIC, topic),
        _allow(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic),
    )
    async with AIOKafkaProducer(**alice, transactional_id=txn) as producer:
        async with producer.transaction():
            await producer.send_and_wait(topic, b"t", partition=0)


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_subscribe_to_a_topic_without_describe_names_the_topic(
    acl_broker: KafkaBroker,
    admin: AIOKafkaAdminClient,
    alice: dict[str, Any],
    topic: str,
    group_protocol: str,
) -> None:
    """The group may be used but the subscribed topic may not be described: ``start()`` (which
    waits for the first assignment) or, after a later ``subscribe``, the poll says which topic
    (as the Java consumer's poll does); a grant lets the same consumer read it."""
    group = _name("g")
    await _grant(admin, _allow(ACLOperation.READ, ResourceType.GROUP, group))
    async with AIOKafkaProducer(**acl_broker.client_options("admin")) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    options: dict[str, Any] = {
        **alice,
        "group_id": group,
        "group_protocol": group_protocol,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
    }
    subscriber = AIOKafkaConsumer(topic, **options)
    await _refused(subscriber.start(), Errors.TopicAuthorizationFailedError, topic)
    await subscriber.stop()

    async with AIOKafkaConsumer(**options) as consumer:
        consumer.subscribe([topic])
        await _refused(
            consumer.getmany(timeout_ms=8000), Errors.TopicAuthorizationFailedError, topic
        )
        await _grant(
            admin,
            _allow(ACLOperation.DESCRIBE, ResourceType.TOPIC, topic),
            _allow(ACLOperation.READ, ResourceType.TOPIC, topic),
        )
        record = await _after_grant(consumer.getone)
        assert record.value == b"v"
