"""The member of no group: a consumer without a ``group_id``. It keeps no committed offsets
(``commit`` and ``committed`` raise ``IllegalOperation``, as aiokafka's do), and a subscription
assigns every partition of the subscribed topics, kept up to date as topics and partitions
appear in the cluster metadata (a pattern is matched again on every update)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ... import errors as Errors
from ...client import AIOKafkaClient
from ...cluster import ClusterMetadata
from ...structs import OffsetAndMetadata, TopicPartition
from ...waits import Signal
from ..subscription_state import SubscriptionState
from .base import GroupMember

if TYPE_CHECKING:
    from ...config import ConsumerConfig

__all__ = ["NoGroupMember"]

log = logging.getLogger(__name__)


class NoGroupMember(GroupMember):
    """A consumer's part in no group."""

    has_group = False

    def __init__(
        self, client: AIOKafkaClient, subscription: SubscriptionState, config: ConsumerConfig
    ) -> None:
        self._client = client
        self._subscription = subscription
        self._exclude_internal_topics = config.exclude_internal_topics
        self._started = False
        self._closed = False
        self.failed = Signal()  # never set: there is no membership to fail
        self.assignment_ready = Signal()
        self.assignment_ready.set()  # the consumer assigns its partitions itself

    async def start(self) -> None:
        self._started = True
        self._client.cluster.add_listener(self._assign_from_metadata)
        if self._subscription.partitions_auto_assigned():
            await self._client.refresh_metadata()

    async def close(self) -> None:
        self._closed = True
        self._client.cluster.remove_listener(self._assign_from_metadata)

    def polled(self) -> None:
        """No poll deadline without a group."""

    def raise_if_failed(self) -> None:
        """Nothing can fail."""

    def subscription_changed(self) -> None:
        if self._subscription.partitions_auto_assigned():
            self._assign_from_metadata(self._client.cluster)
            if self._started and not self._closed:
                task = asyncio.ensure_future(self._client.refresh_metadata())
                task.add_done_callback(_log_failure)
        else:
            self._subscription.take_unsubscribed()  # no group to tell

    def _assign_from_metadata(self, cluster: ClusterMetadata) -> None:
        """Every partition of the subscribed topics (a pattern matched again), on every
        metadata update, as aiokafka's group-less consumer does."""
        if self._closed or not self._subscription.partitions_auto_assigned():
            return
        if self._subscription.pattern is not None:
            self._subscription.match_topics(cluster.topics(self._exclude_internal_topics))
        self._subscription.take_unsubscribed()  # no group to tell
        parts = {
            TopicPartition(topic, p)
            for topic in self._subscription.subscription
            for p in cluster.partitions_for_topic(topic) or ()
        }
        if parts != self._subscription.assigned_partitions():
            self._subscription.assign_from_subscribed(parts)

    def require_group(self) -> None:
        raise Errors.IllegalOperation("Requires group_id")

    def refuse_commit(self) -> None:
        self.require_group()

    async def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.require_group()

    async def fetch_committed_offsets(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        self.require_group()
        return {}

    async def committed_positions(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """None: without a group, every partition starts where ``auto_offset_reset`` says."""
        return {}


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("background consumer task failed: %s", task.exception())
