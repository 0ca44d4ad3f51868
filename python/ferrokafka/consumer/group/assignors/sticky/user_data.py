"""What sticky members tell the leader about what they owned: the eager assignor's
StickyAssignorUserData (v0/v1) and, for both sticky assignors, each member's owned partitions and
generation as the assignment algorithm reads them."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .....structs import TopicPartition
from ...subscription import ConsumerProtocolMemberMetadata, java_string_key

__all__ = [
    "DEFAULT_GENERATION",
    "MemberData",
    "StickyAssignorUserData",
    "cooperative_member_data",
    "sticky_member_data",
]

DEFAULT_GENERATION = -1

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


@dataclass(frozen=True)
class StickyAssignorUserData:
    """The eager sticky assignor's user data: the previous assignment and its generation
    (None when the member sent v0, which has no generation)."""

    partitions: list[TopicPartition]
    generation: int | None

    def encode(self) -> bytes:
        """Version 1 (with the generation); topics sorted, partitions in the given order."""
        groups: dict[str, list[int]] = {}
        for tp in self.partitions:
            groups.setdefault(tp.topic, []).append(tp.partition)
        out = bytearray(_I32.pack(len(groups)))
        for topic in sorted(groups, key=java_string_key):
            raw = topic.encode("utf-8")
            out += _I16.pack(len(raw)) + raw + _I32.pack(len(groups[topic]))
            for p in groups[topic]:
                out += _I32.pack(p)
        out += _I32.pack(DEFAULT_GENERATION if self.generation is None else self.generation)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> StickyAssignorUserData | None:
        """Parse v1, or v0 when no generation follows; None if the bytes are neither."""
        pos = 0
        partitions: list[TopicPartition] = []
        try:
            (count,) = _I32.unpack_from(data, pos)
            pos += 4
            if count < 0 or count * 6 > len(data) - pos:
                return None
            for _ in range(count):
                (n,) = _I16.unpack_from(data, pos)
                pos += 2
                if n < 0 or pos + n > len(data):
                    return None
                topic = data[pos : pos + n].decode("utf-8", "replace")  # as Java reads it
                pos += n
                (pcount,) = _I32.unpack_from(data, pos)
                pos += 4
                if pcount < 0 or pcount * 4 > len(data) - pos:
                    return None
                for _ in range(pcount):
                    partitions.append(TopicPartition(topic, _I32.unpack_from(data, pos)[0]))
                    pos += 4
        except struct.error:
            return None
        if pos + 4 <= len(data):
            return cls(partitions, _I32.unpack_from(data, pos)[0])
        return cls(partitions, None)


@dataclass(frozen=True)
class MemberData:
    """What a member owned and in which generation (Java's ``MemberData``)."""

    partitions: list[TopicPartition]
    generation: int | None


def sticky_member_data(meta: ConsumerProtocolMemberMetadata) -> MemberData:
    # Eager: the Subscription's owned partitions are empty (everything was revoked before the
    # join), so ownership always comes from the user data, as in Java's StickyAssignor.
    if not meta.user_data:
        return MemberData([], None)
    decoded = StickyAssignorUserData.decode(meta.user_data)
    if decoded is None:
        return MemberData([], DEFAULT_GENERATION)
    return MemberData(decoded.partitions, decoded.generation)


def cooperative_member_data(meta: ConsumerProtocolMemberMetadata) -> MemberData:
    if meta.generation_id >= 0:
        return MemberData(list(meta.owned_partitions), meta.generation_id)
    generation: int | None = None
    if meta.user_data is not None:
        if len(meta.user_data) >= 4:
            generation = _I32.unpack_from(meta.user_data, 0)[0]
        else:
            generation = DEFAULT_GENERATION
    return MemberData(list(meta.owned_partitions), generation)
