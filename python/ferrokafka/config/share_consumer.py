"""``ShareConsumerConfig``: every option of ``AIOKafkaShareConsumer``.

Names follow the consumer's (aiokafka's style) where the option is the same; the share-group
ones take the Java client's name with dots as underscores. Each field's docstring is the
option's reference: meaning, unit, default, the Java client's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .checks import callable_or_none, checked, flag, non_negative, one_of, positive
from .connection import ConnectionConfig
from .consumer import Deserializer

__all__ = ["ACQUIRE_MODES", "ShareConsumerConfig"]

ACQUIRE_MODES = {"batch_optimized": 0, "record_limit": 1}
"""``share_acquire_mode`` names and their ShareFetch codes (KIP-1206)."""

_ack_mode = one_of("implicit", "explicit")
_acquire_mode = one_of(*ACQUIRE_MODES)


def _group_id(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must name the share group (a non-empty string), got {value!r}")


def _optional_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareConsumerConfig(ConnectionConfig):
    """The options of ``AIOKafkaShareConsumer`` (its keyword arguments but ``loop``), checked.

    Where the records start (``share.auto.offset.reset``), how long a lock lasts
    (``share.record.lock.duration.ms``), the isolation level and the delivery count limit are
    the share group's configs, set on the broker (``AIOKafkaAdminClient.alter_configs`` on a
    ``ConfigResource(GROUP, group_id)``), not options of a member.
    """

    group_id: str = field(default="", metadata=checked(_group_id))
    """The share group to join. Required. Java: ``group.id``."""

    key_deserializer: Deserializer | None = field(default=None, metadata=checked(callable_or_none))
    """Called with each record's key bytes (or None); what it returns is the record's
    ``key``. Default None (the bytes). Java: ``key.deserializer``."""

    value_deserializer: Deserializer | None = field(
        default=None, metadata=checked(callable_or_none)
    )
    """Called with each record's value bytes (or None); what it returns is the record's
    ``value``. Default None (the bytes). Java: ``value.deserializer``."""

    share_acknowledgement_mode: str = field(default="implicit", metadata=checked(_ack_mode))
    """``"implicit"``: every record a poll handed out is accepted by the next poll, by
    ``commit()`` or by ``stop()``; ``acknowledge()`` is refused. ``"explicit"``: the
    application answers for each record with ``acknowledge()``, and a poll while records of
    the previous one are unanswered raises ``IllegalStateError``. Default ``"implicit"``.
    Java: ``share.acknowledgement.mode``."""

    share_acquire_mode: str = field(default="batch_optimized", metadata=checked(_acquire_mode))
    """``"batch_optimized"``: the broker may hand out whole batches, a little over what a
    fetch asks for; ``"record_limit"``: never more records than ``max_poll_records`` per fetch
    (brokers with ShareFetch v2, Kafka 4.2; older ones use batch_optimized).
    Default ``"batch_optimized"``. Java: ``share.acquire.mode``."""

    max_poll_records: int = field(default=500, metadata=checked(positive))
    """The records one poll returns: this many, then the rest of the record batch the last of
    them is in, as Java's share consumer does (a poll's ``max_records`` is a bound); and how
    many a ShareFetch asks the broker to acquire at first (more, up to 16 times this, while
    polls wait for fetches; always this with ``share_acquire_mode="record_limit"``). Default
    500. Java: ``max.poll.records``."""

    fetch_max_wait_ms: int = field(default=500, metadata=checked(non_negative))
    """Milliseconds a broker may hold a ShareFetch to gather ``fetch_min_bytes``. Default 500.
    Java: ``fetch.max.wait.ms``."""

    fetch_min_bytes: int = field(default=1, metadata=checked(positive))
    """The fewest bytes a broker answers a ShareFetch with, waiting up to
    ``fetch_max_wait_ms``. Default 1. Java: ``fetch.min.bytes``."""

    fetch_max_bytes: int = field(default=52428800, metadata=checked(positive))
    """The most bytes one ShareFetch response may carry. Default 52428800 (50 MiB). Java:
    ``fetch.max.bytes``."""

    check_crcs: bool = field(default=True, metadata=checked(flag))
    """Whether each record batch's CRC-32C is verified. Default True. Java: ``check.crcs``."""

    client_rack: str | None = field(default=None, metadata=checked(_optional_str))
    """The rack of this member, sent with its heartbeats. Default None. Java:
    ``client.rack``."""

    acknowledgement_commit_callback: Callable[..., Any] | None = field(
        default=None, metadata=checked(callable_or_none)
    )
    """Called as ``callback(offsets, exception)`` once the broker has answered for
    acknowledgements: ``offsets`` maps a ``TopicPartition`` to the set of offsets answered
    for, ``exception`` is None or the typed error for all of them. Default None. Java:
    ``KafkaShareConsumer.setAcknowledgementCommitCallback``."""

    @property
    def explicit(self) -> bool:
        return self.share_acknowledgement_mode == "explicit"
