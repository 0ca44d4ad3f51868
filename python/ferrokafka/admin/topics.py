"""The admin client's topic operations: create, delete, list and describe topics, describe
the cluster, add partitions, and wait until a change has reached every broker."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from .. import errors as Errors
from ..protocol import Api
from ..retry import polling
from ._base import AdminBase, Body, plain, raise_for, raise_for_each
from .new_partitions import NewPartitions
from .new_topic import NewTopic

if TYPE_CHECKING:
    from .._native import (
        CreatePartitionsRequest,
        CreateTopicsRequest,
        DeleteTopicsRequest,
        MetadataRequest,
    )

__all__ = ["TopicOperations"]

_ZERO_UUID = bytes(16)
"""A topic id not given (DeleteTopics names topics)."""


class TopicOperations(AdminBase):
    """Topics and partitions (CreateTopics, DeleteTopics and CreatePartitions go to the
    least-loaded broker, which KRaft forwards to the controller, KIP-590)."""

    async def create_topics(
        self,
        new_topics: list[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> Body:
        """Send CreateTopics; returns the decoded response. Per-topic ``error_code``s are
        reported there, as aiokafka does, not raised."""
        body: CreateTopicsRequest = {
            "topics": [t.to_request() for t in new_topics],
            "timeout_ms": self._timeout_ms(timeout_ms),
            "validate_only": validate_only,
        }
        return plain(await self._client.send_to_any(Api.CREATE_TOPICS, body))

    async def delete_topics(self, topics: list[str], timeout_ms: int | None = None) -> Body:
        """Send DeleteTopics; returns the decoded response with per-topic ``error_code``s."""
        body: DeleteTopicsRequest = {
            "topic_names": list(topics),
            "topics": [{"name": t, "topic_id": _ZERO_UUID} for t in topics],
            "timeout_ms": self._timeout_ms(timeout_ms),
        }
        return plain(await self._client.send_to_any(Api.DELETE_TOPICS, body))

    async def list_topics(self) -> list[str]:
        """Every topic name in the cluster (internal topics included), sorted."""
        response = await self._client.fetch_metadata(topics=None)
        return sorted(t["name"] for t in response["topics"] if t["name"])

    async def describe_topics(self, topics: list[str] | None = None) -> list[Body]:
        """The Metadata response's topic entries (partitions, leaders, replicas, ISR) for
        ``topics``, or for every topic. A named topic the broker does not know raises its
        error (``UnknownTopicOrPartitionError``)."""
        response = await self._client.fetch_metadata(topics=None if topics is None else set(topics))
        result = response["topics"]
        if topics is not None:
            for t in result:
                raise_for(t["error_code"], f"describe_topics: topic {t['name']!r}")
        return cast(list[Body], result)

    async def describe_cluster(self) -> Body:
        """Cluster id, controller id and brokers (the Metadata response without topics)."""
        response = await self._client.fetch_metadata(topics=set())
        return {k: v for k, v in response.items() if k != "topics"}

    async def create_partitions(
        self,
        topic_partitions: dict[str, NewPartitions],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> Body:
        """Grow topics to ``NewPartitions.total_count`` partitions; returns the decoded
        response. The first per-topic error is raised (``InvalidPartitionsError`` for a count
        that does not grow the topic, ``UnknownTopicOrPartitionError`` for an unknown one)."""
        body: CreatePartitionsRequest = {
            "topics": [
                {
                    "name": name,
                    "count": new.total_count,
                    "assignments": None
                    if new.new_assignments is None
                    else [{"broker_ids": list(a)} for a in new.new_assignments],
                }
                for name, new in topic_partitions.items()
            ],
            "timeout_ms": self._timeout_ms(timeout_ms),
            "validate_only": validate_only,
        }
        response = await self._client.send_to_any(Api.CREATE_PARTITIONS, body)
        raise_for_each(response["results"], "could not create partitions for topic", "name")
        return plain(response)

    async def wait_for_topic(
        self, name: str, *, partitions: int | None = None, present: bool = True, timeout: float
    ) -> None:
        """Wait until every broker's metadata shows ``name`` with a leader for each partition
        (``present=True``) or no longer knows it (``present=False``)."""
        last: str = "no answer yet"

        async def settled() -> bool:
            nonlocal last
            try:
                if await self._topic_state_everywhere(name, partitions, present):
                    return True
                last = "not yet propagated to every broker"
            except Errors.KafkaError as exc:
                last = str(exc)
            return False

        state = "appear" if present else "disappear"
        await polling(
            settled,
            timeout=timeout,
            interval=self._retry_backoff,
            timed_out=lambda: Errors.KafkaTimeoutError(
                f"topic {name!r} did not {state} within {timeout:.1f}s ({last})"
            ),
        )

    async def _topic_state_everywhere(
        self, name: str, partitions: int | None, present: bool
    ) -> bool:
        await self._client.refresh_metadata()
        request: MetadataRequest = {"topics": [{"name": name}], "allow_auto_topic_creation": False}
        for broker in self._client.cluster.broker_ids():
            response = await self._client.send(broker, Api.METADATA, request)
            topic = next((t for t in response["topics"] if t["name"] == name), None)
            exists = topic is not None and topic["error_code"] == 0
            if not present:
                if exists:
                    return False
                continue
            if not exists or topic is None:
                return False
            parts = topic["partitions"]
            if partitions is not None and len(parts) != partitions:
                return False
            if any(p["leader_id"] < 0 or p["error_code"] for p in parts):
                return False
        return True
