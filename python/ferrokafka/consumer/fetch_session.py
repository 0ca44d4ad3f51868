"""KIP-227 incremental fetch sessions: what one Fetch request to one broker carries. No I/O.

A full request (no session yet, or epoch 0) names every wanted partition and creates the
session; later requests carry only the partitions whose fetch state changed since the last
successful one, and list the ones no longer wanted as forgotten, as the Java client's
``FetchSessionHandler`` does. A failed request resets the session: the next one is full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..structs import TopicPartition

if TYPE_CHECKING:
    from .._native import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic

__all__ = ["FIRST_TOPIC_ID_VERSION", "MAX_EPOCH", "FetchKey", "FetchSession"]

#: Session epochs wrap to 1 after this (0 means "full request").
MAX_EPOCH = 0x7FFFFFFF

#: Fetch v13 names topics by id (KIP-516); earlier versions by name.
FIRST_TOPIC_ID_VERSION = 13


@dataclass(frozen=True)
class FetchKey:
    """What a fetch session remembers of one partition (a change means: send it again)."""

    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int
    max_bytes: int


class FetchSession:
    """The session with one broker."""

    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = 0
        self._known: dict[TopicPartition, FetchKey] = {}

    @property
    def size(self) -> int:
        """How many partitions the broker keeps in the session (0 without one)."""
        return len(self._known)

    @property
    def full(self) -> bool:
        """Whether the next request must name every wanted partition."""
        return self.session_id == 0 or self.epoch == 0

    def build(
        self, wanted: Mapping[TopicPartition, FetchKey]
    ) -> tuple[dict[TopicPartition, FetchKey], list[TopicPartition]]:
        """(the partitions to send, the partitions to forget) for a request wanting
        ``wanted``."""
        if self.full:
            return dict(wanted), []
        send = {tp: k for tp, k in wanted.items() if self._known.get(tp) != k}
        forget = [tp for tp in self._known if tp not in wanted]
        return send, forget

    def succeeded(self, session_id: int, wanted: Mapping[TopicPartition, FetchKey]) -> None:
        """The request for ``wanted`` was answered without a session error."""
        if self.full:
            self.session_id = session_id
            self.epoch = 1 if session_id else 0
        else:
            self.epoch = self.epoch + 1 if self.epoch < MAX_EPOCH else 1
        self._known = dict(wanted) if self.session_id else {}

    def reset(self) -> None:
        self.session_id = 0
        self.epoch = 0
        self._known = {}

    def request(
        self,
        send: Mapping[TopicPartition, FetchKey],
        forget: Sequence[TopicPartition],
        topic_ids: Mapping[str, bytes],
        version: int,
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        isolation_level: int,
        rack_id: str,
    ) -> FetchRequest:
        """The Fetch request body: topics by id from version 13, by name before."""
        by_topic: dict[str, list[FetchPartition]] = {}
        for tp, key in send.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition": tp.partition,
                    "current_leader_epoch": key.current_leader_epoch,
                    "fetch_offset": key.fetch_offset,
                    "last_fetched_epoch": key.last_fetched_epoch,
                    "log_start_offset": -1,
                    "partition_max_bytes": key.max_bytes,
                }
            )
        forgotten: dict[str, list[int]] = {}
        for tp in forget:
            forgotten.setdefault(tp.topic, []).append(tp.partition)
        by_id = version >= FIRST_TOPIC_ID_VERSION
        topics: list[FetchTopic] = [
            {"topic_id": topic_ids[t], "partitions": p} if by_id else {"topic": t, "partitions": p}
            for t, p in by_topic.items()
        ]
        forgotten_topics: list[ForgottenTopic] = [
            {"topic_id": topic_ids[t], "partitions": p} if by_id else {"topic": t, "partitions": p}
            for t, p in forgotten.items()
        ]
        return {
            "max_wait_ms": max_wait_ms,
            "min_bytes": min_bytes,
            "max_bytes": max_bytes,
            "isolation_level": isolation_level,
            "session_id": self.session_id,
            "session_epoch": self.epoch,
            "topics": topics,
            "forgotten_topics_data": forgotten_topics,
            "rack_id": rack_id,
        }
