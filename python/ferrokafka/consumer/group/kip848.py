"""Group membership with the KIP-848 consumer protocol (``group_protocol="consumer"``): one
ConsumerGroupHeartbeat request does joining, heartbeating, assignment and leaving; the broker
computes the assignment and hands it out incrementally (a partition arrives once its previous
owner has acknowledged giving it up).

The member id is generated here (a UUID, as ConsumerGroupHeartbeat v1 expects); epoch 0 joins,
-1 leaves (-2 for a static member, which keeps its place for the session timeout).

Commits carry the member epoch, which the broker checks exactly. It moves a member to a new
epoch while handling a heartbeat, so a commit sent before that heartbeat's response arrived is
refused with STALE_MEMBER_EPOCH; such a commit is sent again once the response brings the new
epoch (``CommitFailedError`` if the member is out of the group by then).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ... import errors as Errors
from ...client import AIOKafkaClient
from ...protocol import Api
from ...structs import OffsetAndMetadata, TopicPartition
from ...waits import wait_event, wait_for
from ..subscription_state import SubscriptionState
from .base import GroupMembership, partitions_text
from .offsets import COORDINATOR_MOVED, commit_failed

if TYPE_CHECKING:
    from ..._native import (
        ConsumerGroupHeartbeatRequest,
        GroupTopicPartitions,
    )
    from ...config import ConsumerConfig

__all__ = ["Kip848Member"]

log = logging.getLogger(__name__)

_REJOIN = (Errors.UnknownMemberIdError,)
_FENCED_ERRNO = 110  # FENCED_MEMBER_EPOCH
_UNRELEASED_INSTANCE_ERRNO = 111

# The broker says how often to heartbeat (heartbeat_interval_ms in each response; Kafka's default
# is 5 s). A zero or near-zero answer (a misconfigured broker, a scripted test peer) must not turn
# the heartbeat routine into a busy loop of ConsumerGroupHeartbeats: never more often than this.
_MIN_HEARTBEAT_INTERVAL_MS = 100


class Kip848Member(GroupMembership):
    """This consumer's membership of ``group_id`` with the consumer protocol."""

    def __init__(
        self, client: AIOKafkaClient, subscription: SubscriptionState, config: ConsumerConfig
    ) -> None:
        super().__init__(client, subscription, config)
        self._server_assignor = config.group_remote_assignor
        self._rack = config.client_rack
        self.member_id = str(uuid.uuid4())
        self.generation = 0  # the member epoch; 0 = (re)join
        self._epoch_waiters: list[asyncio.Future[None]] = []
        self._interval = 1.0  # seconds, until the first response gives the broker's interval
        self._polled = asyncio.Event()
        self._sent_topics: list[str] = []

    def _on_subscription_change(self) -> None:
        """Heartbeat now when the subscription changed: the broker reassigns (or, after
        ``unsubscribe()``, the member leaves)."""
        auto = self._subscription.partitions_auto_assigned()
        if (
            self._subscription.has_unsubscribed
            or (not auto and self.generation > 0)
            or (auto and sorted(self._subscription.subscription) != self._sent_topics)
        ):
            self._wake.set()

    # -- what the protocol adds to the shared membership ----------------------------------------

    def _routines(self) -> dict[str, Callable[[], Coroutine[Any, Any, None]]]:
        return {"ferrokafka-kip848": self._heartbeat_routine}

    def _in_group(self) -> bool:
        return self.generation > 0

    async def _leave(self, reason: str) -> None:
        # A static member (epoch -2) keeps its place for the session timeout.
        epoch = -2 if self.group_instance_id is not None else -1
        with contextlib.suppress(Errors.KafkaError):
            await self._heartbeat(epoch)

    def polled(self) -> None:
        super().polled()
        self._polled.set()

    async def close(self) -> None:
        await super().close()
        self._set_epoch(-1)  # out of the group: a commit waiting for a new epoch fails now

    async def _commit_now(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        # The heartbeat routine and close cannot wait for a heartbeat to bring a new epoch.
        await self._commit(offsets, wait=False)

    async def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        await self._commit(offsets, wait=True)

    async def _commit(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], *, wait: bool
    ) -> None:
        """Commit with the current member epoch. On STALE_MEMBER_EPOCH, with ``wait``, send
        again once a heartbeat response has brought a newer epoch (the heartbeat routine itself
        and ``close`` cannot wait for one: they commit without ``wait``)."""
        deadline = time.monotonic() + self._request_timeout
        sequence = self.begin_commit(offsets)  # a resend is the same commit, never a newer one
        while True:
            epoch = self.generation
            try:
                committed = await self.commit_offsets(offsets, sequence=sequence)
                break
            except Errors.StaleMemberEpochError as exc:
                if not wait or epoch <= 0:
                    raise commit_failed(self.group_id, "STALE_MEMBER_EPOCH") from exc
                log.info(
                    "group %s: commit with member epoch %s was stale; retrying with the next",
                    self.group_id,
                    epoch,
                )
                await self._epoch_after(epoch, deadline)
                if self.generation <= 0:
                    raise commit_failed(self.group_id, "member left the group") from exc
        self._record_committed(committed)

    async def _epoch_after(self, epoch: int, deadline: float) -> None:
        """Until the member epoch is no longer ``epoch`` (CommitFailedError at ``deadline``)."""
        if self.generation != epoch:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._epoch_waiters.append(waiter)
        try:
            await wait_for(waiter, max(deadline - time.monotonic(), 0))
        except asyncio.TimeoutError:
            raise commit_failed(self.group_id, f"member epoch stayed at stale {epoch}") from None
        finally:
            with contextlib.suppress(ValueError):
                self._epoch_waiters.remove(waiter)

    def _set_epoch(self, epoch: int) -> None:
        if epoch == self.generation:
            return
        self.generation = epoch
        waiters, self._epoch_waiters = self._epoch_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- heartbeats ----------------------------------------------------------------------------

    async def _heartbeat_routine(self) -> None:
        while self._fatal is None:
            await self._revoke_unsubscribed()
            if not self._subscription.partitions_auto_assigned():
                if self.generation > 0:
                    # unsubscribe() (or assign()): leave the group; a later subscribe() joins
                    # again.
                    await self._leave("the consumer unsubscribed")
                    self._set_epoch(0)
                self._wake.clear()
                await wait_event(self._wake, self._interval)
                continue
            if self._poll_overdue() and self.generation:
                log.warning(
                    "group %s: no poll within max_poll_interval_ms; leaving the group",
                    self.group_id,
                )
                with contextlib.suppress(Errors.KafkaError):
                    await self._heartbeat(-1)
                await self._lose_all("poll timeout")
                self._set_epoch(0)
                self._polled.clear()
                self._attend()
                await self._polled.wait()  # the application polls again: join afresh
                continue
            try:
                await self._heartbeat(self.generation)
            except asyncio.CancelledError:
                raise
            except Errors.KafkaError as exc:
                log.info("group %s: heartbeat failed: %s", self.group_id, exc)
                self._retrying_after(exc)
                await asyncio.sleep(self._retry_backoff)
                continue
            self._wake.clear()
            await wait_event(self._wake, self._interval)

    async def _heartbeat(self, epoch: int) -> None:
        topics = sorted(self._subscription.subscription)
        self._sent_topics = topics
        for t in topics:
            if self._client.cluster.topic_info(t) is None:
                self._client.add_topic(t)
        owned: dict[bytes, list[int]] = {}
        for tp in self._subscription.assigned_partitions():
            info = self._client.cluster.topic_info(tp.topic)
            if info is not None and info.topic_id is not None:
                owned.setdefault(info.topic_id.bytes, []).append(tp.partition)
        body: ConsumerGroupHeartbeatRequest = {
            "group_id": self.group_id,
            "member_id": self.member_id,
            "member_epoch": epoch,
            "instance_id": self.group_instance_id,
            "rack_id": self._rack,
            "rebalance_timeout_ms": self._rebalance_timeout_ms,
            "subscribed_topic_names": topics,
            "subscribed_topic_regex": None,
            "server_assignor": self._server_assignor,
            "topic_partitions": [
                {"topic_id": tid, "partitions": sorted(ps)} for tid, ps in owned.items()
            ],
        }
        started = time.monotonic()
        response, _ = await self.coordinator_request(Api.CONSUMER_GROUP_HEARTBEAT, body)
        if epoch < 0:
            return
        self.group_metrics.heartbeat_done(started)
        code = response["error_code"]
        if code:
            await self._on_error(code, response.get("error_message"))
            return
        self._set_epoch(response["member_epoch"])
        if member_id := response.get("member_id"):
            self.member_id = member_id
        self._interval = max(response["heartbeat_interval_ms"], _MIN_HEARTBEAT_INTERVAL_MS) / 1000
        assignment = response.get("assignment")
        if assignment is not None:
            await self._reconcile(assignment["topic_partitions"])
            self.assignment_ready.set()

    async def _on_error(self, code: int, message: str | None) -> None:
        cls = Errors.for_code(code)
        text = f"ConsumerGroupHeartbeat of group {self.group_id!r}: {message or cls.__name__}"
        if code == _FENCED_ERRNO or cls in _REJOIN:
            # Fenced or forgotten: the partitions are someone else's now; join afresh.
            log.info("%s; rejoining", text)
            await self._lose_all(cls.__name__)
            self._set_epoch(0)
            return
        if cls in COORDINATOR_MOVED:
            self.coordinator_dead(cls.__name__)
            return
        if cls.retriable:
            return
        if cls is Errors.TopicAuthorizationFailedError:
            # Not fatal (as in the Java consumer): the poll hears it, the member keeps its
            # state and heartbeats again after the backoff, so a grant resumes it.
            cluster = self._client.cluster
            refused = [t for t in self._sent_topics if cluster.topic_error(t) == code]
            raise cls(f"{text}; not authorized to describe topics {refused or self._sent_topics}")
        fatal = cls(text)
        self._fail(fatal)
        raise fatal

    async def _reconcile(self, topic_partitions: list[GroupTopicPartitions]) -> None:
        """Move to the target assignment: revoke what is no longer ours, then take the rest;
        the next heartbeat reports what we own."""
        by_id = self._topic_names_by_id()
        target: set[TopicPartition] = set()
        for entry in topic_partitions:
            tid = bytes(entry["topic_id"])
            if tid not in by_id:
                await self._client.refresh_metadata()
                by_id = self._topic_names_by_id()
            topic = by_id.get(tid)
            if topic is None:
                continue
            target.update(TopicPartition(topic, p) for p in entry["partitions"])
        current = self._subscription.assigned_partitions()
        revoked, added = current - target, target - current
        started = time.monotonic()
        if revoked:
            await self._revoke(revoked)
        self._subscription.assign_from_subscribed(target)
        if added:
            await self._call_listener("on_partitions_assigned", added)
        if revoked or added:
            # A reconciliation is this protocol's rebalance, as the Java consumer counts it.
            self.group_metrics.rebalanced(started)
            log.info(
                "group %s: epoch %s as %s, now %s",
                self.group_id,
                self.generation,
                self.member_id,
                partitions_text(target),
            )
            self._wake.set()  # acknowledge at once

    def _topic_names_by_id(self) -> dict[bytes, str]:
        """The subscribed topics whose ids the metadata in hand knows, by id."""
        by_id = {}
        for name in self._subscription.subscription:
            info = self._client.cluster.topic_info(name)
            if info is not None and info.topic_id is not None:
                by_id[info.topic_id.bytes] = name
        return by_id

    async def _lose_all(self, why: str) -> None:
        lost = self._subscription.assigned_partitions()
        if lost:
            self._hold(lost)
            await self._call_listener("on_partitions_revoked", lost)
            self._subscription.assign_from_subscribed(set())
