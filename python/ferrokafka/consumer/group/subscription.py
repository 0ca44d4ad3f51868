"""A classic group member's Subscription (sent in JoinGroup) and the Assignment the leader hands
out for it (in SyncGroup): the bytes of the consumer's embedded group protocol, protocol type
``"consumer"``.

Both are Kafka's ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` schemas
(``clients/src/main/resources/common/message/``), versions 0-3, non-flexible, big-endian, with an
int16 version prefix. The bytes equal what the Java client's ``ConsumerProtocol`` writes for the
same input: subscribed topics sorted, owned partitions sorted by topic then partition and grouped
per topic, assigned partitions grouped per topic in first-appearance order.

Decoding follows Java: a version above 3 is read with the version-3 layout (later versions may
only append fields, so the extra bytes are ignored), a negative version is refused, fields a
version lacks take their defaults (no owned partitions, generation -1, no rack). Every length and
count is hostile input: a truncated or malformed buffer raises
:class:`ConsumerProtocolDecodeError`, never ``IndexError`` or ``struct.error``.

Class and field names are aiokafka's (``aiokafka.coordinator.protocol``) where aiokafka has them;
``ferrokafka.coordinator.protocol``, aiokafka's import path, re-exports them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from ...errors import ProtocolDecodeError
from ...structs import TopicPartition

__all__ = [
    "CONSUMER_PROTOCOL_HIGHEST_VERSION",
    "ConsumerProtocol",
    "ConsumerProtocolDecodeError",
    "ConsumerProtocolMemberAssignment",
    "ConsumerProtocolMemberMetadata",
]

CONSUMER_PROTOCOL_HIGHEST_VERSION = 3
"""The highest ConsumerProtocolSubscription/Assignment version known here (also Java's)."""

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class ConsumerProtocolDecodeError(ProtocolDecodeError):
    """A Subscription or Assignment that cannot be decoded (truncated, malformed or hostile)."""


def java_string_key(s: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units, not code points)."""
    return s.encode("utf-16-be", "surrogatepass")


# -- reading ------------------------------------------------------------------------------------


class _Reader:
    """A bounds-checked cursor over one buffer; every failure is a ConsumerProtocolDecodeError."""

    __slots__ = ("_buf", "_pos", "_what")

    def __init__(self, buf: bytes, what: str) -> None:
        self._buf = buf
        self._pos = 0
        self._what = what

    def _fail(self, problem: str) -> ConsumerProtocolDecodeError:
        return ConsumerProtocolDecodeError(
            f"consumer protocol {self._what}: {problem} at byte {self._pos} of {len(self._buf)}"
        )

    def _take(self, n: int, field_name: str) -> bytes:
        end = self._pos + n
        if end > len(self._buf):
            raise self._fail(f"{field_name} needs {n} bytes, {len(self._buf) - self._pos} left")
        chunk = self._buf[self._pos : end]
        self._pos = end
        return chunk

    def int16(self, field_name: str) -> int:
        value: int = _I16.unpack(self._take(2, field_name))[0]
        return value

    def int32(self, field_name: str) -> int:
        value: int = _I32.unpack(self._take(4, field_name))[0]
        return value

    def string(self, field_name: str, *, nullable: bool = False) -> str | None:
        n = self.int16(field_name)
        if n < 0:
            if nullable and n == -1:
                return None
            raise self._fail(f"{field_name} has length {n}")
        raw = self._take(n, field_name)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._fail(f"{field_name} is not UTF-8 ({exc.reason})") from None

    def required_string(self, field_name: str) -> str:
        value = self.string(field_name)
        assert value is not None  # a non-nullable read never returns None
        return value

    def nullable_bytes(self, field_name: str) -> bytes | None:
        n = self.int32(field_name)
        if n == -1:
            return None
        if n < 0:
            raise self._fail(f"{field_name} has length {n}")
        return self._take(n, field_name)

    def count(self, field_name: str, min_element_size: int) -> int:
        """An array length, checked against the bytes left before any element is read."""
        n = self.int32(field_name)
        if n < 0:
            raise self._fail(f"non-nullable array {field_name} has length {n}")
        left = len(self._buf) - self._pos
        if n * min_element_size > left:
            raise self._fail(f"{field_name} claims {n} elements but only {left} bytes remain")
        return n

    def topic_partitions(self, field_name: str) -> list[tuple[str, list[int]]]:
        # Each element is at least a string length (2) and an array length (4).
        result = []
        for _ in range(self.count(field_name, 6)):
            topic = self.required_string(f"{field_name}.topic")
            n = self.count(f"{field_name}.partitions", 4)
            result.append((topic, [self.int32(f"{field_name}.partitions") for _ in range(n)]))
        return result

    def version(self) -> int:
        version = self.int16("version")
        if version < 0:
            raise self._fail(f"unsupported version {version}")
        return version


def _open(data: bytes | bytearray | memoryview, what: str) -> tuple[_Reader, int]:
    """``(reader, version)``: the version a ``what`` (subscription, assignment) starts with,
    and a reader over ``data`` past it."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes, got {type(data).__name__}")
    r = _Reader(bytes(data), what)
    return r, r.version()


# -- writing ------------------------------------------------------------------------------------


def _start(version: int, what: str) -> bytearray:
    """The output of a ``what`` (subscription, assignment): its version, checked and written."""
    if not 0 <= version <= CONSUMER_PROTOCOL_HIGHEST_VERSION:
        raise ValueError(
            f"consumer protocol {what} version {version} is not in "
            f"0..{CONSUMER_PROTOCOL_HIGHEST_VERSION}"
        )
    return bytearray(_I16.pack(version))


def _write_string(out: bytearray, value: str) -> None:
    raw = value.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise ValueError(f"string of {len(raw)} bytes is too long for the consumer protocol")
    out += _I16.pack(len(raw))
    out += raw


def _write_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out += _I16.pack(-1)
    else:
        _write_string(out, value)


def _write_nullable_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out += _I32.pack(-1)
    else:
        out += _I32.pack(len(value))
        out += value


def _write_topic_partitions(out: bytearray, groups: Iterable[tuple[str, Iterable[int]]]) -> None:
    materialized = [(topic, list(partitions)) for topic, partitions in groups]
    out += _I32.pack(len(materialized))
    for topic, partitions in materialized:
        _write_string(out, topic)
        out += _I32.pack(len(partitions))
        for p in partitions:
            out += _I32.pack(p)


def _group_in_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """Partitions grouped by topic, topics in first-appearance order (Java's Assignment)."""
    groups: dict[str, list[int]] = {}
    for topic, partition in partitions:
        groups.setdefault(topic, []).append(partition)
    return list(groups.items())


# -- the messages -------------------------------------------------------------------------------


@dataclass
class ConsumerProtocolMemberMetadata:
    """A member's Subscription (``ConsumerProtocolSubscription``), as sent in JoinGroup.

    ``subscription`` is the topic list (aiokafka's name for ``Topics``). ``owned_partitions``
    (v1+), ``generation_id`` (v2+) and ``rack_id`` (v3+) are written only by versions that have
    them; decoding an older version gives their defaults. ``user_data`` None is Kafka's null.
    """

    version: int
    subscription: list[str]
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation_id: int = -1
    rack_id: str | None = None

    def encode(self) -> bytes:
        """The version-prefixed bytes, exactly as Java's ``ConsumerProtocol`` writes them."""
        out = _start(self.version, "subscription")
        topics = sorted(self.subscription, key=java_string_key)
        out += _I32.pack(len(topics))
        for topic in topics:
            _write_string(out, topic)
        _write_nullable_bytes(out, self.user_data)
        if self.version >= 1:
            owned = sorted(
                (TopicPartition(tp[0], tp[1]) for tp in self.owned_partitions),
                key=lambda tp: (java_string_key(tp.topic), tp.partition),
            )
            _write_topic_partitions(out, _group_in_order(owned))
        if self.version >= 2:
            out += _I32.pack(self.generation_id)
        if self.version >= 3:
            _write_nullable_string(out, self.rack_id)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> ConsumerProtocolMemberMetadata:
        """Parse a Subscription; raises :class:`ConsumerProtocolDecodeError` on bad input."""
        r, version = _open(data, "subscription")
        layout = min(version, CONSUMER_PROTOCOL_HIGHEST_VERSION)
        topics = [r.required_string("topics") for _ in range(r.count("topics", 2))]
        user_data = r.nullable_bytes("user_data")
        owned: list[TopicPartition] = []
        generation_id = -1
        rack_id: str | None = None
        if layout >= 1:
            owned = [
                TopicPartition(topic, p)
                for topic, partitions in r.topic_partitions("owned_partitions")
                for p in partitions
            ]
        if layout >= 2:
            generation_id = r.int32("generation_id")
        if layout >= 3:
            rack_id = r.string("rack_id", nullable=True)
        return cls(version, topics, user_data, owned, generation_id, rack_id)

    def partitions(self) -> list[TopicPartition]:
        """The owned partitions (Java's ``Subscription.ownedPartitions``)."""
        return list(self.owned_partitions)


@dataclass
class ConsumerProtocolMemberAssignment:
    """A member's Assignment (``ConsumerProtocolAssignment``), as handed out in SyncGroup.

    ``assignment`` keeps the wire grouping: ``[(topic, [partition, ...]), ...]``. Versions 0-3
    have the same layout; only the prefix differs.
    """

    class Assignment(NamedTuple):
        topic: str
        partitions: list[int]

    version: int
    assignment: list[ConsumerProtocolMemberAssignment.Assignment]
    user_data: bytes | None = None

    @classmethod
    def from_partitions(
        cls,
        partitions: Iterable[tuple[str, int]],
        user_data: bytes | None = None,
        version: int = CONSUMER_PROTOCOL_HIGHEST_VERSION,
    ) -> ConsumerProtocolMemberAssignment:
        """Group ``partitions`` per topic in first-appearance order, as Java's
        ``ConsumerProtocol.serializeAssignment`` does."""
        groups = [cls.Assignment(topic, ps) for topic, ps in _group_in_order(partitions)]
        return cls(version, groups, user_data)

    def partitions(self) -> list[TopicPartition]:
        return [
            TopicPartition(topic, partition)
            for topic, partitions in self.assignment
            for partition in partitions
        ]

    def encode(self) -> bytes:
        out = _start(self.version, "assignment")
        _write_topic_partitions(out, self.assignment)
        _write_nullable_bytes(out, self.user_data)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> ConsumerProtocolMemberAssignment:
        """Parse an Assignment; raises :class:`ConsumerProtocolDecodeError` on bad input."""
        r, version = _open(data, "assignment")
        groups = [cls.Assignment(t, ps) for t, ps in r.topic_partitions("assigned_partitions")]
        user_data = r.nullable_bytes("user_data")
        return cls(version, groups, user_data)


class ConsumerProtocol:
    """aiokafka's namespace for the consumer protocol's constants and message classes."""

    PROTOCOL_TYPE = "consumer"
    ASSIGNMENT_STRATEGIES = ("range", "roundrobin")
    METADATA = ConsumerProtocolMemberMetadata
    ASSIGNMENT = ConsumerProtocolMemberAssignment
