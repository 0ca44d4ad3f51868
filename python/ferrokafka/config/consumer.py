"""``ConsumerConfig``: every option of ``AIOKafkaConsumer``, under aiokafka's keyword names.

Each field's docstring is the option's reference: its meaning and unit, its default, and the
name of the same setting in the Java client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .checks import (
    callable_or_none,
    checked,
    flag,
    non_negative,
    one_of,
    positive,
    positive_or_none,
)
from .connection import ConnectionConfig

__all__ = ["ConsumerConfig"]

Deserializer = Callable[[bytes | None], Any]


_reset = one_of("earliest", "latest", "none")
_isolation = one_of("read_uncommitted", "read_committed")
_group_protocol = one_of("classic", "consumer", note="KIP-848")


def _assignors(name: str, value: Any) -> None:
    if value is not None and not value:
        raise ValueError(f"{name} needs at least one assignor")


def _optional_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")


def _max_poll_records(name: str, value: Any) -> None:
    # Starts with aiokafka's words, which code may match on.
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(
            f"`{name}` should be positive Integer (an int of at least 1, or None), got {value!r}"
        )


def _remote_assignor(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(
            f"{name} must be a server-side assignor name such as 'uniform' or 'range', "
            f"or None; got {value!r}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerConfig(ConnectionConfig):
    """The options of ``AIOKafkaConsumer`` (its keyword arguments but ``loop``), checked.

    The consumer builds it from its keyword arguments and hands it whole to its client, its
    fetcher and its group member. Values are stored as given (lists as tuples);
    ``auto_commit`` says whether offsets are committed automatically (it needs a group).
    """

    group_id: str | None = None
    """The consumer group to join (with ``subscribe``) and to commit offsets to. None: no
    group; ``subscribe`` assigns every partition of the topics and nothing is committed.
    Default None. Java: ``group.id``."""

    group_instance_id: str | None = None
    """A static member id (KIP-345): a member that restarts within ``session_timeout_ms``
    with the same id gets its partitions back without a rebalance. Needs ``group_id``.
    Default None (a dynamic member). Java: ``group.instance.id``."""

    key_deserializer: Deserializer | None = field(default=None, metadata=checked(callable_or_none))
    """Called with each record's key bytes (or None); what it returns is the record's
    ``key``. Default None (the bytes). Java: ``key.deserializer``."""

    value_deserializer: Deserializer | None = field(
        default=None, metadata=checked(callable_or_none)
    )
    """Called with each record's value bytes (or None); what it returns is the record's
    ``value``. Default None (the bytes). Java: ``value.deserializer``."""

    fetch_max_wait_ms: int = field(default=500, metadata=checked(non_negative))
    """Milliseconds a broker may hold a Fetch to gather ``fetch_min_bytes``. Default 500.
    Java: ``fetch.max.wait.ms``."""

    fetch_max_bytes: int = field(default=52428800, metadata=checked(positive))
    """The most bytes one Fetch response may carry (across partitions); a first batch larger
    than it is still returned, so that the consumer always progresses. Default 52428800
    (50 MiB). Java: ``fetch.max.bytes``."""

    fetch_min_bytes: int = field(default=1, metadata=checked(non_negative))
    """The fewest bytes a broker answers a Fetch with, waiting up to ``fetch_max_wait_ms`` for
    them. Default 1. Java: ``fetch.min.bytes``."""

    max_partition_fetch_bytes: int = field(default=1 * 1024 * 1024, metadata=checked(positive))
    """The most bytes of one partition a Fetch response carries (a larger first batch is
    still returned); also bounds the buffered data (twice this per partition). Default
    1048576 (1 MiB). Java: ``max.partition.fetch.bytes``."""

    auto_offset_reset: str = field(default="latest", metadata=checked(_reset))
    """Where a partition without a committed offset, or whose offset is out of range, starts:
    ``"earliest"`` (the oldest record), ``"latest"`` (the next new record) or ``"none"`` (raise
    ``NoOffsetForPartitionError`` / ``OffsetOutOfRangeError`` until the application seeks).
    Default ``"latest"``. Java: ``auto.offset.reset``."""

    enable_auto_commit: bool = field(default=True, metadata=checked(flag))
    """Whether the positions are committed in the background every
    ``auto_commit_interval_ms`` (and when leaving the group); only with a ``group_id``.
    Default True. Java: ``enable.auto.commit``."""

    auto_commit_interval_ms: int = field(default=5000, metadata=checked(positive))
    """Milliseconds between automatic commits. Default 5000. Java:
    ``auto.commit.interval.ms``."""

    check_crcs: bool = field(default=True, metadata=checked(flag))
    """Whether each record batch's CRC-32C is verified (``CorruptRecordException`` on a
    mismatch). Default True. Java: ``check.crcs``."""

    partition_assignment_strategy: tuple[Any, ...] | list[Any] | None = field(
        default=None, metadata=checked(_assignors)
    )
    """The assignor classes a classic group may choose from, in order of preference (the
    leader's pick wins): ``RoundRobinPartitionAssignor``, ``RangePartitionAssignor``,
    ``StickyPartitionAssignor``, ``CooperativeStickyPartitionAssignor`` or your own. Default
    None: ``(RoundRobinPartitionAssignor,)``, aiokafka's default. Java:
    ``partition.assignment.strategy``."""

    max_poll_interval_ms: int = field(default=300000, metadata=checked(positive))
    """The longest the application may go between polls (``getmany``/``getone``) while in a
    group; past it, the member leaves the group so that its partitions move on. Default
    300000 (5 min). Java: ``max.poll.interval.ms``."""

    rebalance_timeout_ms: int | None = field(default=None, metadata=checked(positive_or_none))
    """Milliseconds the coordinator waits for every member to rejoin in a rebalance (the
    JoinGroup's rebalance timeout). Default None: ``max_poll_interval_ms``, as the Java client
    uses. Java: none (aiokafka only)."""

    session_timeout_ms: int = field(default=10000, metadata=checked(positive))
    """Milliseconds without a heartbeat after which the coordinator drops a member from the
    group; must lie within the broker's ``group.min.session.timeout.ms`` and
    ``group.max.session.timeout.ms``. Default 10000. Java: ``session.timeout.ms`` (45000
    there)."""

    heartbeat_interval_ms: int = field(default=3000, metadata=checked(positive))
    """Milliseconds between heartbeats to the group coordinator; must be lower than
    ``session_timeout_ms`` (a third of it is usual). With ``group_protocol="consumer"`` the
    broker sets the interval. Default 3000. Java: ``heartbeat.interval.ms``."""

    consumer_timeout_ms: int = field(default=200, metadata=checked(non_negative))
    """aiokafka's bound, in milliseconds, on how long its background fetch routine waits
    between rounds; accepted for compatibility (this fetcher wakes when something changes).
    Default 200. Java: none (aiokafka only)."""

    max_poll_records: int | None = field(default=None, metadata=checked(_max_poll_records))
    """The most records one ``getmany`` (without its own ``max_records``) returns. Default
    None: no limit. Java: ``max.poll.records`` (500 there)."""

    exclude_internal_topics: bool = field(default=True, metadata=checked(flag))
    """Whether internal topics (``__consumer_offsets``, ``__transaction_state``) are left out
    of pattern subscriptions and ``topics()``; subscribing to one by name still works.
    Default True. Java: ``exclude.internal.topics``."""

    isolation_level: str = field(default="read_uncommitted", metadata=checked(_isolation))
    """``"read_committed"``: only records of committed transactions (and none past the last
    stable offset); ``"read_uncommitted"``: every record. Default ``"read_uncommitted"``.
    Java: ``isolation.level``."""

    client_rack: str | None = field(default=None, metadata=checked(_optional_str))
    """The rack (availability zone) of this consumer: brokers that know a replica in the same
    rack name it as the preferred read replica (KIP-392), and KIP-848 assignors may use it.
    Default None. Java: ``client.rack``."""

    group_protocol: str = field(default="classic", metadata=checked(_group_protocol))
    """``"classic"``: the JoinGroup/SyncGroup protocol with client-side assignors;
    ``"consumer"``: the KIP-848 protocol, assigned by the broker. Default ``"classic"``. Java:
    ``group.protocol``."""

    group_remote_assignor: str | None = field(default=None, metadata=checked(_remote_assignor))
    """The broker-side assignor a KIP-848 group uses (``"uniform"``, ``"range"``), needs
    ``group_protocol="consumer"``. Default None: the broker's default. Java:
    ``group.remote.assignor``."""

    allow_auto_create_topics: bool = field(default=True, metadata=checked(flag))
    """Whether the consumer's Metadata requests let the broker create a topic it names that
    does not exist (when the broker's ``auto.create.topics.enable`` allows it). Default True.
    Java: ``allow.auto.create.topics``; not an option of aiokafka 0.14."""

    @property
    def auto_commit(self) -> bool:
        """Whether offsets are committed automatically: ``enable_auto_commit`` with a group."""
        return self.enable_auto_commit and self.group_id is not None

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"

    def _finish(self) -> None:
        ConnectionConfig._finish(self)
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(
                f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be lower than "
                f"session_timeout_ms ({self.session_timeout_ms})"
            )
        if self.group_remote_assignor is not None and self.group_protocol != "consumer":
            raise ValueError(
                "group_remote_assignor is a KIP-848 option: it needs "
                "group_protocol='consumer' (classic groups use partition_assignment_strategy)"
            )
        if self.group_id is None and self.group_instance_id is not None:
            raise ValueError("group_instance_id needs a group_id")
        if isinstance(self.partition_assignment_strategy, list):
            self._set("partition_assignment_strategy", tuple(self.partition_assignment_strategy))
