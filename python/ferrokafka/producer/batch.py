"""A batch's records: the size estimate, header checks, ``BatchBuilder`` (the records of one
batch, also aiokafka's ``create_batch``/``send_batch`` object) and ``ProducerBatch`` (a batch on
its way to one partition, with its futures and retry state).

A record is encoded into its batch (``_native.BatchRecords``) when it is appended; when the
sender takes the batch, one call adds the v2 header, the codec and the CRC. A batch is encoded
once: a retry re-sends the same bytes, so the broker sees the same producer id, epoch and
sequence. Each record's future is a ``_native.RecordFuture``, which reads its outcome from the
batch: resolving a batch is one call, however many records it has.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypedDict

from .. import _native
from ..config.checks import epoch_ms
from ..structs import RecordMetadata, TopicPartition

__all__ = [
    "BATCH_OVERHEAD",
    "NO_HEADERS",
    "BatchBuilder",
    "BatchHeader",
    "BatchRecordMetadata",
    "ProducerBatch",
    "as_bytes",
    "check_headers",
    "estimate_record_size",
]

Header = tuple[str, bytes | None]
Record = tuple[int, bytes | None, bytes | None, list[Header]]
Serializer = Callable[[Any], Any]

NO_HEADERS: list[Header] = []
"""The checked headers of every record sent without any (shared, never changed)."""

BATCH_OVERHEAD: int = _native.BATCH_HEADER_LEN
"""Bytes of a v2 record batch header (baseOffset through recordsCount)."""

estimate_record_size = _native.record_size_bound
"""An upper bound of one record's bytes in an uncompressed v2 batch, its length prefix
included: ``estimate_record_size(key, value, headers)``."""


def as_bytes(what: str, data: Any) -> bytes | None:
    if data is None or type(data) is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(
        f"{what} must be bytes or None (or set a serializer), got {type(data).__name__}"
    )


def check_headers(headers: Iterable[Any] | None) -> list[Header]:
    """``[(str, bytes | None), ...]``, or TypeError naming what is wrong."""
    if not headers:
        return []
    out: list[Header] = []
    for item in headers:
        try:
            hkey, hvalue = item
        except (TypeError, ValueError):
            raise TypeError(
                f"headers: each header must be a (str, bytes) pair, got {item!r}"
            ) from None
        if not isinstance(hkey, str):
            raise TypeError(f"headers: header key must be str, got {type(hkey).__name__}")
        out.append((hkey, as_bytes(f"headers: value of {hkey!r}", hvalue)))
    return out


def now_ms() -> int:
    return int(time.time() * 1000)


class BatchRecordMetadata(NamedTuple):
    """What ``BatchBuilder.append`` returns (aiokafka's ``DefaultRecordMetadata`` fields)."""

    offset: int
    """The record's offset delta within its batch."""
    crc: int | None
    """Always None for v2 batches (the CRC covers the whole batch)."""
    size: int
    """The record's estimated size in the batch."""
    timestamp: int


class BatchHeader(TypedDict):
    """What the sender sets in a batch's v2 header when it takes the batch (and the codec):
    the keyword arguments of the native ``encode`` of records and of Arrow rows alike."""

    compression: str
    transactional: bool
    producer_id: int
    producer_epoch: int
    base_sequence: int


class BatchBuilder:
    """Records for one batch, filled by the caller (``AIOKafkaProducer.create_batch``) or by
    the accumulator. ``append`` returns None once the batch is full or closed; the first record
    is always accepted, however large (``max_request_size`` is checked by the producer)."""

    def __init__(
        self,
        batch_size: int,
        compression_type: str | None,
        *,
        is_transactional: bool = False,
        key_serializer: Serializer | None = None,
        value_serializer: Serializer | None = None,
    ) -> None:
        self._compression = compression_type or "none"
        self._transactional = is_transactional
        self._key_serializer = key_serializer
        self._value_serializer = value_serializer
        self._records = _native.BatchRecords(batch_size)
        self._buffer: bytes | None = None

    def append(
        self,
        *,
        timestamp: int | None,
        key: Any,
        value: Any,
        headers: Sequence[Header] | None = None,
    ) -> BatchRecordMetadata | None:
        """Add a record (``timestamp`` in epoch milliseconds, None for now)."""
        if self._records.closed:
            return None
        if timestamp is not None:
            timestamp = epoch_ms("timestamp", timestamp)
        if self._key_serializer is not None:
            key = self._key_serializer(key)
        if self._value_serializer is not None:
            value = self._value_serializer(value)
        key, value = as_bytes("key", key), as_bytes("value", value)
        before = self._records.size
        ts = self._add(timestamp, key, value, check_headers(headers))
        if ts is None:
            return None
        return BatchRecordMetadata(
            self._records.record_count - 1, None, self._records.size - before, ts
        )

    def _add(
        self,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        checked: list[Header],
    ) -> int | None:
        """Add a record whose headers are checked; return its timestamp, or None when the
        batch is closed or has no room for it."""
        return self._records.add(timestamp, key, value, checked)

    def close(self) -> None:
        """No more records: ``append`` returns None from now on."""
        self._records.close()

    def closed(self) -> bool:
        return self._records.closed

    def awaited(self) -> bool:
        """Whether some record's future has a done-callback: someone waits for the batch."""
        return self._records.awaited

    def size(self) -> int:
        """The batch's size in bytes (uncompressed until encoded, then exact)."""
        return len(self._buffer) if self._buffer is not None else self._records.size

    def record_count(self) -> int:
        return self._records.record_count

    def _build(self, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
        self._buffer = self._encode(
            {
                "compression": self._compression,
                "transactional": self._transactional,
                "producer_id": producer_id,
                "producer_epoch": producer_epoch,
                "base_sequence": base_sequence,
            }
        )
        return self._buffer

    def _encode(self, header: BatchHeader) -> bytes:
        """The batch's bytes, with ``header``; a subclass with other records overrides it."""
        self._records.close()
        return self._records.encode(**header)


class ProducerBatch:
    """A batch on its way to one partition: its records' futures, its retry state, and, once
    taken by the sender, its encoded bytes with the producer id, epoch and sequence in them."""

    def __init__(
        self,
        tp: TopicPartition,
        builder: BatchBuilder,
        linger: float,
        *,
        loop: asyncio.AbstractEventLoop,
        on_settled: Callable[[ProducerBatch], None] | None = None,
        on_awaited: Callable[[], None] | None = None,
    ) -> None:
        self.tp = tp
        # Called (synchronously) once the batch is done or failed: the accumulator's
        # bookkeeping, without a loop callback per batch.
        self._on_settled = on_settled
        self.builder = builder
        self.created = time.monotonic()
        self._linger = linger
        self.loop = loop
        self.future: asyncio.Future[RecordMetadata | None] = loop.create_future()
        # on_awaited: called when a first record's future gets a done-callback (an await, a
        # gather, a callback), so the sender can send the batch before its linger is up.
        builder._records.set_loop(loop, on_awaited)
        self.drained: asyncio.Future[None] = loop.create_future()
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.encoded: bytes | None = None
        self.sent = False

    def __repr__(self) -> str:
        return (
            f"<ProducerBatch {self.tp.topic}[{self.tp.partition}] "
            f"records={self.record_count} seq={self.base_sequence} attempts={self.attempts}>"
        )

    @property
    def record_count(self) -> int:
        return self.builder.record_count()

    def append(
        self,
        timestamp_ms: int | None,
        key: bytes | None,
        value: bytes | None,
        checked: list[Header],
    ) -> _native.RecordFuture | None:
        """Add a record (headers checked); its future, or None when the batch has no room."""
        records = self.builder._records
        ts = records.add(timestamp_ms, key, value, checked)
        if ts is None:
            return None
        return records.last_future(ts)

    def linger_left(self, now: float) -> float:
        """Seconds this batch should still wait for more records (0 when full or ripe)."""
        if self.builder.closed():
            return 0.0
        return max(0.0, self.created + self._linger - now)

    def encode(self, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.encoded = self.builder._build(producer_id, producer_epoch, base_sequence)
        return self.encoded

    def mark_drained(self) -> None:
        if not self.drained.done():
            self.drained.set_result(None)

    def done(self, base_offset: int, log_append_time: int, log_start_offset: int | None) -> None:
        """Resolve every record's future (and the batch's) with where the records landed."""
        tp = self.tp
        timestamp_type = 0 if log_append_time == -1 else 1
        if not self.future.done():
            self.future.set_result(
                RecordMetadata(
                    tp.topic,
                    tp.partition,
                    tp,
                    base_offset,
                    log_append_time,
                    timestamp_type,
                    log_start_offset,
                )
            )
        self.builder._records.resolve(tp, base_offset, log_append_time, log_start_offset)
        self.mark_drained()
        if self._on_settled is not None:
            self._on_settled(self)

    def done_noack(self) -> None:
        """acks=0: nothing is known but that the bytes were handed to the socket."""
        if not self.future.done():
            self.future.set_result(None)
        self.builder._records.resolve_noack()
        self.mark_drained()
        if self._on_settled is not None:
            self._on_settled(self)

    def failure(self, exc: BaseException) -> None:
        # A failed batch takes no more records: one still open (expired in the queue before
        # the sender took it) would otherwise keep accepting records whose futures never end.
        self.builder.close()
        if not self.future.done():
            self.future.set_exception(exc)
        if self.builder.record_count():
            # The records' futures carry the error to the user; the batch future is ours.
            self.future.exception()
        self.builder._records.fail(exc)
        if not self.drained.done():
            self.drained.set_exception(exc)
            self.drained.exception()
        if self._on_settled is not None:
            self._on_settled(self)
