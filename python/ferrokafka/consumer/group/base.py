"""What the consumer asks of its group membership (``GroupMember``), and what the members of
both group protocols share (``GroupMembership``): offsets, the auto-commit routine, calling the
rebalance listener, revoking partitions, the background tasks and close."""

from __future__ import annotations

import abc
import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from ... import _native
from ... import errors as Errors
from ...abc import ConsumerRebalanceListener
from ...client import AIOKafkaClient
from ...conn import AUTHENTICATION_ERRORS
from ...metrics.consumer import CoordinatorMetrics
from ...structs import OffsetAndMetadata, TopicPartition
from ...waits import Signal, finish_tasks
from ..subscription_state import SubscriptionState
from .offsets import OffsetsCoordinator

if TYPE_CHECKING:
    from ...cluster import ClusterMetadata
    from ...config import ConsumerConfig

__all__ = ["GroupMember", "GroupMembership", "call_listener"]

_REPORTED = (*AUTHENTICATION_ERRORS, Errors.TopicAuthorizationFailedError)

log = logging.getLogger(__name__)


class GroupMember(abc.ABC):
    """A consumer's part in its group, as the consumer uses it: ``NoGroupMember`` without a
    ``group_id``, ``ClassicMember`` or ``Kip848Member`` with one (``group_member`` chooses).
    The consumer calls these and nothing else."""

    failed: Signal
    """Set when membership failed for good, or hit a refusal the application must hear of
    (``raise_if_failed`` raises why): a waiting poll wakes up on it."""
    assignment_ready: Signal
    """Set once the member has its first assignment: the consumer's ``start()`` waits for it
    when partitions are assigned by subscription."""
    has_group: bool = True
    """False for ``NoGroupMember``, whose ``polled`` and ``raise_if_failed`` do nothing (the
    consumer's per-record path skips them)."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Begin, once the client has bootstrapped and before the fetcher starts."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End: commit with auto-commit, give up the partitions, leave the group."""

    @abc.abstractmethod
    def polled(self) -> None:
        """The application polled (the ``max_poll_interval_ms`` clock starts again)."""

    @abc.abstractmethod
    def raise_if_failed(self) -> None:
        """Raise why membership failed for good, if it did."""

    @abc.abstractmethod
    def subscription_changed(self) -> None:
        """The application subscribed or unsubscribed."""

    @abc.abstractmethod
    def require_group(self) -> None:
        """Raise ``IllegalOperation`` if there is no group to keep committed offsets in."""

    @abc.abstractmethod
    def refuse_commit(self) -> None:
        """Raise ``CommitFailedError`` if this member may not commit now (it left the group);
        without membership of a subscription, any commit is allowed."""

    @abc.abstractmethod
    async def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Commit ``offsets`` (validated by the consumer)."""

    @abc.abstractmethod
    async def fetch_committed_offsets(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offsets of ``partitions`` (None where none is)."""

    async def committed_positions(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """Where the fetcher starts ``partitions`` that have no position: their committed
        offsets, where there are some."""
        committed = await self.fetch_committed_offsets(partitions)
        return {tp: om.offset for tp, om in committed.items() if om is not None}


class GroupMembership(OffsetsCoordinator, GroupMember):
    """Membership of ``config.group_id``, the part both group protocols share. A protocol
    adds its routines (``_routines``), says when the member is in the group (``_in_group``),
    how it leaves (``_leave``) and how it follows subscription changes."""

    def __init__(
        self, client: AIOKafkaClient, subscription: SubscriptionState, config: ConsumerConfig
    ) -> None:
        if config.group_id is None:
            raise ValueError("group membership needs a group_id")
        super().__init__(
            client,
            config.group_id,
            retry_backoff_ms=config.retry_backoff_ms,
            request_timeout_ms=config.request_timeout_ms,
            group_instance_id=config.group_instance_id,
        )
        self._subscription = subscription
        self.group_metrics = CoordinatorMetrics(client.metrics, subscription)
        self.commit_sensor = self.group_metrics.commit
        self._auto_commit = config.auto_commit
        self._auto_commit_interval = config.auto_commit_interval_ms / 1000
        self._max_poll_interval = config.max_poll_interval_ms / 1000
        self._rebalance_timeout_ms = config.rebalance_timeout_ms or config.max_poll_interval_ms
        self._last_poll = time.monotonic()
        self.poll_clock = _native.PollClock(self._last_poll)
        """The per-record path's polls (the extension reads and moves it): it calls
        ``raise_if_failed()`` and ``polled()`` only while ``attention`` is set."""
        self._tasks: dict[str, asyncio.Task[None]] = {}
        """The running routines by task name."""
        self._closing = False
        self._fatal: Exception | None = None
        self._refused: Errors.KafkaError | None = None
        self.failed = Signal()
        self.assignment_ready = Signal()
        self._wake = Signal()
        """Wakes the member's routine early (a subscription change, a rejoin to do)."""
        self._closed = False
        subscription.on_change(self._on_subscription_change)

    # -- what a protocol adds ------------------------------------------------------------------

    @abc.abstractmethod
    def _routines(self) -> dict[str, Callable[[], Coroutine[Any, Any, None]]]:
        """The protocol's background routines, by task name."""

    @abc.abstractmethod
    def _in_group(self) -> bool:
        """Whether this member has a generation (epoch) in the group."""

    @abc.abstractmethod
    async def _leave(self, reason: str) -> None:
        """Leave the group on close (errors are logged, not raised)."""

    @abc.abstractmethod
    def _on_subscription_change(self) -> None:
        """Called after every change of the subscription state."""

    def _may_auto_commit(self) -> bool:
        """Whether the auto-commit routine may commit now."""
        return self._in_group()

    def _may_commit_on_close(self) -> bool:
        return self._in_group()

    async def _commit_now(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Commit as the member's own routines and ``close`` do: without waiting for the
        membership to change."""
        await self.commit(offsets)

    # -- the consumer's side -------------------------------------------------------------------

    async def start(self) -> None:
        self._last_poll = time.monotonic()
        routines = self._routines()
        if self._auto_commit:
            routines["ferrokafka-autocommit"] = self._auto_commit_routine
        for name, routine in routines.items():
            self._start_routine(name, routine)
        self._client.cluster.add_listener(self._metadata_updated)

    def _start_routine(self, name: str, routine: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.create_task(routine(), name=name)
        self._tasks[name] = task
        task.add_done_callback(functools.partial(self._routine_ended, name, routine))

    def _routine_ended(
        self, name: str, routine: Callable[[], Coroutine[Any, Any, None]], task: asyncio.Task[None]
    ) -> None:
        """A routine lasts as long as the membership. One that ends on a cancellation that was
        not its own (a ``CancelledError`` leaking in from something it awaited, as a shared
        lookup cancelled by another caller once did) is started again: a member whose
        heartbeat silently stopped was dropped from the group while it still thought itself
        in it, and its next commit failed. One cancelled itself (``close()``, or the event
        loop shutting down) stays ended. One that raised is a bug the application hears of
        from its next poll, as of a failed membership. One that returned did so because the
        membership failed for good."""
        if self._closing or self._tasks.get(name) is not task:
            return
        if task.cancelled():
            if _cancel_requested(task):
                return
            log.warning("group %s: %s was cancelled; starting it again", self.group_id, name)
            self._start_routine(name, routine)
            return
        exc = task.exception()
        if exc is not None:
            log.error("group %s: %s failed", self.group_id, name, exc_info=exc)
            self._fail(exc if isinstance(exc, Exception) else Errors.KafkaError(repr(exc)))

    async def close(self) -> None:
        """Commit (with auto-commit), give up the partitions, and leave the group."""
        if self._closed:
            return
        self._client.cluster.remove_listener(self._metadata_updated)
        self._closing = True  # the routines end now, for good
        await finish_tasks(self._tasks.values(), f"group {self.group_id}")
        member = self._in_group()
        if self._fatal is None:
            if member:
                await self._revoke_unsubscribed()
            if self._auto_commit and self._may_commit_on_close():
                await self._try_commit(self._changed_positions(), "commit on close")
            if member:
                assigned = self._subscription.assigned_partitions()
                if assigned:
                    await self._call_listener("on_partitions_revoked", assigned)
                await self._leave("the consumer is being closed")
        await self.stop_lookup()
        self._closed = True

    def polled(self) -> None:
        self._last_poll = time.monotonic()
        self.poll_clock.attention = self._fatal is not None or self._refused is not None

    def _attend(self) -> None:
        """The next record handed out goes through ``raise_if_failed()`` and ``polled()``."""
        self.poll_clock.attention = True

    def _poll_overdue(self) -> bool:
        """Whether a subscribed member's application has not polled for
        ``max_poll_interval_ms``."""
        last = max(self._last_poll, self.poll_clock.last)
        overdue = time.monotonic() - last > self._max_poll_interval
        return overdue and self._subscription.partitions_auto_assigned()

    def raise_if_failed(self) -> None:
        if self._fatal is not None:
            raise self._fatal
        refused, self._refused = self._refused, None
        if refused is not None:
            self.failed.clear()
            raise refused

    def _metadata_updated(self, cluster: ClusterMetadata) -> None:
        """Subscribed topics the metadata refuses to describe are raised by the next poll, as
        the Java consumer does once per metadata response; lookups go on, so a grant
        resumes. (A pattern matches only topics the principal may describe.)"""
        if self._subscription.pattern is not None:
            return
        refused = sorted(
            topic
            for topic in self._subscription.subscription
            if cluster.topic_error(topic) == Errors.TopicAuthorizationFailedError.errno
        )
        if refused:
            self._refused = Errors.TopicAuthorizationFailedError(
                f"not authorized to describe topics {refused}"
            )
            self.failed.set()
            self._attend()

    def _retrying_after(self, exc: Errors.KafkaError) -> None:
        """A request of the member's routines failed with ``exc`` and will be retried. A
        refused authentication (a rotated password, a revoked token) or topic authorization
        is also raised by the next poll, once, as the Java consumer does: retrying cannot fix
        it by itself, and a consumer that only logged it would wait silently for ever."""
        if isinstance(exc, _REPORTED):
            self._refused = exc
            self.failed.set()
            self._attend()

    def _fail(self, exc: Exception) -> None:
        """Membership failed for good (authorization, a fenced static member, no common
        assignor, a failing user assignor): stop, and raise ``exc`` on the next poll."""
        if self._fatal is None:
            log.error("group %s: %s", self.group_id, exc)
            self._fatal = exc
            self.failed.set()
            self._attend()

    def subscription_changed(self) -> None:
        """Nothing to do: the subscription state's change callback tells the member."""

    def require_group(self) -> None:
        """There is a group."""

    def refuse_commit(self) -> None:
        """Any commit is allowed (a protocol may refuse some)."""

    # -- commits and revocations ---------------------------------------------------------------

    def _changed_positions(
        self, among: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The positions (of ``among``, default all assigned partitions) not committed yet."""
        wanted = None if among is None else set(among)
        return {
            tp: om
            for tp, om in self._subscription.all_consumed_offsets().items()
            if (wanted is None or tp in wanted) and self._subscription.state(tp).committed != om
        }

    def _record_committed(self, committed: dict[TopicPartition, OffsetAndMetadata]) -> None:
        for tp, om in committed.items():
            if self._subscription.is_assigned(tp):
                self._subscription.state(tp).committed = om

    async def _try_commit(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], what: str, *, now: bool = True
    ) -> None:
        """Commit ``offsets`` (if any) where a failure is only logged (``what`` failed): with
        ``now``, as the member's own routines do (``_commit_now``), else as ``commit``."""
        if not offsets:
            return
        try:
            await (self._commit_now(offsets) if now else self.commit(offsets))
        except Errors.KafkaError as exc:
            log.warning("group %s: %s failed: %s", self.group_id, what, exc)

    async def _revoke(self, partitions: set[TopicPartition]) -> None:
        """Give ``partitions`` up in a rebalance: stop handing out their records, commit their
        positions (with auto-commit), then ``on_partitions_revoked``."""
        self._hold(partitions)
        if self._auto_commit:
            await self._try_commit(self._changed_positions(partitions), "commit before revocation")
        await self._call_listener("on_partitions_revoked", partitions)

    def _hold(self, partitions: set[TopicPartition]) -> None:
        """No record of ``partitions`` is handed out any more: the revocation runs beside the
        application's polls, and a record handed out after the commit and the listener would
        be processed again by the next owner (the Java consumer revokes inside its poll)."""
        for tp in partitions:
            if self._subscription.is_assigned(tp):
                self._subscription.hold(tp)

    async def _revoke_unsubscribed(self) -> None:
        """Revoke the partitions a subscription change or ``unsubscribe()`` took out of the
        assignment: commit their positions (with auto-commit, while this member is in the
        group), then call ``on_partitions_revoked``."""
        if not self._subscription.has_unsubscribed:
            return
        commit = self._auto_commit and self._in_group()
        states, listener = self._subscription.take_unsubscribed()
        log.info("group %s: partitions revoked (unsubscribed): %s", self.group_id, sorted(states))
        if commit:
            offsets = {
                tp: OffsetAndMetadata(st.position, "")
                for tp, st in states.items()
                if st.position is not None and st.committed != OffsetAndMetadata(st.position, "")
            }
            await self._try_commit(offsets, "commit before revocation")
        await call_listener(listener, "on_partitions_revoked", set(states), self.group_id)

    async def _call_listener(self, method: str, partitions: set[TopicPartition]) -> None:
        log.info(
            "group %s: generation %s, partitions %s: %s",
            self.group_id,
            self.generation,
            "assigned" if method == "on_partitions_assigned" else "revoked",
            partitions_text(partitions),
        )
        await call_listener(self._subscription.listener, method, partitions, self.group_id)

    async def _auto_commit_routine(self) -> None:
        while self._fatal is None:
            await asyncio.sleep(self._auto_commit_interval)
            if self._poll_overdue():
                # The application has not polled for max_poll_interval_ms (slow processing,
                # or its code blocked the event loop): the records it holds may be
                # unprocessed, and the member is leaving the group, so nothing is committed.
                continue
            if self._may_auto_commit():
                await self._try_commit(self._changed_positions(), "auto-commit", now=False)


def _cancel_requested(task: asyncio.Task[Any]) -> bool:
    """Whether ``task.cancel()`` was called (Python 3.11+ counts the requests; on 3.10 every
    cancellation outside ``close()`` counts as one that leaked in)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling is not None and bool(cancelling())


def partitions_text(partitions: Iterable[TopicPartition]) -> str:
    """``topic[0], topic[1]``: partitions for a log line, in order."""
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(partitions)) or "none"


async def call_listener(
    listener: ConsumerRebalanceListener | None,
    method: str,
    partitions: set[TopicPartition],
    group_id: str,
) -> None:
    """Call a rebalance callback (plain or async); a user error is logged, not raised."""
    if listener is None:
        return
    try:
        result = getattr(listener, method)(set(partitions))
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("group %s: user's %s failed", group_id, method)
