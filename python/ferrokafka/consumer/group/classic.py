"""Group membership with the classic protocol (KIP-62, KIP-345, KIP-429): JoinGroup and SyncGroup
to the coordinator on its own connection, the heartbeat task, rebalance callbacks, auto-commit,
``max_poll_interval_ms``, static membership and LeaveGroup on close.

Assignors (``assignors/``) have aiokafka's interface: ``name``, ``metadata(topics)``,
``assign(cluster, members)``, ``on_assignment(assignment)``, each called with ferrokafka's extra
arguments only where the method takes them; a ``rebalance_protocol`` of ``"COOPERATIVE"`` makes
revocation incremental (KIP-429): only the partitions that move are revoked, and the member
rejoins once to hand them over. The Subscription and Assignment they read and write are in
``subscription.py``.

One task does the joining, so a member never has two JoinGroups in flight. A request to rejoin
that arrives after the JoinGroup was answered (a subscription change, new partitions, a heartbeat
saying the group rebalances) is kept and acted on once the current round completes. Partitions
are revoked through the listener before every eager rejoin (committed first with auto-commit),
when they move away in a cooperative round (committed first as well), when a subscription change
or ``unsubscribe()`` drops them, and, without a commit, when the member lost its generation.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from ... import errors as Errors
from ...client import AIOKafkaClient
from ...protocol import Api
from ...structs import OffsetAndMetadata, TopicPartition
from ...waits import wait_event
from ..subscription_state import SubscriptionState
from .assignors.roundrobin import RoundRobinPartitionAssignor
from .base import GroupMembership, partitions_text
from .offsets import COORDINATOR_MOVED
from .subscription import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata

if TYPE_CHECKING:
    from ..._native import (
        HeartbeatRequest,
        JoinGroupRequest,
        JoinGroupRequestProtocol,
        JoinGroupResponse,
        JoinGroupResponseMember,
        LeaveGroupRequest,
        SyncGroupRequest,
        SyncGroupRequestAssignment,
    )
    from ...config import ConsumerConfig

__all__ = ["ClassicMember"]

log = logging.getLogger(__name__)

_METADATA_CHECK_INTERVAL = 1.0
"""Seconds: the longest the joining routine sleeps, when nothing wakes it, between looks at the
cluster metadata (partition counts, topics a pattern matches). A metadata update does not wake
it, so a change the update brings starts a rejoin within this time (or ``metadata_max_age_ms``
when that is shorter), not a whole ``metadata_max_age_ms`` later."""

_FATAL = (
    Errors.GroupAuthorizationFailedError,
    Errors.FencedInstanceIdError,
    Errors.InconsistentGroupProtocolError,
    Errors.InvalidSessionTimeoutError,
    Errors.GroupMaxSizeReachedError,
    Errors.UnsupportedVersionError,
)


def _call_assignor(method: Callable[..., Any], *args: Any, **extras: Any) -> Any:
    """Call an assignor's method with the ``extras`` it takes: by name where it names them,
    else positionally as far as it has room. Assignors written against aiokafka's narrower
    signatures (``metadata(topics)``, ``assign(cluster, members)``,
    ``on_assignment(assignment)``) get none of ferrokafka's extra arguments."""
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):  # no signature to read: pass everything
        return method(*args, **extras)
    kinds = [p.kind for p in params.values()]
    if inspect.Parameter.VAR_KEYWORD in kinds or all(
        name in params and params[name].kind is not inspect.Parameter.POSITIONAL_ONLY
        for name in extras
    ):
        return method(*args, **extras)
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        room = len(extras)
    else:
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        room = max(sum(k in positional for k in kinds) - len(args), 0)
    return method(*args, *list(extras.values())[:room])


class ClassicMember(GroupMembership):
    """This consumer's membership of ``group_id`` with the classic protocol."""

    def __init__(
        self, client: AIOKafkaClient, subscription: SubscriptionState, config: ConsumerConfig
    ) -> None:
        super().__init__(client, subscription, config)
        self._assignor_choices = list(
            config.partition_assignment_strategy or (RoundRobinPartitionAssignor,)
        )
        self._assignors: list[Any] = []
        self._session_timeout_ms = config.session_timeout_ms
        self._heartbeat_interval = config.heartbeat_interval_ms / 1000
        self._exclude_internal = config.exclude_internal_topics
        self._metadata_max_age = config.metadata_max_age_ms / 1000

        self.protocol: str | None = None
        self.leader_id: str | None = None
        self.rejoin_needed = True
        self._poll_timeout_left = False
        self._snapshot: dict[str, int] = {}
        """Partition counts of the topics the last assignment was made over (the leader: every
        member's topics; a follower: its own, as it saw them before joining)."""
        self._joined_topics: frozenset[str] | None = None
        """The subscription the current generation was joined with."""
        self._joined_subscribe_count = -1
        """``subscribe_count`` when the current generation was joined: every later
        ``subscribe()`` call rejoins, as aiokafka's does, even with the same topics."""
        self._lost: set[TopicPartition] = set()
        """Partitions taken away when the member lost its generation, not yet reported to the
        listener (it hears of them before the next join)."""

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        # One instance per consumer: the eager sticky assignor remembers its last assignment.
        self._assignors = [a() if isinstance(a, type) else a for a in self._assignor_choices]
        await super().start()

    def _routines(self) -> dict[str, Callable[[], Coroutine[Any, Any, None]]]:
        return {
            "ferrokafka-group": self._coordination_routine,
            "ferrokafka-heartbeat": self._heartbeat_routine,
        }

    def _in_group(self) -> bool:
        return self.generation >= 0

    def _may_auto_commit(self) -> bool:
        # Not while a rebalance may move the partitions; with assign(), any time (as any
        # client may commit to the group).
        if not self._subscription.partitions_auto_assigned():
            return True
        return self.generation >= 0 and not self.rejoin_needed

    def _may_commit_on_close(self) -> bool:
        return self.generation >= 0 or not self._subscription.partitions_auto_assigned()

    async def _leave(self, reason: str) -> None:
        # A static member's place is kept for the session timeout.
        if self.group_instance_id is None:
            await self._leave_group(reason)

    def polled(self) -> None:
        """The application polled: restarts the ``max_poll_interval_ms`` clock (and, after a
        poll timeout, brings the member back into the group)."""
        super().polled()
        if self._poll_timeout_left:
            self._poll_timeout_left = False
            self.request_rejoin("the application polled again after a poll timeout")

    def request_rejoin(self, why: str) -> None:
        if not self.rejoin_needed:
            log.info("group %s: rejoining (%s)", self.group_id, why)
        self.rejoin_needed = True
        self._wake.set()

    def _on_subscription_change(self) -> None:
        """Called on every change of the subscription state: rejoin when the subscribed topics
        are no longer the ones joined with; after ``unsubscribe()`` (or a switch to
        ``assign()``), wake the routine to revoke and leave."""
        if not self._subscription.partitions_auto_assigned():
            if self.generation >= 0 or self.member_id or self._subscription.has_unsubscribed:
                self._wake.set()
        elif not self.rejoin_needed and self._subscription_changed_since_join():
            self.request_rejoin("the subscription changed")

    def _subscription_changed_since_join(self) -> bool:
        """Whether the subscribed topics are not those the generation was joined with, or
        ``subscribe()`` was called since (the same topics again, maybe with a new listener)."""
        return (
            self._subscription.subscription != self._joined_topics
            or self._subscription.subscribe_count != self._joined_subscribe_count
        )

    def _work_pending(self) -> bool:
        if self._fatal is not None:
            return False
        if self._subscription.partitions_auto_assigned():
            return self.rejoin_needed and not self._poll_timeout_left
        return self.generation >= 0 or self._subscription.has_unsubscribed

    # -- joining -------------------------------------------------------------------------------

    async def _coordination_routine(self) -> None:
        while self._fatal is None:
            try:
                if self._subscription.partitions_auto_assigned():
                    if self.rejoin_needed and not self._poll_timeout_left:
                        started = time.monotonic()
                        await self._rebalance()
                        if self.assignment_ready.is_set():
                            self.group_metrics.rebalanced(started)
                    self._check_metadata()
                else:
                    await self._give_up_membership()
            except asyncio.CancelledError:
                # A rebalance cut short (the routine is started again unless the member is
                # closing) is done again from the start.
                self.rejoin_needed = True
                raise
            except _FATAL as exc:
                self._fail(exc)
                return
            except Errors.KafkaError as exc:
                log.info("group %s: rebalance failed (%s); retrying", self.group_id, exc)
                self.group_metrics.failed_rebalance.record()
                self._retrying_after(exc)
                self.rejoin_needed = True
                await asyncio.sleep(self._retry_backoff)
                continue
            except Exception as exc:  # e.g. a user-defined assignor failed: tell the user
                log.exception("group %s: group membership failed", self.group_id)
                self._fail(exc)
                return
            if self._work_pending():
                await asyncio.sleep(self._retry_backoff)
                continue
            self._wake.clear()
            await wait_event(self._wake, min(self._metadata_max_age, _METADATA_CHECK_INTERVAL))

    async def _give_up_membership(self) -> None:
        """After ``unsubscribe()`` (or a switch to ``assign()``): revoke what was assigned
        (committing it first) and leave the group; a static member only forgets its generation
        (its place is kept for the session timeout, as on close)."""
        self.rejoin_needed = True  # a later subscribe() joins again
        await self._revoke_unsubscribed()
        if self.generation >= 0 or self.member_id:
            if self.group_instance_id is None:
                await self._leave_group("the consumer unsubscribed")
            else:
                self._reset_generation()
            self._snapshot = {}
            self._joined_topics = None
            self._joined_subscribe_count = -1

    def _check_metadata(self) -> None:
        """Rejoin when the partition counts changed since the assignment was made, or a
        pattern now matches other topics."""
        cluster = self._client.cluster
        if self._subscription.pattern is not None and self._subscription.match_topics(
            cluster.topics(self._exclude_internal)
        ):
            self.request_rejoin("topics matching the pattern changed")
            return
        if self.generation < 0 or not self._snapshot:
            return
        now = self._partition_counts(self._snapshot)
        if now != self._snapshot:
            self.request_rejoin(f"partition counts changed: {self._snapshot} -> {now}")

    def _partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        cluster = self._client.cluster
        return {t: len(cluster.partitions_for_topic(t) or ()) for t in sorted(topics)}

    async def _rebalance(self) -> None:
        await self.ensure_coordinator()
        self.assignment_ready.clear()
        pattern = self._subscription.pattern is not None
        if pattern:
            # Match the pattern against fresh metadata before joining. Joining with the topics
            # of the last match (none, the first time) got the member their partitions only,
            # and a second rebalance followed as soon as the match was updated: start()
            # returned with nothing assigned, and, without auto-commit, what was read between
            # the two rebalances was read again from the committed offsets.
            self._client.set_topics(None)
            await self._client.refresh_metadata()
            self._subscription.match_topics(self._client.cluster.topics(self._exclude_internal))
        await self._revoke_unsubscribed()
        lost, self._lost = self._lost, set()
        owned = self._subscription.assigned_partitions()
        if lost:
            # The group went on without this member (its generation was reset, and the
            # partitions with it): no commit is possible, they may be others' already.
            await self._call_listener("on_partitions_revoked", lost)
        if owned and not self._cooperative():
            # Eager: commit and give up everything before joining.
            await self._revoke(owned)
            self._subscription.assign_from_subscribed(set())
        topics = frozenset(self._subscription.subscription)
        subscribe_count = self._subscription.subscribe_count
        if not pattern:
            for t in topics:
                self._client.add_topic(t)
            await self._client.refresh_metadata()
        # What a follower's assignment will be based on: the metadata as seen before joining.
        snapshot = self._partition_counts(topics)
        joined = await self._join(topics, subscribe_count)
        if joined is None:
            return
        self._snapshot = snapshot
        assignment_bytes = await self._sync(joined)
        if assignment_bytes is None:
            return
        await self._on_join_complete(assignment_bytes)

    def _cooperative(self) -> bool:
        assignor = self._assignor(self.protocol) if self.protocol else self._assignors[0]
        return str(getattr(assignor, "rebalance_protocol", "EAGER")).upper() == "COOPERATIVE"

    def _assignor(self, name: str | None) -> Any:
        for a in self._assignors:
            if a.name == name:
                return a
        raise Errors.IllegalStateError(f"the group chose assignor {name!r}, which is not ours")

    async def _join(self, topics: frozenset[str], subscribe_count: int) -> JoinGroupResponse | None:
        owned = sorted(self._subscription.assigned_partitions())
        protocols: list[JoinGroupRequestProtocol] = []
        for a in self._assignors:
            meta = _call_assignor(
                a.metadata, topics, owned_partitions=owned, generation=self.generation
            )
            protocols.append({"name": a.name, "metadata": meta.encode()})
        body: JoinGroupRequest = {
            "group_id": self.group_id,
            "session_timeout_ms": self._session_timeout_ms,
            "rebalance_timeout_ms": self._rebalance_timeout_ms,
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
            "protocol_type": "consumer",
            "protocols": protocols,
            "reason": "joining",
        }
        # The coordinator holds a JoinGroup until every member has joined (up to the rebalance
        # timeout), so this request may wait that long.
        timeout_ms = self._rebalance_timeout_ms + 5000
        started = time.monotonic()
        for _ in range(3):
            response, _ = await self.coordinator_request(
                Api.JOIN_GROUP, body, timeout_ms=timeout_ms
            )
            code = response["error_code"]
            if code == Errors.MemberIdRequired.errno:
                self.member_id = body["member_id"] = response["member_id"]
                continue
            break
        self.group_metrics.join.record((time.monotonic() - started) * 1000)
        if code:
            self._join_error(code)
            return None
        self.generation = response["generation_id"]
        self.member_id = response["member_id"]
        self.protocol = response.get("protocol_name")
        self.leader_id = response["leader"]
        self._joined_topics = topics
        self._joined_subscribe_count = subscribe_count
        # Requests to rejoin from now on are for the next round (kept, not absorbed by this).
        self.rejoin_needed = False
        log.info(
            "group %s: joined generation %s as %s%s (assignor %s)",
            self.group_id,
            self.generation,
            self.member_id,
            " (leader)" if self.leader_id == self.member_id else "",
            self.protocol,
        )
        return response

    def _join_error(self, code: int) -> None:
        cls = Errors.for_code(code)
        if cls is Errors.UnknownMemberIdError:
            self._reset_generation()
        elif cls in COORDINATOR_MOVED:
            self.coordinator_dead(cls.__name__)
        elif cls is Errors.InconsistentGroupProtocolError:
            raise cls(
                f"group {self.group_id!r} refused this member: its members do not all support "
                f"any of its assignors {[a.name for a in self._assignors]} "
                "(partition_assignment_strategy): give it one the group's members use"
            )
        elif issubclass(cls, _FATAL):
            raise cls(f"JoinGroup of group {self.group_id!r} as {self.member_id!r}")
        elif cls not in (
            Errors.RebalanceInProgressError,
            Errors.GroupLoadInProgressError,
            Errors.IllegalGenerationError,
        ):
            raise cls(f"JoinGroup of group {self.group_id!r}")
        self.rejoin_needed = True

    async def _sync(self, joined: JoinGroupResponse) -> bytes | None:
        assignments: list[SyncGroupRequestAssignment] = []
        if self.leader_id == self.member_id:
            assignments = await self._perform_assignment(joined["members"])
        body: SyncGroupRequest = {
            "group_id": self.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
            "protocol_type": "consumer",
            "protocol_name": self.protocol,
            "assignments": assignments,
        }
        started = time.monotonic()
        response, _ = await self.coordinator_request(Api.SYNC_GROUP, body)
        self.group_metrics.sync.record((time.monotonic() - started) * 1000)
        code = response["error_code"]
        if code:
            cls = Errors.for_code(code)
            if cls in (Errors.UnknownMemberIdError, Errors.IllegalGenerationError):
                self._reset_generation()
            elif cls in COORDINATOR_MOVED:
                self.coordinator_dead(cls.__name__)
            elif issubclass(cls, _FATAL):
                raise cls(f"SyncGroup of group {self.group_id!r}")
            self.rejoin_needed = True
            return None
        return bytes(response["assignment"])

    async def _perform_assignment(
        self, members: list[JoinGroupResponseMember]
    ) -> list[SyncGroupRequestAssignment]:
        assignor = self._assignor(self.protocol)
        decoded = {
            m["member_id"]: ConsumerProtocolMemberMetadata.decode(bytes(m["metadata"]))
            for m in members
        }
        # The leader fetches metadata for every member's topics (the group subscription).
        all_topics: set[str] = set()
        for meta in decoded.values():
            all_topics.update(meta.subscription)
        self._subscription.set_group_subscription(all_topics)
        if self._subscription.pattern is None:  # a pattern keeps metadata on every topic
            for t in all_topics:
                self._client.add_topic(t)
        await self._client.refresh_metadata()
        # The metadata this assignment is made over; if it changes before the round completes,
        # the leader rejoins.
        self._snapshot = self._partition_counts(all_topics | self._subscription.subscription)
        instance_ids = {m["member_id"]: m.get("group_instance_id") for m in members}
        result = dict(
            _call_assignor(
                assignor.assign, self._client.cluster, decoded, group_instance_ids=instance_ids
            )
        )
        for member_id in decoded.keys() - result.keys():  # a custom assignor may leave some out
            result[member_id] = ConsumerProtocolMemberAssignment.from_partitions([])
        log.info(
            "group %s: leader assigned %s",
            self.group_id,
            {m: partitions_text(a.partitions()) for m, a in result.items()},
        )
        return [{"member_id": m, "assignment": a.encode()} for m, a in result.items()]

    async def _on_join_complete(self, assignment_bytes: bytes) -> None:
        if not self._subscription.partitions_auto_assigned():
            return  # unsubscribe() (or assign()) meanwhile: the routine leaves the group next
        assignor = self._assignor(self.protocol)
        if assignment_bytes:
            assignment = ConsumerProtocolMemberAssignment.decode(assignment_bytes)
        else:  # the leader sent nothing for this member
            assignment = ConsumerProtocolMemberAssignment.from_partitions([])
        _call_assignor(assignor.on_assignment, assignment, generation=self.generation)
        new = {TopicPartition(t, p) for t, p in assignment.partitions()}
        subscribed = self._subscription.subscription
        if self._subscription_changed_since_join() or any(tp.topic not in subscribed for tp in new):
            # The subscription changed while joining (or subscribe() was called again): take
            # what is still subscribed, and rejoin with the new topics.
            new = {tp for tp in new if tp.topic in subscribed}
            self.request_rejoin("the subscription changed during the rebalance")
        old = self._subscription.assigned_partitions()
        if self._cooperative():
            revoked = old - new
            if revoked:
                await self._revoke(revoked)
            self._subscription.assign_from_subscribed(old & new)
            self._subscription.assign_from_subscribed(new)
            added = new - old
            if added:
                await self._call_listener("on_partitions_assigned", added)
            if revoked:
                # Partitions moved away this round are owned by nobody until we rejoin.
                self.request_rejoin("partitions were revoked (cooperative protocol)")
        else:
            self._subscription.assign_from_subscribed(new)
            await self._call_listener("on_partitions_assigned", new)
        if self._partition_counts(self._snapshot) != self._snapshot:
            self.request_rejoin("the metadata changed during the rebalance")
        self.assignment_ready.set()

    def _reset_generation(self) -> None:
        """Out of the group: no generation, and so no partitions. They are dropped at once,
        with everything fetched for them, so that no poll hands out records another member
        may be processing already (as the Java consumer's partitions are lost)."""
        self.generation = -1
        self.member_id = ""
        self.protocol = None
        owned = self._subscription.assigned_partitions()
        if owned and self._subscription.partitions_auto_assigned() and not self._closed:
            self._lost |= owned
            self._subscription.assign_from_subscribed(set())

    # -- heartbeats and the poll timeout -------------------------------------------------------

    async def _heartbeat_routine(self) -> None:
        while self._fatal is None:
            await asyncio.sleep(self._heartbeat_interval)
            if self.generation < 0 or self.rejoin_needed or self._fatal is not None:
                continue
            if self._poll_overdue():
                await self._poll_timeout()
                continue
            body: HeartbeatRequest = {
                "group_id": self.group_id,
                "generation_id": self.generation,
                "member_id": self.member_id,
                "group_instance_id": self.group_instance_id,
            }
            try:
                started = time.monotonic()
                response, _ = await self.coordinator_request(Api.HEARTBEAT, body)
                self.group_metrics.heartbeat_done(started)
            except _FATAL as exc:  # e.g. FindCoordinator refused: not authorized for the group
                self._fail(exc)
                return
            except Errors.KafkaError as exc:
                log.info("group %s: heartbeat failed: %s", self.group_id, exc)
                self._retrying_after(exc)
                continue
            code = response["error_code"]
            if not code:
                continue
            cls = Errors.for_code(code)
            if cls is Errors.RebalanceInProgressError:
                self.request_rejoin("the group is rebalancing")
            elif cls in (Errors.UnknownMemberIdError, Errors.IllegalGenerationError):
                self._reset_generation()
                self.request_rejoin(f"heartbeat: {cls.__name__}")
            elif cls in COORDINATOR_MOVED:
                # Find the coordinator again and keep heartbeating: the group and this
                # member's generation live on at the new coordinator; no rebalance needed.
                self.coordinator_dead(cls.__name__)
            elif issubclass(cls, _FATAL):
                self._fail(cls(f"heartbeat of group {self.group_id!r} as {self.member_id!r}"))
                return

    async def _poll_timeout(self) -> None:
        log.warning(
            "group %s: no poll for more than max_poll_interval_ms (%.0f s): leaving the group so "
            "its partitions go to other members; raise max_poll_interval_ms or lower "
            "max_poll_records if processing takes this long",
            self.group_id,
            self._max_poll_interval,
        )
        if self.group_instance_id is None:
            await self._leave_group("consumer poll timeout has expired")
        self._reset_generation()
        self._poll_timeout_left = True
        self._attend()

    async def _leave_group(self, reason: str) -> None:
        body: LeaveGroupRequest = {
            "group_id": self.group_id,
            "member_id": self.member_id,
            "members": [
                {
                    "member_id": self.member_id,
                    "group_instance_id": self.group_instance_id,
                    "reason": reason,
                }
            ],
        }
        try:
            await self.coordinator_request(Api.LEAVE_GROUP, body)
        except Errors.KafkaError as exc:
            log.info("group %s: LeaveGroup failed: %s", self.group_id, exc)
        self._reset_generation()

    async def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Commit as this member (generation and member id)."""
        self.refuse_commit()
        epochs = {
            tp: self._subscription.state(tp).position_epoch
            for tp in offsets
            if self._subscription.is_assigned(tp)
        }
        self._record_committed(await self.commit_offsets(offsets, leader_epochs=epochs))

    def refuse_commit(self) -> None:
        if self._poll_timeout_left:
            raise Errors.CommitFailedError(
                f"Commit cannot be completed: this consumer left group {self.group_id!r} "
                f"because it did not poll within max_poll_interval_ms "
                f"({self._max_poll_interval:.0f} s), and its partitions were given to other "
                "members. Raise max_poll_interval_ms, or lower max_poll_records, so that "
                "processing a poll's records takes less time."
            )
        if (
            self.rejoin_needed
            and self.generation < 0
            and self._subscription.partitions_auto_assigned()
        ):
            raise Errors.CommitFailedError(
                f"Commit cannot be completed: group {self.group_id!r} is rebalancing and this "
                "member has no generation; the partitions may have moved to another member"
            )
