"""What the consumer reads: its subscription (or manual assignment) and, per assigned partition,
the position, committed offset, pause flag and pending reset. Subscribing by topics, by pattern
and assigning by hand exclude each other until ``unsubscribe()``, as in aiokafka.

No I/O here. The fetcher reads it to decide what to fetch; the consumer API and (later) the group
coordinator change it. ``version`` increases on every change that could alter what should be
fetched, so waiters can tell that something moved.
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import _native
from .. import errors as Errors
from ..abc import ConsumerRebalanceListener
from ..structs import OffsetAndMetadata, TopicPartition
from ..waits import Signal, wait_event

__all__ = [
    "OffsetResetStrategy",
    "SubscriptionState",
    "SubscriptionType",
    "TopicPartitionState",
]


class SubscriptionType(enum.Enum):
    NONE = "none"
    AUTO_TOPICS = "subscribe(topics)"
    AUTO_PATTERN = "subscribe(pattern)"
    USER_ASSIGNED = "assign()"


class OffsetResetStrategy(enum.IntEnum):
    """What to do without a valid position: ListOffsets timestamps (-2 earliest, -1 latest)."""

    EARLIEST = -2
    LATEST = -1
    NONE = 0

    @classmethod
    def from_config(cls, value: str) -> OffsetResetStrategy:
        try:
            return {"earliest": cls.EARLIEST, "latest": cls.LATEST, "none": cls.NONE}[value]
        except (KeyError, TypeError):
            raise ValueError(
                f"auto_offset_reset must be 'earliest', 'latest' or 'none', got {value!r}"
            ) from None


@dataclass(slots=True)
class TopicPartitionState:
    """One assigned partition, and the owner of its two positions: ``position``, the next
    offset the application gets (what a commit stores), and ``fetch_position``, where the
    next fetch starts, ahead of it by what is buffered. Both move only through the methods
    below, and ``position`` also through the consumer's per-record path (``RecordRun`` in
    the extension: one record at a time, by the rule of ``consumed_through``), for which this
    class has slots."""

    position: int | None = None
    """The next offset to return to the application (and to fetch when nothing is
    buffered)."""
    position_epoch: int = -1
    """The leader epoch of the last batch consumed up to ``position`` (KIP-320)."""
    fetch_position: tuple[int, int] | None = None
    """(offset, leader epoch) the next fetch starts at, past what is buffered; None: at
    ``position``, as when nothing was fetched since the position last moved by a seek or a
    reset."""
    committed: OffsetAndMetadata | None = None
    paused: bool = False
    reset_strategy: OffsetResetStrategy | None = None
    """Set while the position must be reset by ListOffsets."""
    highwater: int | None = None
    last_stable_offset: int | None = None
    log_start_offset: int | None = None
    timestamp: int | None = None
    """Wall-clock ms of the last fetch response that covered this partition."""
    preferred_read_replica: int | None = None
    preferred_read_replica_until: float = 0.0
    error: Errors.KafkaError | None = None
    """An error to raise to the application on its next poll (then cleared)."""
    revoking: bool = False
    """Set while the partition is being given up in a rebalance: no record of it is handed
    out from then on (its position is what gets committed, and the next owner starts there)."""

    @property
    def held(self) -> bool:
        """Whether no record of the partition may be handed out now (paused or revoking)."""
        return self.paused or self.revoking

    @property
    def awaiting_reset(self) -> bool:
        return self.reset_strategy is not None

    @property
    def has_valid_position(self) -> bool:
        return self.position is not None and self.reset_strategy is None

    def seek(self, offset: int, epoch: int = -1) -> None:
        self.position = offset
        self.position_epoch = epoch
        self.fetch_position = None
        self.reset_strategy = None
        self.error = None

    def request_reset(self, strategy: OffsetResetStrategy) -> None:
        self.reset_strategy = strategy
        self.position = None
        self.position_epoch = -1
        self.fetch_position = None

    def next_fetch(self, buffered: bool) -> tuple[int, int]:
        """Where the next fetch starts: past what was fetched while some of it is still
        ``buffered``, else at the application's position (which must be valid)."""
        pos = self.fetch_position
        if pos is None or not buffered:
            assert self.position is not None
            pos = self.fetch_position = (self.position, self.position_epoch)
        return pos

    def fetched(self, end: tuple[int, int]) -> None:
        """A response up to ``end`` (the offset after its last batch, and that batch's leader
        epoch) is buffered: the next fetch starts there."""
        self.fetch_position = end

    def fetched_data_dropped(self) -> None:
        """What was fetched is gone: the next fetch starts at the application's position."""
        self.fetch_position = None

    def consumed_through(self, last: int) -> None:
        """The application has every record up to offset ``last``."""
        self.position = last + 1

    def consumed_response(self, end: int, end_epoch: int, last: int | None) -> int:
        """The application has the whole of a response that ends at ``end`` (its last batch's
        epoch ``end_epoch``), ``last`` its last record's offset (None: none): the position
        moves past it, past control batches and aborted data too. The new position."""
        self.position = max(end, last + 1) if last is not None else end
        self.position_epoch = end_epoch
        return self.position

    def read_replica(self, now: float) -> int | None:
        if self.preferred_read_replica is not None and now < self.preferred_read_replica_until:
            return self.preferred_read_replica
        self.preferred_read_replica = None
        return None


@dataclass
class _Subscription:
    type: SubscriptionType = SubscriptionType.NONE
    topics: frozenset[str] = frozenset()
    pattern: re.Pattern[str] | None = None
    listener: ConsumerRebalanceListener | None = None
    group_topics: frozenset[str] = frozenset()
    assignment: dict[TopicPartition, TopicPartitionState] = field(default_factory=dict)


class SubscriptionState:
    """The consumer's subscription and per-partition state."""

    def __init__(self) -> None:
        self._sub = _Subscription()
        self.version = 0
        self.generation = _native.Generation()
        """Moved with ``version`` and when a partition starts being revoked: the consumer's
        per-record path hands out nothing that a change since it began could concern."""
        self._changed = Signal()
        self.needs_assignment = False
        """Set when the subscription changed and the group must (re)assign partitions."""
        self.subscribe_count = 0
        """How many times ``subscribe`` or ``subscribe_pattern`` was called: a group member
        rejoins after each call, the same topics again included, as aiokafka's does (a new
        listener then hears of the assignment)."""
        self._listeners: list[Callable[[], None]] = []
        self._unsubscribed: dict[TopicPartition, TopicPartitionState] = {}
        self._unsubscribed_listener: ConsumerRebalanceListener | None = None

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every change (the fetcher wakes up on it)."""
        self._listeners.append(callback)

    # -- subscription type -----------------------------------------------------------------

    @property
    def subscription_type(self) -> SubscriptionType:
        return self._sub.type

    def _set_type(self, wanted: SubscriptionType) -> None:
        current = self._sub.type
        if current not in (SubscriptionType.NONE, wanted):
            raise Errors.IllegalStateError(
                f"Subscription to topics, partitions and pattern are mutually exclusive: the "
                f"consumer already uses {current.value}, so {wanted.value} is not allowed; "
                "call unsubscribe() first"
            )
        self._sub.type = wanted

    def subscribe(
        self, topics: Iterable[str], listener: ConsumerRebalanceListener | None = None
    ) -> None:
        """Subscribe by topic names (replaces an earlier topic subscription)."""
        self._set_type(SubscriptionType.AUTO_TOPICS)
        self._sub.listener = listener
        self.subscribe_count += 1
        self._change_subscription(frozenset(topics))

    def subscribe_pattern(
        self, pattern: str | re.Pattern[str], listener: ConsumerRebalanceListener | None = None
    ) -> None:
        """Subscribe to every topic whose name matches ``pattern`` from its start
        (``re.match``, as aiokafka matches; the Java client matches whole names)."""
        self._set_type(SubscriptionType.AUTO_PATTERN)
        self._sub.listener = listener
        self._sub.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.subscribe_count += 1
        self._change_subscription(frozenset())

    def match_topics(self, topics: Iterable[str]) -> bool:
        """Pattern subscriptions: re-match against the cluster's topics. True if that changed
        the subscribed set (a rebalance is then needed)."""
        if self._sub.type is not SubscriptionType.AUTO_PATTERN or self._sub.pattern is None:
            return False
        pattern = self._sub.pattern
        matched = frozenset(t for t in topics if pattern.match(t))
        if matched == self._sub.topics:
            return False
        self._change_subscription(matched)
        return True

    def _change_subscription(self, topics: frozenset[str]) -> None:
        self._sub.topics = topics
        self._sub.group_topics = topics
        for tp in [tp for tp in self._sub.assignment if tp.topic not in topics]:
            self._unsubscribed[tp] = self._sub.assignment.pop(tp)
        self.needs_assignment = True
        self._bump()

    def take_unsubscribed(
        self,
    ) -> tuple[dict[TopicPartition, TopicPartitionState], ConsumerRebalanceListener | None]:
        """The group-assigned partitions that left the assignment because the subscription
        changed (or ``unsubscribe()``) since the last call, with their last state, and the
        listener to tell: the group revokes them (commit first) as a rebalance would."""
        taken, self._unsubscribed = self._unsubscribed, {}
        listener = self._sub.listener if self.partitions_auto_assigned() else None
        if listener is None:
            listener = self._unsubscribed_listener
        self._unsubscribed_listener = None
        return taken, listener

    @property
    def has_unsubscribed(self) -> bool:
        return bool(self._unsubscribed)

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment: exactly these partitions (state of ones kept is kept)."""
        wanted = set(partitions)
        for tp in wanted:
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"assign() takes TopicPartition objects, got {tp!r}")
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._sub.topics = frozenset(tp.topic for tp in wanted)
        self._replace_assignment(wanted)

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """Group (or all-partitions) assignment of subscribed topics' partitions."""
        wanted = set(partitions)
        if self._sub.type not in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN):
            raise Errors.IllegalStateError("assignment from a group needs a subscription")
        stray = sorted(tp for tp in wanted if tp.topic not in self._sub.topics)
        if stray:
            raise Errors.IllegalStateError(f"assigned partitions {stray} are not subscribed")
        self.needs_assignment = False
        self._replace_assignment(wanted)

    def _replace_assignment(self, wanted: set[TopicPartition]) -> None:
        old = self._sub.assignment
        self._sub.assignment = {tp: old.get(tp) or TopicPartitionState() for tp in sorted(wanted)}
        for st in self._sub.assignment.values():
            st.revoking = False  # kept after all: its records may be handed out again
        self._bump()

    def unsubscribe(self) -> None:
        if self.partitions_auto_assigned():
            self._unsubscribed.update(self._sub.assignment)
            self._unsubscribed_listener = self._sub.listener
        self._sub = _Subscription()
        self.needs_assignment = False
        self._bump()

    # -- reads -------------------------------------------------------------------------------

    @property
    def subscription(self) -> frozenset[str]:
        """The subscribed topics (for ``assign()``, the assigned partitions' topics)."""
        return self._sub.topics

    @property
    def group_subscription(self) -> frozenset[str]:
        """On a group leader, every member's topics; otherwise this member's."""
        return self._sub.group_topics

    def set_group_subscription(self, topics: Iterable[str]) -> None:
        self._sub.group_topics = self._sub.topics | frozenset(topics)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return self._sub.pattern

    @property
    def listener(self) -> ConsumerRebalanceListener | None:
        return self._sub.listener

    def partitions_auto_assigned(self) -> bool:
        return self._sub.type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self._sub.assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._sub.assignment

    def current(self, tp: TopicPartition) -> TopicPartitionState | None:
        """The state of ``tp`` if it is assigned, else None."""
        return self._sub.assignment.get(tp)

    def state(self, tp: TopicPartition) -> TopicPartitionState:
        """The state of an assigned partition; ``IllegalStateError`` if not assigned."""
        try:
            return self._sub.assignment[tp]
        except KeyError:
            raise Errors.IllegalStateError(f"No current assignment for partition {tp}") from None

    def items(self) -> list[tuple[TopicPartition, TopicPartitionState]]:
        return list(self._sub.assignment.items())

    def paused_partitions(self) -> set[TopicPartition]:
        return {tp for tp, st in self._sub.assignment.items() if st.paused}

    def missing_positions(self) -> list[TopicPartition]:
        """Assigned partitions with neither a position nor a reset pending."""
        return [
            tp
            for tp, st in self._sub.assignment.items()
            if st.position is None and st.reset_strategy is None
        ]

    def awaiting_reset(self) -> dict[TopicPartition, OffsetResetStrategy]:
        return {
            tp: st.reset_strategy
            for tp, st in self._sub.assignment.items()
            if st.reset_strategy is not None
        }

    def all_consumed_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions of every partition that has one, as offsets to commit."""
        return {
            tp: OffsetAndMetadata(st.position, "")
            for tp, st in self._sub.assignment.items()
            if st.position is not None
        }

    # -- changes -----------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.state(tp).seek(offset)
        self._bump()

    def request_reset(self, tp: TopicPartition, strategy: OffsetResetStrategy) -> None:
        self.state(tp).request_reset(strategy)
        self._bump()

    def pause(self, tp: TopicPartition) -> None:
        self.state(tp).paused = True
        self._bump()

    def resume(self, tp: TopicPartition) -> None:
        self.state(tp).paused = False
        self._bump()

    def _bump(self) -> None:
        self.version += 1
        self.generation.bump()
        self._changed.set()
        for callback in self._listeners:
            callback()

    def hold(self, tp: TopicPartition) -> None:
        """No record of ``tp`` is handed out from now on: it is being revoked."""
        self.state(tp).revoking = True
        self.generation.bump()

    def changed(self) -> None:
        """Wake waiters after a change made directly on a partition's state."""
        self._bump()

    async def wait_for_change(self, since: int, timeout: float | None) -> None:
        """Wait until ``version`` moves past ``since`` (or the timeout passes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.version == since:
            self._changed.clear()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return
            if not await wait_event(self._changed, remaining):
                return
