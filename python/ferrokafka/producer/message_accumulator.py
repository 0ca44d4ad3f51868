"""Per-partition batches waiting to be sent: the producer appends, the sender drains.

Records stay Python tuples until the sender takes a batch; then ``_native.encode_batch`` builds
the whole v2 record batch (CRC, codec) in one call. A batch is encoded once: a retry re-sends
the same bytes, so the broker sees the same producer id, epoch and sequence.

Back-pressure follows aiokafka: each partition fills one batch at a time; when it is full,
``add_message`` waits (up to its timeout) until the sender has taken it.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from .. import _native
from .. import errors as Errors
from ..cluster import ClusterMetadata
from ..config import ProducerConfig
from ..options import epoch_ms
from ..structs import RecordMetadata, TopicPartition

__all__ = [
    "BatchBuilder",
    "BatchRecordMetadata",
    "MessageAccumulator",
    "ProducerBatch",
    "estimate_record_size",
]

Header = tuple[str, bytes | None]
Record = tuple[int, bytes | None, bytes | None, list[Header]]
Serializer = Callable[[Any], Any]

BATCH_OVERHEAD = 61
"""Bytes of a v2 record batch header (baseOffset through recordsCount)."""

_RECORD_FIXED_MAX = 1 + 10 + 5
"""attributes, the largest timestamp delta varint, the largest offset delta varint."""


def _varint_size(n: int) -> int:
    if 0 <= n < 64:
        return 1
    z = (n << 1) ^ (n >> 63)
    return max(1, (z.bit_length() + 6) // 7)


def estimate_record_size(key: bytes | None, value: bytes | None, headers: Sequence[Header]) -> int:
    """An upper bound of one record's bytes in an uncompressed v2 batch."""
    size = _RECORD_FIXED_MAX
    if key is not None:
        n = len(key)
        size += n + (1 if n < 64 else 2 if n < 8192 else _varint_size(n))
    else:
        size += 1
    if value is not None:
        n = len(value)
        size += n + (1 if n < 64 else 2 if n < 8192 else _varint_size(n))
    else:
        size += 1
    if headers:
        size += _varint_size(len(headers))
        for hkey, hvalue in headers:
            klen = len(hkey.encode())
            size += _varint_size(klen) + klen
            size += 1 if hvalue is None else _varint_size(len(hvalue)) + len(hvalue)
    else:
        size += 1
    return size + (1 if size < 64 else 2 if size < 8192 else _varint_size(size))


def _as_bytes(what: str, data: Any) -> bytes | None:
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
        out.append((hkey, _as_bytes(f"headers: value of {hkey!r}", hvalue)))
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
        self._batch_size = batch_size
        self._compression = compression_type or "none"
        self._transactional = is_transactional
        self._key_serializer = key_serializer
        self._value_serializer = value_serializer
        self._records: list[Record] = []
        self._size = BATCH_OVERHEAD
        self._closed = False
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
        if self._closed:
            return None
        if timestamp is not None:
            timestamp = epoch_ms("timestamp", timestamp)
        if self._key_serializer is not None:
            key = self._key_serializer(key)
        if self._value_serializer is not None:
            value = self._value_serializer(value)
        return self._append(timestamp, _as_bytes("key", key), _as_bytes("value", value), headers)

    def _append(
        self,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Any] | None,
    ) -> BatchRecordMetadata | None:
        if self._closed:
            return None
        checked = check_headers(headers)
        size = estimate_record_size(key, value, checked)
        ts = self._add(timestamp, key, value, checked, size)
        if ts is None:
            return None
        return BatchRecordMetadata(len(self._records) - 1, None, size, ts)

    def _add(
        self,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        checked: list[Header],
        size: int,
    ) -> int | None:
        """Add a record whose headers are checked and whose size is estimated; return its
        timestamp, or None when the batch is closed or has no room for it."""
        if self._closed:
            return None
        if self._records and self._size + size > self._batch_size:
            self.close()
            return None
        ts = now_ms() if timestamp is None else int(timestamp)
        self._records.append((ts, key, value, checked))
        self._size += size
        return ts

    def close(self) -> None:
        """No more records: ``append`` returns None from now on."""
        self._closed = True

    def closed(self) -> bool:
        return self._closed

    def size(self) -> int:
        """The batch's size in bytes (estimated until encoded, then exact)."""
        return len(self._buffer) if self._buffer is not None else self._size

    def record_count(self) -> int:
        return len(self._records)

    def _build(self, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
        self._closed = True
        self._buffer = _native.encode_batch(
            self._records,
            compression=self._compression,
            transactional=self._transactional,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
        )
        return self._buffer


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
    ) -> None:
        self.tp = tp
        self.builder = builder
        self.created = time.monotonic()
        self._linger = linger
        self._loop = loop
        self.future: asyncio.Future[RecordMetadata | None] = loop.create_future()
        self.record_futures: list[tuple[asyncio.Future[RecordMetadata | None], int, int]] = []
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
        size: int | None = None,
    ) -> asyncio.Future[RecordMetadata | None] | None:
        """Add a record (headers checked; ``size`` its ``estimate_record_size``, computed when
        not given); its future, or None when the batch has no room."""
        if size is None:
            size = estimate_record_size(key, value, checked)
        builder = self.builder
        ts = builder._add(timestamp_ms, key, value, checked, size)
        if ts is None:
            return None
        fut: asyncio.Future[RecordMetadata | None] = self._loop.create_future()
        self.record_futures.append((fut, len(builder._records) - 1, ts))
        return fut

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
        # One RecordMetadata per record: built with tuple.__new__, which skips the Python-level
        # __new__ a NamedTuple call goes through.
        make = tuple.__new__
        topic, partition = tp
        for fut, delta, timestamp in self.record_futures:
            if not fut.done():
                fut.set_result(
                    make(
                        RecordMetadata,
                        (
                            topic,
                            partition,
                            tp,
                            base_offset + delta if base_offset >= 0 else -1,
                            timestamp if timestamp_type == 0 else log_append_time,
                            timestamp_type,
                            log_start_offset,
                        ),
                    )
                )
        self.mark_drained()

    def done_noack(self) -> None:
        """acks=0: nothing is known but that the bytes were handed to the socket."""
        if not self.future.done():
            self.future.set_result(None)
        for fut, _, _ in self.record_futures:
            if not fut.done():
                fut.set_result(None)
        self.mark_drained()

    def failure(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)
        if self.record_futures:
            # The records' futures carry the error to the user; the batch future is ours.
            self.future.exception()
        for fut, _, _ in self.record_futures:
            if not fut.done():
                fut.set_exception(copy.copy(exc))
        if not self.drained.done():
            self.drained.set_exception(exc)
            self.drained.exception()


class MessageAccumulator:
    """Batches by partition, in the order they will be sent."""

    def __init__(
        self,
        cluster: ClusterMetadata,
        config: ProducerConfig,
        *,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._cluster = cluster
        self._on_failure = on_failure
        self._batch_size = config.max_batch_size
        self._compression = config.compression_type
        # A batch not sent within request_timeout_ms fails (no leader to send it to).
        self._batch_ttl = config.request_timeout_ms / 1000
        self._linger = config.linger_ms / 1000
        self._transactional = config.transactional_id is not None
        self._batches: dict[TopicPartition, collections.deque[ProducerBatch]] = {}
        self._incomplete: set[ProducerBatch] = set()
        self._flushing = 0
        self._closed = False
        self._exception: BaseException | None = None
        self.wakeup = asyncio.Event()
        """Set when the sender has something new to look at."""

    # -- the producer's side ---------------------------------------------------------------

    def create_builder(
        self,
        key_serializer: Serializer | None = None,
        value_serializer: Serializer | None = None,
    ) -> BatchBuilder:
        return BatchBuilder(
            self._batch_size,
            self._compression,
            is_transactional=self._transactional,
            key_serializer=key_serializer,
            value_serializer=value_serializer,
        )

    def _check_open(self) -> None:
        if self._closed:
            raise Errors.ProducerClosed()
        if self._exception is not None:
            raise copy.copy(self._exception)

    def _new_batch(self, tp: TopicPartition, builder: BatchBuilder) -> ProducerBatch:
        batch = ProducerBatch(tp, builder, self._linger, loop=asyncio.get_running_loop())
        self._batches.setdefault(tp, collections.deque()).append(batch)
        self._incomplete.add(batch)
        batch.future.add_done_callback(lambda _: self._incomplete.discard(batch))
        if self._on_failure is not None:
            batch.future.add_done_callback(self._batch_done)
        self.wakeup.set()
        return batch

    def _batch_done(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            assert self._on_failure is not None
            self._on_failure(future.exception())  # type: ignore[arg-type]

    def append_now(
        self,
        tp: TopicPartition,
        key: bytes | None,
        value: bytes | None,
        timestamp_ms: int | None,
        checked: list[Header],
        size: int,
    ) -> asyncio.Future[RecordMetadata | None] | None:
        """Append to ``tp``'s open batch if it has room, without waiting: the record's future,
        or None (no open batch, or it is full), and then ``add_message`` decides."""
        if self._closed or self._exception is not None:
            return None
        queue = self._batches.get(tp)
        if queue:
            batch = queue[-1]
            if batch.encoded is None:
                return batch.append(timestamp_ms, key, value, checked, size)
        return None

    async def add_message(
        self,
        tp: TopicPartition,
        key: bytes | None,
        value: bytes | None,
        timeout: float,
        timestamp_ms: int | None = None,
        headers: Sequence[Header] = (),
        *,
        abort_on_new_batch: bool = False,
        size: int | None = None,
    ) -> asyncio.Future[RecordMetadata | None] | None:
        """Append a record to ``tp``'s open batch, waiting up to ``timeout`` seconds for the
        sender to take a full batch first (``size``: its ``estimate_record_size``, computed
        when not given).

        With ``abort_on_new_batch`` return None instead of starting a new batch (the sticky
        partitioner then moves to another partition, as KIP-480 has it)."""
        deadline = time.monotonic() + timeout
        checked = headers if type(headers) is list else check_headers(headers)
        if size is None:
            size = estimate_record_size(key, value, checked)
        while True:
            self._check_open()
            queue = self._batches.get(tp)
            if queue and queue[-1].encoded is None:
                batch = queue[-1]
            elif abort_on_new_batch:
                return None
            else:
                batch = self._new_batch(tp, self.create_builder())
            fut = batch.append(timestamp_ms, key, value, checked, size)
            if fut is not None:
                return fut
            if abort_on_new_batch:
                self.wakeup.set()
                return None
            # Full: the sender may take it now; wait until it has.
            self.wakeup.set()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Errors.KafkaTimeoutError(
                    f"{tp.topic}[{tp.partition}]: no room for the record within {timeout:.3f}s"
                )
            await asyncio.wait([batch.drained], timeout=remaining)

    async def add_batch(
        self, builder: BatchBuilder, tp: TopicPartition, timeout: float
    ) -> asyncio.Future[RecordMetadata | None]:
        """Queue a caller-built batch for ``tp`` once the partition's pending batch is taken."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_open()
            queue = self._batches.get(tp)
            if not queue:
                builder.close()
                return self._new_batch(tp, builder).future
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Errors.KafkaTimeoutError(
                    f"{tp.topic}[{tp.partition}]: no room for the batch within {timeout:.3f}s"
                )
            await asyncio.wait([queue[-1].drained], timeout=remaining)

    async def flush(self) -> None:
        """Send everything now (ignoring linger) and wait until every batch is done."""
        waiters = [b.future for b in self._incomplete]
        if not waiters:
            return
        self._flushing += 1
        self.wakeup.set()
        try:
            await asyncio.wait(waiters)
        finally:
            self._flushing -= 1

    async def close(self) -> None:
        self._closed = True
        await self.flush()

    def fail_all(self, exc: BaseException) -> None:
        """The sender is gone: fail everything queued or in flight, and every later send."""
        self._exception = exc
        for batch in list(self._incomplete):
            batch.failure(copy.copy(exc))
        self._batches.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def batch_ttl(self) -> float:
        """Seconds a batch may wait for a leader or keep being retried before it fails."""
        return self._batch_ttl

    # -- the sender's side -----------------------------------------------------------------

    def reenqueue(self, batch: ProducerBatch) -> None:
        """Put a batch back for a retry, ahead of newer batches and, among batches that already
        carry sequence numbers, in sequence order."""
        batch.drained = batch.future.get_loop().create_future()
        queue = self._batches.setdefault(batch.tp, collections.deque())
        index = 0
        if batch.base_sequence >= 0:
            for index, other in enumerate(queue):  # noqa: B007
                if other.encoded is None or other.base_sequence > batch.base_sequence:
                    break
            else:
                index = len(queue)
        queue.insert(index, batch)
        self.wakeup.set()

    def drain(
        self,
        *,
        node_ready: Callable[[int], bool],
        sendable: Callable[[ProducerBatch], bool],
        max_request_size: int,
    ) -> tuple[dict[int, list[ProducerBatch]], float | None, bool]:
        """Take the batches ready to go: ``({leader: batches}, seconds until something else
        may be ready (None: nothing pending), some leader is unknown)``.

        At most one batch per partition and ``max_request_size`` bytes per request (but always
        one batch) are taken; ``node_ready`` and ``sendable`` are the sender's in-flight limits.
        Batches with no leader for longer than the batch ttl fail.
        """
        now = time.monotonic()
        out: dict[int, list[ProducerBatch]] = {}
        sizes: dict[int, int] = {}
        wait: float | None = None
        unknown_leader = False
        flushing = self._flushing > 0 or self._closed
        for tp in list(self._batches):
            queue = self._batches[tp]
            batch = queue[0]
            leader = self._cluster.leader_for_partition(tp)
            if leader is None or leader < 0:
                unknown_leader = True
                if now - batch.created > self._batch_ttl:
                    self._pop(tp)
                    cls = (
                        Errors.LeaderNotAvailableError
                        if leader == -1
                        else Errors.NotLeaderForPartitionError
                    )
                    batch.failure(
                        cls(f"{tp.topic}[{tp.partition}]: no leader within {self._batch_ttl:.3f}s")
                    )
                continue
            if batch.retry_at > now:
                wait = _min(wait, batch.retry_at - now)
                continue
            linger = 0.0 if flushing else batch.linger_left(now)
            if linger > 0:
                wait = _min(wait, linger)
                continue
            if not node_ready(leader) or not sendable(batch):
                continue
            size = batch.builder.size()
            if leader in out and sizes[leader] + size > max_request_size:
                continue
            self._pop(tp)
            out.setdefault(leader, []).append(batch)
            sizes[leader] = sizes.get(leader, 0) + size
        return out, wait, unknown_leader

    def _pop(self, tp: TopicPartition) -> ProducerBatch:
        queue = self._batches[tp]
        batch = queue.popleft()
        if not queue:
            del self._batches[tp]
        batch.builder.close()
        batch.mark_drained()
        return batch


def _min(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)
