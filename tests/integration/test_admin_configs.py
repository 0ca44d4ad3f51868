"""``incremental_alter_configs`` against the real broker, read back with ``describe_configs``:
set, delete, append and subtract on topics and on a broker."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
)

pytestmark = [pytest.mark.integration, pytest.mark.core]

SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE
APPEND, SUBTRACT = AlterConfigOpType.APPEND, AlterConfigOpType.SUBTRACT


DYNAMIC = {ConfigResourceType.TOPIC: 1, ConfigResourceType.BROKER: 2}
"""The config source of a value set on the resource itself (DescribeConfigs' codes)."""


async def _values(admin: AIOKafkaAdminClient, resource: ConfigResource) -> dict[str, str | None]:
    """The configs set on the resource itself (not defaults, not static broker configs)."""
    [response] = await admin.describe_configs([resource])
    [result] = response["results"]
    source = DYNAMIC[resource.resource_type]
    return {c["name"]: c["value"] for c in result["configs"] if c["config_source"] == source}


async def _settled(
    admin: AIOKafkaAdminClient, resource: ConfigResource, expected: dict[str, str | None]
) -> dict[str, str | None]:
    """The resource's dynamic configs once they show ``expected`` (a broker applies a change
    when its metadata log carries it), or as they are after five seconds."""
    for _ in range(50):
        values = await _values(admin, resource)
        if all(values.get(k) == v for k, v in expected.items()):
            break
        await asyncio.sleep(0.1)
    return values


async def test_incremental_alter_topic_configs(
    admin: AIOKafkaAdminClient, make_topic: object
) -> None:
    topic = make_topic(  # type: ignore[operator]
        partitions=1, configs={"retention.ms": "100000", "cleanup.policy": "delete"}
    )
    resource = ConfigResource(ConfigResourceType.TOPIC, topic)

    # validate_only changes nothing.
    await admin.incremental_alter_configs(
        {resource: [AlterConfigOp("retention.ms", "5000")]}, validate_only=True
    )
    assert (await _values(admin, resource))["retention.ms"] == "100000"

    await admin.incremental_alter_configs(
        {
            resource: [
                AlterConfigOp("max.message.bytes", "65536", SET),
                AlterConfigOp("retention.ms", None, DELETE),
                AlterConfigOp("cleanup.policy", "compact", APPEND),
            ]
        }
    )
    values = await _settled(
        admin, resource, {"max.message.bytes": "65536", "cleanup.policy": "delete,compact"}
    )
    # Unlike AlterConfigs, a key not named keeps its value; DELETE returns one to its default.
    assert values["max.message.bytes"] == "65536"
    assert values["cleanup.policy"] == "delete,compact"
    assert "retention.ms" not in values

    await admin.incremental_alter_configs(
        {resource: [AlterConfigOp("cleanup.policy", "delete", SUBTRACT)]}
    )
    assert (await _settled(admin, resource, {"cleanup.policy": "compact"}))[
        "cleanup.policy"
    ] == "compact"


async def test_incremental_alter_broker_config_goes_to_that_broker(
    admin: AIOKafkaAdminClient,
) -> None:
    cluster = await admin.describe_cluster_result()
    broker = str(cluster.brokers[0].nodeId)
    resource = ConfigResource(ConfigResourceType.BROKER, broker)
    key = "log.cleaner.threads"  # a per-broker dynamic config
    await admin.incremental_alter_configs({resource: [AlterConfigOp(key, "2")]})
    try:
        assert (await _settled(admin, resource, {key: "2"})).get(key) == "2"
    finally:
        await admin.incremental_alter_configs({resource: [AlterConfigOp(key, None, DELETE)]})
    assert key not in await _settled(admin, resource, {key: None})


async def test_incremental_alter_configs_rejects_bad_input(
    admin: AIOKafkaAdminClient, make_topic: object
) -> None:
    topic = make_topic(partitions=1)  # type: ignore[operator]
    resource = ConfigResource(ConfigResourceType.TOPIC, topic)
    with pytest.raises(Errors.InvalidConfigurationError, match=f"topic '{topic}'"):
        await admin.incremental_alter_configs({resource: [AlterConfigOp("retention.ms", "soon")]})
    with pytest.raises(Errors.InvalidConfigurationError, match="not LIST"):
        await admin.incremental_alter_configs(
            {resource: [AlterConfigOp("retention.ms", "5", APPEND)]}
        )
    missing = ConfigResource(ConfigResourceType.TOPIC, f"fk-missing-{uuid.uuid4().hex[:10]}")
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing.name):
        await admin.incremental_alter_configs({missing: [AlterConfigOp("retention.ms", "5")]})
    with pytest.raises(ValueError, match="needs a string value"):
        AlterConfigOp("retention.ms", None, SET)
