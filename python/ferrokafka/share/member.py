"""Share-group membership (KIP-932): ShareGroupHeartbeat joins, heartbeats, brings the
assignment and leaves, as ConsumerGroupHeartbeat does for KIP-848 consumer groups; the broker
assigns.

A share member owns no partitions the way a consumer-group member does: several members may
be assigned the same partition, and each record is locked to the member that acquired it. So
there is nothing to revoke or commit before an assignment changes; the member only learns
which partitions to fetch from. The member id is made here (a UUID) and kept for the
consumer's lifetime; epoch 0 joins, -1 leaves. A member the broker no longer knows, or whose
epoch was fenced, joins again with epoch 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..consumer.group.offsets import COORDINATOR_MOVED, OffsetsCoordinator
from ..protocol import Api
from ..structs import TopicPartition
from ..waits import finish_tasks, wait_event

if TYPE_CHECKING:
    from .._native import GroupAssignment

__all__ = ["ShareMember"]

log = logging.getLogger(__name__)

_FENCED_MEMBER_EPOCH = 110
# A broker answering heartbeat_interval_ms 0 (or close to it) would turn the heartbeat routine
# into a busy loop of ShareGroupHeartbeats: never more often than this (as Kip848Member).
_MIN_HEARTBEAT_INTERVAL_MS = 100
_REJOIN = (Errors.UnknownMemberIdError,)


class ShareMember(OffsetsCoordinator):
    """This share consumer's membership of the share group ``group_id``."""

    def __init__(
        self,
        client: AIOKafkaClient,
        group_id: str,
        *,
        rack: str | None = None,
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 30000,
    ) -> None:
        super().__init__(
            client,
            group_id,
            retry_backoff_ms=retry_backoff_ms,
            request_timeout_ms=request_timeout_ms,
        )
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self._rack = rack
        self._topics: list[str] = []
        self._sent_topics: list[str] | None = None
        self._interval = 1.0  # seconds, until the first response gives the broker's interval
        self.assignment: frozenset[TopicPartition] = frozenset()
        self.assignment_changed = asyncio.Event()
        """Set whenever ``assignment`` changes (the fetcher clears it)."""
        self._wake = asyncio.Event()
        self._failure: Errors.KafkaError | None = None
        self.joined = asyncio.Event()
        """Set once the coordinator has answered a join (or the membership failed)."""
        self._task: asyncio.Task[None] | None = None

    # -- the consumer's side ------------------------------------------------------------------

    def subscribe(self, topics: list[str]) -> None:
        """Heartbeat with these topics next (at once); an empty list leaves the group."""
        self._topics = sorted(set(topics))
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._routine(), name="ferrokafka-share-member")

    @property
    def topics(self) -> frozenset[str]:
        return frozenset(self._topics)

    @property
    def failure(self) -> Errors.KafkaError | None:
        return self._failure

    def raise_if_failed(self) -> None:
        """Raise what ended the membership for good (authorization, a broker without share
        groups, a group of another type)."""
        if self._failure is not None:
            raise self._failure

    async def close(self) -> None:
        """Stop heartbeating and leave the group (best effort: the broker also drops a member
        that stops heartbeating)."""
        task, self._task = self._task, None
        if task is not None:
            # Not `task.cancel(); await task` under a suppress: that would also swallow a
            # cancellation of close() itself.
            await finish_tasks([task], "share group member")
        try:
            if self.epoch > 0:
                with contextlib.suppress(Errors.KafkaError):
                    await self._heartbeat(-1)
        finally:
            self.epoch = -1
            await self.stop_lookup()

    # -- heartbeats ---------------------------------------------------------------------------

    async def _routine(self) -> None:
        while self._failure is None:
            if not self._topics and self.epoch <= 0:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                await self._heartbeat(self.epoch if self._topics else -1)
            except asyncio.CancelledError:
                raise
            except Errors.IncompatibleBrokerVersion as exc:
                # A broker without share groups (before Kafka 4.0, or with them disabled).
                self._failure = Errors.IncompatibleBrokerVersion(
                    f"share group {self.group_id!r}: {exc} (share groups need Kafka 4.0+)"
                )
                self.assignment_changed.set()
                self.joined.set()
                break
            except Errors.KafkaError as exc:
                if self._failure is not None:
                    break
                log.info("share group %s: heartbeat failed: %s", self.group_id, exc)
                await asyncio.sleep(self._retry_backoff)
                continue
            self._wake.clear()
            await wait_event(self._wake, self._interval)

    async def _heartbeat(self, epoch: int) -> None:
        topics = self._topics
        for topic in topics:
            if self._client.cluster.topic_info(topic) is None:
                self._client.add_topic(topic)
        # Unchanged since the last heartbeat the broker answered: sent as null.
        names = None if topics == self._sent_topics and epoch > 0 else topics
        response, _ = await self.coordinator_request(
            Api.SHARE_GROUP_HEARTBEAT,
            {
                "group_id": self.group_id,
                "member_id": self.member_id,
                "member_epoch": epoch,
                "rack_id": self._rack,
                "subscribed_topic_names": names,
            },
        )
        if epoch < 0:
            self.epoch = 0  # out of the group; a later heartbeat joins again
            self._sent_topics = None
            self._set_assignment(frozenset())
            return
        code = response["error_code"]
        if code:
            self._on_error(code, response["error_message"])
            return
        self._sent_topics = topics
        self.epoch = response["member_epoch"]
        self.joined.set()
        self._interval = max(response["heartbeat_interval_ms"], _MIN_HEARTBEAT_INTERVAL_MS) / 1000
        assignment = response["assignment"]
        if assignment is not None:
            await self._assign(assignment)

    def _on_error(self, code: int, message: str | None) -> None:
        cls = Errors.for_code(code)
        text = f"ShareGroupHeartbeat of share group {self.group_id!r}: {message or cls.__name__}"
        if code == _FENCED_MEMBER_EPOCH or cls in _REJOIN:
            log.info("%s; joining again", text)
            self.epoch = 0
            self._sent_topics = None
            self._set_assignment(frozenset())
            raise cls(text)
        if cls in COORDINATOR_MOVED:
            self.coordinator_dead(cls.__name__)
            raise cls(text)
        if cls.retriable:
            raise cls(text)
        self._failure = cls(text)
        self.assignment_changed.set()  # a waiting poll hears of it
        self.joined.set()
        raise self._failure

    async def _assign(self, assignment: GroupAssignment) -> None:
        by_id = self._names_by_id()
        target: set[TopicPartition] = set()
        for entry in assignment["topic_partitions"]:
            tid = bytes(entry["topic_id"])
            if tid not in by_id:
                await self._client.refresh_metadata()
                by_id = self._names_by_id()
            topic = by_id.get(tid)
            if topic is not None:
                target.update(TopicPartition(topic, p) for p in entry["partitions"])
        self._set_assignment(frozenset(target))

    def _names_by_id(self) -> dict[bytes, str]:
        by_id = {}
        for name in self._topics:
            info = self._client.cluster.topic_info(name)
            if info is not None and info.topic_id is not None:
                by_id[info.topic_id.bytes] = name
        return by_id

    def _set_assignment(self, assignment: frozenset[TopicPartition]) -> None:
        if assignment != self.assignment:
            self.assignment = assignment
            log.info(
                "share group %s: epoch %s as %s, assigned %s",
                self.group_id,
                self.epoch,
                self.member_id,
                sorted(assignment),
            )
            self.assignment_changed.set()
