"""What the admin client's transaction operations take and return (Java's
``ProducerState``, ``TransactionListing``, ``TransactionDescription``,
``AbortTransactionSpec``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from ..structs import TopicPartition

__all__ = [
    "AbortTransactionSpec",
    "ProducerIdAndEpoch",
    "ProducerState",
    "TransactionDescription",
    "TransactionListing",
    "TransactionState",
]


class TransactionState(Enum):
    """A transactional id's state at its coordinator (the names the brokers send)."""

    ONGOING = "Ongoing"
    PREPARE_ABORT = "PrepareAbort"
    PREPARE_COMMIT = "PrepareCommit"
    COMPLETE_ABORT = "CompleteAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    EMPTY = "Empty"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"
    UNKNOWN = "Unknown"

    @classmethod
    def parse(cls, name: str) -> TransactionState:
        """The state a broker named; ``UNKNOWN`` for one this client does not know."""
        try:
            return cls(name)
        except ValueError:
            return cls.UNKNOWN


class ProducerState(NamedTuple):
    """A producer with state in a partition (``describe_producers``)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int | None
    """The coordinator epoch of its open transaction's last marker, when known."""
    current_transaction_start_offset: int | None
    """The first offset of its open transaction, ``None`` when none is open."""


class TransactionListing(NamedTuple):
    """A transactional id a broker coordinates (``list_transactions``)."""

    transactional_id: str
    producer_id: int
    state: TransactionState


class ProducerIdAndEpoch(NamedTuple):
    """A transactional id's producer after ``fence_producers``."""

    producer_id: int
    epoch: int


@dataclass(frozen=True)
class TransactionDescription:
    """A transactional id's state at its coordinator (``describe_transactions``)."""

    coordinator_id: int
    state: TransactionState
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_start_time_ms: int | None
    """When the open transaction started, ``None`` without one."""
    topic_partitions: frozenset[TopicPartition]
    """The partitions in the open transaction."""


@dataclass(frozen=True)
class AbortTransactionSpec:
    """Which transaction ``abort_transaction`` ends in which partition: the producer id and
    epoch and the coordinator epoch as ``describe_producers`` reports them."""

    topic_partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    @classmethod
    def from_producer_state(cls, tp: TopicPartition, state: ProducerState) -> AbortTransactionSpec:
        """The spec of ``state``'s open transaction in ``tp``."""
        if state.current_transaction_start_offset is None:
            raise ValueError(f"producer {state.producer_id} has no open transaction in {tp}")
        return cls(tp, state.producer_id, state.producer_epoch, state.coordinator_epoch or 0)
