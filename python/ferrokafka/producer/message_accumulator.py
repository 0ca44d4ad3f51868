"""Per-partition batches waiting to be sent: the producer appends, the sender drains.

Back-pressure follows aiokafka: each partition fills one batch at a time; when it is full,
``add_message`` waits (up to its timeout) until the sender has taken it. The batches
themselves are ``batch.py``'s (their names stay importable from here, aiokafka's path).
"""

from __future__ import annotations

import asyncio
import collections
import copy
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import errors as Errors
from .._native import OpenBatches, RecordFuture
from ..cluster import ClusterMetadata
from ..config import ProducerConfig
from ..structs import RecordMetadata, TopicPartition
from .batch import (
    BATCH_OVERHEAD,
    BatchBuilder,
    BatchRecordMetadata,
    Header,
    ProducerBatch,
    Serializer,
    check_headers,
    estimate_record_size,
)

__all__ = [
    "BATCH_OVERHEAD",
    "BatchBuilder",
    "BatchRecordMetadata",
    "MessageAccumulator",
    "ProducerBatch",
    "estimate_record_size",
]


#: Batches a partition may hold that the sender has not taken yet, the one taking records
#: included. More than one, so a record for a partition whose previous batch is still on its
#: way (one request per partition at a time without idempotence) starts the next batch
#: instead of waiting for that round trip, while records for the other partitions wait
#: behind it; few, because the sender runs only when the producing task waits, and waiting
#: for room is where it does (a send loop never waits otherwise), and because what is
#: queued is memory: a partition holds at most this many batches of ``max_batch_size``.
QUEUED_BATCHES = 4


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
        self._closed_bytes: dict[TopicPartition, int] = {}
        """Bytes of each partition's batches closed for appends (the sticky partitioner's
        measure of what went to a partition)."""
        self._unsettled: dict[TopicPartition, int] = {}
        """How many of each partition's batches are queued or on their way."""
        self._flushing = 0
        self._closed = False
        self._exception: BaseException | None = None
        self.wakeup = asyncio.Event()
        """Set when the sender has something new to look at."""
        self.open = OpenBatches(config.max_request_size)
        """The open batch of each partition, written here as each is opened; ``send()``'s
        shortcuts append to them in one native call, and the sticky partitioner keeps its
        choice there. A metadata update makes the shortcuts wait for the full path to look at
        the partitions again."""
        cluster.add_listener(lambda _: self.open.metadata_changed())

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

    def check_open(self) -> None:
        """Raise ``ProducerClosed`` once closed, or (a copy of) the sender's failure."""
        if self._closed:
            raise Errors.ProducerClosed()
        if self._exception is not None:
            raise copy.copy(self._exception)

    def _new_batch(self, tp: TopicPartition, builder: BatchBuilder) -> ProducerBatch:
        batch = ProducerBatch(
            tp,
            builder,
            self._linger,
            loop=asyncio.get_running_loop(),
            on_settled=self._settled,
            on_awaited=self.wakeup.set,
        )
        self._batches.setdefault(tp, collections.deque()).append(batch)
        if not builder.closed():
            self.open.opened(tp.topic, tp.partition, builder._records)
        self._incomplete.add(batch)
        self._unsettled[tp] = self._unsettled.get(tp, 0) + 1
        if self._on_failure is not None:
            batch.future.add_done_callback(self._batch_done)
        self.wakeup.set()
        return batch

    def _settled(self, batch: ProducerBatch) -> None:
        if batch in self._incomplete:
            self._incomplete.discard(batch)
            left = self._unsettled[batch.tp] - 1
            if left:
                self._unsettled[batch.tp] = left
            else:
                del self._unsettled[batch.tp]

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
    ) -> RecordFuture | None:
        """Append to ``tp``'s open batch if it has room, without waiting: the record's future,
        or None (no open batch, or it is full), and then ``add_message`` decides."""
        if self._closed or self._exception is not None:
            return None
        queue = self._batches.get(tp)
        if queue:
            batch = queue[-1]
            if batch.encoded is None:
                return batch.append(timestamp_ms, key, value, checked)
        return None

    async def add_message(
        self,
        tp: TopicPartition,
        key: bytes | None,
        value: bytes | None,
        timeout: float,
        timestamp_ms: int | None = None,
        headers: Sequence[Header] = (),
    ) -> RecordFuture:
        """Append a record to ``tp``'s open batch, or to a new one behind it when it is full
        (up to ``QUEUED_BATCHES`` a partition), waiting up to ``timeout`` seconds for the
        sender to take the partition's first batch when there are that many."""
        deadline = time.monotonic() + timeout
        checked = headers if type(headers) is list else check_headers(headers)
        while True:
            self.check_open()
            queue = self._batches.get(tp)
            if queue and queue[-1].encoded is None and not queue[-1].builder.closed():
                batch = queue[-1]
            elif not queue or len(queue) < QUEUED_BATCHES:
                batch = self._new_batch(tp, self.create_builder())
            else:
                # As many batches as a partition may hold: wait until the sender has taken
                # the first.
                self.wakeup.set()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Errors.KafkaTimeoutError(
                        f"{tp.topic}[{tp.partition}]: no room for the record within {timeout:.3f}s"
                    )
                await asyncio.wait([queue[0].drained], timeout=remaining)
                continue
            fut = batch.append(timestamp_ms, key, value, checked)
            if fut is not None:
                return fut
            # Full (append closed it): the sender may take it now; the record goes on into
            # the next batch, or waits, above.
            self.wakeup.set()

    async def add_batch(
        self, builder: BatchBuilder, tp: TopicPartition, timeout: float
    ) -> asyncio.Future[RecordMetadata | None]:
        """Queue a caller-built batch for ``tp`` once the partition's pending batch is taken."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_open()
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

    def add_batches(
        self, batches: Sequence[tuple[TopicPartition, BatchBuilder]]
    ) -> list[asyncio.Future[RecordMetadata | None]]:
        """Queue caller-built batches at once, each behind its partition's pending batches
        (whose open one is closed, so later records go after these). For a bulk send whose
        data is in memory already: waiting for each partition's previous batch to be taken
        would cost a round trip per batch."""
        self.check_open()
        futures = []
        for tp, builder in batches:
            queue = self._batches.get(tp)
            if queue:
                queue[-1].builder.close()
            builder.close()
            futures.append(self._new_batch(tp, builder).future)
        return futures

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
        self.open.close()
        await self.flush()

    def fail_all(self, exc: BaseException) -> None:
        """The sender is gone: fail everything queued or in flight, and every later send."""
        self._exception = exc
        self.open.close()
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
        node_idle: Callable[[int], bool] | None = None,
    ) -> tuple[dict[int, list[ProducerBatch]], float | None, bool]:
        """Take the batches ready to go: ``({leader: batches}, seconds until something else
        may be ready (None: nothing pending), some leader is unknown)``.

        At most one batch per partition and ``max_request_size`` bytes per request (but always
        one batch) are taken; ``node_ready`` and ``sendable`` are the sender's in-flight limits.
        Batches with no leader for longer than the batch ttl fail.

        ``linger_ms`` is how long a batch may wait for more records, at most: a batch whose
        records someone is waiting for (a done-callback on a future: an await, a gather)
        goes at once when its leader has nothing in flight from this producer
        (``node_idle``), as there is then nothing for more records to batch behind, and
        waiting would only delay the one who waits (Nagle's rule, for awaited records).
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
            if (
                linger > 0
                and node_idle is not None
                and batch.builder.awaited()
                and node_idle(leader)
            ):
                linger = 0.0
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

    def busy(self, tp: TopicPartition) -> bool:
        """Whether a batch of ``tp`` is queued or on its way (not yet answered)."""
        return tp in self._unsettled

    def produced_bytes(self, tp: TopicPartition) -> int:
        """Bytes appended to ``tp`` so far: its batches taken by the sender and those still
        queued (a batch retried counts once)."""
        queued = sum(b.builder.size() for b in self._batches.get(tp, ()) if b.encoded is None)
        return self._closed_bytes.get(tp, 0) + queued

    def _pop(self, tp: TopicPartition) -> ProducerBatch:
        queue = self._batches[tp]
        batch = queue.popleft()
        if not queue:
            del self._batches[tp]
        if batch.encoded is None:
            self._closed_bytes[tp] = self._closed_bytes.get(tp, 0) + batch.builder.size()
        batch.builder.close()
        batch.mark_drained()
        return batch


def _min(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)
