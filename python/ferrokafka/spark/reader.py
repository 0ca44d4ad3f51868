"""Reading one offset range on an executor, as Arrow record batches in Spark's Kafka schema.

A range ``[from, until)`` ends exactly at ``until``: the last batch is cut there, and the position
may pass it only over records that are not data (transaction markers, aborted records). Gaps in
the offsets (compaction, transactions) are not data loss. Loss is a start that retention already
deleted, a partition that vanished, or a log that ends below ``until``; with ``failOnDataLoss``
(the default) it fails the task naming the topic, partition and offsets, otherwise it is logged
and the range goes on with what is left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from .. import errors as Errors
from ..arrow.loss import KafkaDataLossError, deleted, gone, report_data_loss, truncated
from ..arrow.schema import cut, without_headers
from ..consumer import AIOKafkaConsumer
from ..errors import PayloadFormatError
from ..formats import PayloadFormat
from ..structs import TopicPartition
from .options import FetchOptions
from .planning import OffsetRange
from .runtime import Runtime, runtime

__all__ = ["KafkaDataLossError", "read_range", "report_data_loss"]

log = logging.getLogger(__name__)

#: Longest single wait for data; between waits the range checks for loss and its deadline.
_POLL_S = 1.0
#: Records handed to Spark at most per batch.
MAX_BATCH_RECORDS = 65536

# Where each cached consumer stopped last, so the next range of the same partition that starts
# there reuses what was fetched ahead instead of seeking (which drops it).
_stopped_at: dict[int, tuple[TopicPartition, int]] = {}


def read_range(fetch: FetchOptions, rng: OffsetRange) -> Iterator[Any]:
    """Yield ``pyarrow.RecordBatch``es with exactly the records of ``rng`` (keys and values
    decoded by ``fetch.key_format`` and ``fetch.value_format``, where given)."""
    payloads = [
        (column, fmt.payload_format())
        for column, fmt in (("key", fetch.key_format), ("value", fetch.value_format))
        if fmt is not None
    ]
    include_headers = fetch.include_headers
    if rng.size == 0:
        return
    rt = runtime()
    with rt.lock:
        consumer = rt.run(rt.consumer(fetch.client, fetch.ssl))
        reading = _Range(rt, consumer, rng, fetch.fail_on_data_loss, fetch.poll_timeout_ms / 1000)
        broken = False
        try:
            rt.run(reading.begin())
            while not reading.done:
                batch = rt.run(reading.next_batch())
                if batch is not None and batch.num_rows:
                    batch = batch if include_headers else without_headers(batch)
                    for column, payload in payloads:
                        rt.run(payload.prepare(batch, column))
                        batch = _decoded(batch, column, payload, rng)
                    yield batch
        except BaseException:
            # Stopped early (Spark needed no more rows: GeneratorExit) or failed.
            _stopped_at.pop(id(consumer), None)
            failure = reading.failure
            broken = failure is not None and not isinstance(failure, KafkaDataLossError)
            raise
        finally:
            if broken:
                # The next task gets a fresh consumer rather than one in an unknown state.
                try:
                    rt.run(rt.discard(consumer))
                except Exception as exc:
                    log.warning("closing a failed consumer failed: %s", exc)
            else:
                rt.run(reading.end())


def _decoded(batch: Any, column: str, payloads: PayloadFormat, rng: OffsetRange) -> Any:
    """``batch`` with its ``column`` decoded; FAILFAST's malformed record fails the task,
    named."""
    out, failed = payloads.apply(batch, column)
    if failed is not None:
        offset = batch.column("offset")[failed.row].as_py()
        raise PayloadFormatError(
            f"{rng.topic}[{rng.partition}] offset {offset}: the record's {column} does not read "
            f"as {payloads!r}: {failed.reason}",
            rng.topic,
            rng.partition,
            offset,
        )
    return out


class _Range:
    """The state of one range being read; its coroutines run on the runtime's loop."""

    def __init__(
        self,
        rt: Runtime,
        consumer: AIOKafkaConsumer[bytes, bytes],
        rng: OffsetRange,
        fail_on_data_loss: bool,
        poll_timeout: float,
    ) -> None:
        self.rt = rt
        self.consumer = consumer
        self.rng = rng
        self.tp = rng.tp
        self.fail_on_data_loss = fail_on_data_loss
        self.poll_timeout = poll_timeout
        self.until = rng.until_offset
        self.position = rng.from_offset
        #: The consumer's own position (beyond ``until`` when the last batch was cut).
        self.fetched_to = rng.from_offset
        self.done = False
        self.failure: BaseException | None = None
        self.last_progress = time.monotonic()

    async def begin(self) -> None:
        consumer, tp = self.consumer, self.tp
        if consumer.assignment() != {tp}:
            consumer.assign([tp])
            _stopped_at.pop(id(consumer), None)
        if tp in consumer.paused():
            consumer.resume(tp)
        if _stopped_at.pop(id(consumer), None) != (tp, self.position):
            consumer.seek(tp, self.position)

    async def end(self) -> None:
        consumer = self.consumer
        if self.tp in consumer.assignment():
            # Stop fetching ahead while this process has no task; keep what was fetched.
            consumer.pause(self.tp)
            if self.done and self.failure is None and self.fetched_to == self.until:
                _stopped_at[id(consumer)] = (self.tp, self.position)

    async def next_batch(self) -> Any:
        consumer, tp = self.consumer, self.tp
        want = min(self.until - self.position, MAX_BATCH_RECORDS)
        try:
            got = await consumer.getmany_arrow(tp, timeout_ms=int(_POLL_S * 1000), max_records=want)
        except Errors.OffsetOutOfRangeError:
            await self._out_of_range()
            return None
        except BaseException as exc:
            self.failure = exc
            raise
        batch = got.get(tp)
        self.position = self.fetched_to = await consumer.position(tp)
        if batch is not None and batch.num_rows:
            self.last_progress = time.monotonic()
            last = batch.column(4)[batch.num_rows - 1].as_py()
            if last >= self.until:
                batch = cut(batch, self.until)
        elif self.position < self.until:
            await self._check_stalled()
        if self.position >= self.until:
            self.done = True
            self.position = self.until
        return batch

    async def _out_of_range(self) -> None:
        """The broker no longer has the position: retention deleted it, or the log was cut."""
        tp = self.tp
        earliest = (await self.consumer.beginning_offsets([tp]))[tp]
        latest = (await self.consumer.end_offsets([tp]))[tp]
        if self.position < earliest:
            lost_to = min(earliest, self.until)
            self._lost(deleted(tp, self.position, earliest, self.until))
            self.position = lost_to
        else:
            self._lost(truncated(tp, self.position, latest, self.until))
            self.position = self.until
        if self.position >= self.until:
            self.done = True
        else:
            self.consumer.seek(tp, self.position)

    async def _check_stalled(self) -> None:
        """No data for a while: is the partition still there? Past the poll timeout, fail."""
        waited = time.monotonic() - self.last_progress
        if waited < 5 * _POLL_S and waited < self.poll_timeout:
            return
        tp = self.tp
        response = await self.consumer._client.fetch_all_metadata()
        exists = any(
            t["name"] == tp.topic
            and not t["error_code"]
            and any(p["partition_index"] == tp.partition for p in t["partitions"])
            for t in response["topics"]
        )
        if not exists:
            self._lost(gone(tp, self.position, self.until))
            self.done = True
            return
        # A log cut below the position answers the fetch with OFFSET_OUT_OF_RANGE (handled
        # there); what is left is a wait, e.g. for an open transaction with read_committed.
        if waited >= self.poll_timeout:
            exc = Errors.KafkaTimeoutError(
                f"Cannot fetch record for offset {self.position} in "
                f"{self.poll_timeout * 1000:.0f} milliseconds ({tp.topic}-{tp.partition}, "
                f"reading [{self.position}, {self.until}); option kafkaConsumer.pollTimeoutMs)"
            )
            self.failure = exc
            raise exc

    def _lost(self, what: str) -> None:
        report_data_loss(self.fail_on_data_loss, what)
