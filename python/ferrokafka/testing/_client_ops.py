"""What the broker harness asks of the cluster, done through ferrokafka's own client: readiness
(ApiVersions + Metadata), topic creation and deletion. Not a sleep, not a JVM tool."""

from __future__ import annotations

from typing import Any

from .. import errors as Errors
from ..admin import AIOKafkaAdminClient, NewTopic, OffsetSpec
from ..client import AIOKafkaClient
from ..retry import polling
from ..structs import TopicPartition

__all__ = ["create_topic", "delete_topic", "wait_until_ready"]

_TOPIC_ALREADY_EXISTS = 36
_UNKNOWN_TOPIC_OR_PARTITION = 3
_READY_POLL_S = 0.1


def _raise_topic_errors(action: str, results: list[dict[str, Any]], *, ignore: int) -> None:
    """Raise the error of the first per-topic result that failed (other than ``ignore``)."""
    for topic in results:
        code = topic["error_code"]
        if code and code != ignore:
            raise Errors.for_code(code)(
                f"{action} topic {topic['name']!r}: {topic.get('error_message') or ''}"
            )


async def wait_until_ready(bootstrap_servers: str, expected_brokers: int, timeout: float) -> None:
    """Return once a bootstrap node answers ApiVersions and Metadata naming at least
    ``expected_brokers`` brokers; raise ``KafkaTimeoutError`` after ``timeout`` seconds."""
    last = "no attempt yet"

    async def ready() -> bool:
        nonlocal last
        client = AIOKafkaClient(
            bootstrap_servers=bootstrap_servers,
            request_timeout_ms=5000,
            reconnect_backoff_ms=50,
        )
        try:
            await client.bootstrap()
            seen = len(client.cluster.broker_ids())
            if seen >= expected_brokers:
                return True
            last = f"metadata lists {seen} of {expected_brokers} brokers"
        except Errors.KafkaError as exc:
            last = str(exc)
        finally:
            await client.close()
        return False

    await polling(
        ready,
        timeout=timeout,
        interval=_READY_POLL_S,
        timed_out=lambda: Errors.KafkaTimeoutError(
            f"broker at {bootstrap_servers} not ready within {timeout:.1f}s: {last}"
        ),
    )


async def create_topic(
    bootstrap_servers: str,
    name: str,
    partitions: int = 1,
    replication_factor: int = 1,
    configs: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Create a topic and wait until every broker knows a leader for each partition, and each
    leader serves it. (A leader named in the metadata can still answer NOT_LEADER_OR_FOLLOWER
    for a moment while it takes the partition on; a producer's first batch would then wait
    out a retry backoff, which a test or a benchmark would count as its own time.)"""
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
        response = await admin.create_topics(
            [NewTopic(name, partitions, replication_factor, topic_configs=configs)],
            timeout_ms=int(timeout * 1000),
        )
        _raise_topic_errors("create", response["topics"], ignore=_TOPIC_ALREADY_EXISTS)
        await admin.wait_for_topic(name, partitions=partitions, timeout=timeout)
        everything = {TopicPartition(name, p): OffsetSpec.latest() for p in range(partitions)}
        await admin.list_offsets(everything, timeout_ms=int(timeout * 1000))


async def delete_topic(bootstrap_servers: str, name: str, timeout: float = 30.0) -> None:
    """Delete a topic and wait until no broker lists it."""
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
        response = await admin.delete_topics([name], timeout_ms=int(timeout * 1000))
        _raise_topic_errors("delete", response["responses"], ignore=_UNKNOWN_TOPIC_OR_PARTITION)
        await admin.wait_for_topic(name, present=False, timeout=timeout)
