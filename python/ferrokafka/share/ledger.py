"""What a share consumer holds and what it still owes the brokers (KIP-932).

Every record handed to the application is *held* (locked to this member) until it is
acknowledged ACCEPT, RELEASE or REJECT; RENEW extends the lock and keeps it held. Each
acknowledgement is *pending* until a request carries it to the broker the record came from:
acknowledgements are kept per broker, since each broker's share session answers only for
the partitions it leads.

The records of the last poll are *unanswered* until acknowledged (RENEW counts): in explicit
mode a poll refuses to run while any is, and each is held by offset (an acknowledgement of a
record not held is refused); in implicit mode the next poll, ``commit()`` or ``stop()``
accepts them, so they are kept as runs of offsets, a run per poll and partition.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..structs import TopicPartition
from .acknowledgements import GAP, AcknowledgeType, PartitionAcknowledgements

if TYPE_CHECKING:
    from .._native import AcknowledgementBatch

__all__ = ["AckLedger", "Runs"]

_RENEW = int(AcknowledgeType.RENEW)

Runs = list[tuple[int, int]]
"""Runs of consecutive offsets, ``(first, last)`` inclusive."""


class AckLedger:
    def __init__(self, *, explicit: bool) -> None:
        self.explicit = explicit
        self._held: dict[TopicPartition, dict[int, int]] = {}
        """Explicit mode: partition -> offset -> the node it was fetched from."""
        self._unanswered: dict[TopicPartition, set[int]] = {}
        """Explicit mode: the last poll's offsets not answered for yet."""
        self._unanswered_count = 0
        self._last_poll: list[tuple[TopicPartition, int, int, int]] = []
        """Implicit mode: the last poll's ``(partition, node, first, last)`` runs."""
        self._pending: dict[int, dict[TopicPartition, PartitionAcknowledgements]] = {}
        """Node -> partition -> acknowledgements not yet sent."""

    # -- handing out ---------------------------------------------------------------------------

    def delivered(self, tp: TopicPartition, node: int, runs: Runs) -> None:
        """The application was just given these offsets of ``tp``, fetched from ``node``."""
        if not self.explicit:
            self._last_poll.extend((tp, node, first, last) for first, last in runs)
            return
        held = self._held.setdefault(tp, {})
        unanswered = self._unanswered.setdefault(tp, set())
        before = len(unanswered)
        for first, last in runs:
            for offset in range(first, last + 1):
                held[offset] = node
                unanswered.add(offset)
        self._unanswered_count += len(unanswered) - before

    def delivered_one(self, tp: TopicPartition, node: int, offset: int) -> None:
        """``delivered`` of one offset (``getone``'s fast path)."""
        if not self.explicit:
            self._last_poll.append((tp, node, offset, offset))
        else:
            self.delivered(tp, node, [(offset, offset)])

    def gaps(self, tp: TopicPartition, node: int, runs: Runs) -> None:
        """Acquired offsets that hold no record for the application: acknowledged as gaps."""
        for first, last in runs:
            self._pending_for(node, tp).add_range(first, last, GAP)

    def release_unhanded(self, tp: TopicPartition, node: int, runs: Runs) -> None:
        """Acquired offsets never handed out (the consumer is closing, or a record's payload did
        not read in FAILFAST mode): RELEASE them, so that they are delivered again without
        waiting for their locks."""
        for first, last in runs:
            self._pending_for(node, tp).add_range(first, last, AcknowledgeType.RELEASE)

    # -- the application's answers -------------------------------------------------------------

    def unanswered(self) -> int:
        if not self.explicit:
            return sum(last - first + 1 for _, _, first, last in self._last_poll)
        return self._unanswered_count

    def acknowledge(self, tp: TopicPartition, offset: int, type_: int) -> bool:
        """Explicit mode: the application's answer for one record (``type_`` checked by the
        caller; ``tp`` may be a plain ``(topic, partition)`` tuple); whether it was the last of
        the last poll's records to be answered for."""
        held = self._held.get(tp)
        node = None if held is None else held.get(offset)
        if held is None or node is None:
            raise Errors.IllegalStateError(
                f"{tp[0]}-{tp[1]} offset {offset} is not held by this consumer "
                "(never handed out, or already acknowledged)"
            )
        if type_ != _RENEW:
            del held[offset]
        unanswered = self._unanswered[tp]
        if offset in unanswered:
            unanswered.remove(offset)
            self._unanswered_count -= 1
        per_node = self._pending.get(node)
        acks = None if per_node is None else per_node.get(tp)
        if acks is None:
            acks = self._pending_for(node, TopicPartition(*tp))  # a plain tuple may come
        acks.add_checked(offset, type_)
        return self._unanswered_count == 0

    def accept_unanswered(self) -> None:
        """Implicit mode: every record of the last poll is accepted."""
        for tp, node, first, last in self._last_poll:
            self._pending_for(node, tp).add_range(first, last, AcknowledgeType.ACCEPT)
        self._last_poll.clear()

    def forget_held(self) -> None:
        """The consumer is closing: records still held are released by closing the sessions."""
        self._held.clear()
        self._unanswered.clear()
        self._unanswered_count = 0
        self._last_poll.clear()

    # -- sending -------------------------------------------------------------------------------

    def has_pending(self, node: int | None = None) -> bool:
        nodes = self._pending.values() if node is None else [self._pending.get(node, {})]
        return any(acks for per_node in nodes for acks in per_node.values())

    def pending_nodes(self) -> list[int]:
        return [node for node in self._pending if self.has_pending(node)]

    def pending_partitions(self, node: int) -> list[TopicPartition]:
        return [tp for tp, acks in self._pending.get(node, {}).items() if acks]

    def has_renewals(self, node: int) -> bool:
        return any(acks.has_renewals() for acks in self._pending.get(node, {}).values())

    def take(
        self, node: int, *, renewals: bool, only: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, list[AcknowledgementBatch]]:
        """The pending acknowledgements for ``node`` (of the partitions ``only``, when given):
        the RENEWs with ``renewals``, the others without; they are then on their way."""
        per_node = self._pending.get(node)
        if not per_node:
            return {}
        wanted = None if only is None else set(only)
        out: dict[TopicPartition, list[AcknowledgementBatch]] = {}
        for tp, acks in list(per_node.items()):
            if wanted is not None and tp not in wanted:
                continue
            batches = acks.take(renewals=renewals)
            if batches:
                out[tp] = batches
            if not acks:
                del per_node[tp]
        return out

    def _pending_for(self, node: int, tp: TopicPartition) -> PartitionAcknowledgements:
        per_node = self._pending.setdefault(node, {})
        acks = per_node.get(tp)
        if acks is None:
            acks = per_node[tp] = PartitionAcknowledgements()
        return acks
