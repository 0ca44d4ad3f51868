"""``ProducerConfig``: every option of ``AIOKafkaProducer``, under aiokafka's keyword names.

Each field's docstring is the option's reference: its meaning and unit, its default, and the
name of the same setting in the Java client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..partitioner import DefaultPartitioner
from .checks import callable_or_none, checked, flag, non_negative, one_of, positive
from .connection import ConnectionConfig

__all__ = ["DEFAULT_ACKS", "DEFAULT_PARTITIONER", "ProducerConfig"]

DEFAULT_ACKS: Any = object()
"""``acks`` not given: 1, or -1 with idempotence (as aiokafka's sentinel default)."""

DEFAULT_PARTITIONER = DefaultPartitioner()

Partitioner = Callable[[bytes | None, list[int], list[int]], int]
Serializer = Callable[[Any], Any]

_check_acks = one_of(0, 1, -1, "all")
_codec = one_of(None, "gzip", "snappy", "lz4", "zstd")


def _acks(name: str, value: Any) -> None:
    if value is not DEFAULT_ACKS:
        _check_acks(name, value)


def _callable(name: str, value: Any) -> None:
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {value!r}")


def _transactional_id(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(f"{name} must be a non-empty str or None, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerConfig(ConnectionConfig):
    """The options of ``AIOKafkaProducer`` (its keyword arguments but ``loop``), checked.

    The producer builds it from its keyword arguments and hands it whole to its client, its
    accumulator, its sender and its transaction manager. ``acks`` and
    ``enable_idempotence`` are stored resolved: ``acks`` as -1, 0 or 1, and idempotence on
    whenever a ``transactional_id`` is set, as aiokafka and the Java client do.
    """

    client_id: str | None = None
    """Sent with every request, so brokers can tell clients apart in their logs, metrics and
    quotas. Default None: ``AIOKafkaProducer`` names itself ``"ferrokafka-producer-<n>"``
    (``<n>`` counting the producers of the process). Java: ``client.id``."""

    acks: int | str = field(default=DEFAULT_ACKS, metadata=checked(_acks))
    """How many replicas must have a batch before the broker acknowledges it: 0 (none; the
    send's metadata is None), 1 (the leader) or ``"all"``/-1 (every in-sync replica).
    Default 1, or ``"all"`` with idempotence (which needs it). Stored as -1, 0 or 1. Java:
    ``acks`` (``all`` there)."""

    key_serializer: Serializer | None = field(default=None, metadata=checked(callable_or_none))
    """Called with each ``send``'s key; it must return bytes (or None). Default None: keys
    must be bytes already. Java: ``key.serializer``."""

    value_serializer: Serializer | None = field(default=None, metadata=checked(callable_or_none))
    """Called with each ``send``'s value; it must return bytes (or None). Default None: values
    must be bytes already. Java: ``value.serializer``."""

    compression_type: str | None = field(default=None, metadata=checked(_codec))
    """The codec of record batches: None, ``"gzip"``, ``"snappy"``, ``"lz4"`` or
    ``"zstd"``. Default None (uncompressed). Java: ``compression.type``."""

    max_batch_size: int = field(default=16384, metadata=checked(positive))
    """The size in bytes a partition's batch is filled to before it is sent (a larger record
    gets a batch of its own). Default 16384. Java: ``batch.size``."""

    partitioner: Partitioner = field(default=DEFAULT_PARTITIONER, metadata=checked(_callable))
    """Picks the partition of a record sent without one: called with the key bytes, all
    partition ids and the available ones. The default hashes keys with murmur2 as the Java
    client does, and sends unkeyed records to one partition until a batch's worth of bytes
    went to it (KIP-480 and KIP-794, as Java's built-in partitioner). Java:
    ``partitioner.class``."""

    max_request_size: int = field(default=1048576, metadata=checked(positive))
    """The largest record (and Produce request) in bytes; a larger record raises
    ``MessageSizeTooLargeError``. Default 1048576 (1 MiB). Java: ``max.request.size``."""

    linger_ms: int = field(default=0, metadata=checked(non_negative))
    """Milliseconds a batch that is not full waits for more records before it is sent, at
    most: a batch whose record someone awaits (``await``, ``gather``, ``send_and_wait``, a
    done-callback) goes at once when its broker has no request of this producer in flight,
    as there is nothing then for more records to batch behind. Default 0. Java:
    ``linger.ms`` (5 there)."""

    enable_idempotence: bool = field(default=False, metadata=checked(flag))
    """Whether the broker drops retried duplicates and keeps each partition's order (KIP-98:
    a producer id and sequence numbers); needs ``acks="all"``. Turned on by a
    ``transactional_id``. Default False. Java: ``enable.idempotence`` (true there)."""

    transactional_id: str | None = field(default=None, metadata=checked(_transactional_id))
    """The id that makes this producer transactional (``begin_transaction`` and the rest):
    a new producer with the same id fences the old one. Default None. Java:
    ``transactional.id``."""

    transaction_timeout_ms: int = field(default=60000, metadata=checked(positive))
    """Milliseconds the transaction coordinator lets a transaction stay open before aborting
    it; at most the broker's ``transaction.max.timeout.ms``. Default 60000. Java:
    ``transaction.timeout.ms``."""

    allow_auto_create_topics: bool = field(default=True, metadata=checked(flag))
    """Whether Metadata requests let the broker create a topic the producer sends to
    (when the broker's ``auto.create.topics.enable`` allows it). Always True for
    ``AIOKafkaProducer``, as for every Kafka producer. Java: none for producers."""

    def _finish(self) -> None:
        ConnectionConfig._finish(self)
        idempotent = self.enable_idempotence or self.transactional_id is not None
        acks = self.acks
        if idempotent:
            if acks is DEFAULT_ACKS:
                acks = -1
            elif acks not in ("all", -1):
                raise ValueError(f"acks={acks!r} not supported if enable_idempotence=True")
        if acks is DEFAULT_ACKS:
            acks = 1
        elif acks == "all":
            acks = -1
        self._set("acks", acks)
        self._set("enable_idempotence", idempotent)
