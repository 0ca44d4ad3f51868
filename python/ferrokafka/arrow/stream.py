"""A bounded read of many partitions at once, as Arrow record batches, for asyncio code.

Every partition of the read is fetched by one consumer (assigned, no group, no commits), whose
fetcher keeps fetching ahead while the caller works through the batch it was handed. Each
partition's last batch is cut at the range's end; a partition whose range is read is paused, so
nothing past the end is fetched twice.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Mapping
from typing import Any

from .. import errors as Errors
from ..consumer import AIOKafkaConsumer
from ..formats import PayloadFormat, check_formats, formatted_schema
from ..structs import TopicPartition
from .bounds import Bounds, resolve
from .loss import deleted, gone, report_data_loss, truncated
from .schema import HEADERS_INDEX, OFFSET_COLUMN, arrow_schema, cut, without_headers

__all__ = ["AsyncBatchReader"]

#: Longest single wait for data; between waits the read checks for loss and its deadline.
_POLL_S = 1.0
#: A partition without progress for this long (at most the poll timeout) makes the read ask
#: the metadata whether it still exists (a deleted topic would otherwise stall it silently).
_STALL_S = 5 * _POLL_S
#: Rows per batch at most.
MAX_BATCH_RECORDS = 65536
#: The option that decides what data loss does, named in its messages.
_OPTION = "fail_on_data_loss"

#: What a bounded read changes in the consumer's defaults (the caller's options win).
_READ_DEFAULTS: Mapping[str, Any] = {
    # A range covers records that exist: no fetch needs to wait for new ones.
    "fetch_max_wait_ms": 10,
    "max_partition_fetch_bytes": 8 * 1024 * 1024,
    "allow_auto_create_topics": False,
}
#: Options a bounded read sets itself.
_FIXED = {"group_id": None, "enable_auto_commit": False, "auto_offset_reset": "none"}


class _Partition:
    """Where one partition's read stands."""

    __slots__ = ("last_progress", "position", "until")

    def __init__(self, start: int, until: int) -> None:
        self.position = start
        self.until = until
        self.last_progress = time.monotonic()


class AsyncBatchReader:
    """``async for batch in reader``: the records of a bounded read as ``pyarrow.RecordBatch``es
    in Spark's Kafka schema (:attr:`schema`). Within a partition, rows come in offset order;
    batches of different partitions interleave. Made by :func:`ferrokafka.arrow.read_async`.

    Use it with ``async with`` (or call :meth:`close`): the consumer it opens is closed when the
    read ends, fails or is left early. A cancelled ``__anext__`` costs only itself: no records
    are lost and the next call goes on where the read stood."""

    def __init__(
        self,
        bootstrap_servers: str | list[str],
        bounds: Bounds,
        *,
        include_headers: bool,
        fail_on_data_loss: bool,
        poll_timeout_ms: int,
        client_options: Mapping[str, Any],
        key_format: PayloadFormat | None = None,
        value_format: PayloadFormat | None = None,
    ) -> None:
        if isinstance(poll_timeout_ms, bool) or not isinstance(poll_timeout_ms, int):
            raise TypeError(f"poll_timeout_ms must be an int, got {poll_timeout_ms!r}")
        if poll_timeout_ms <= 0:
            raise ValueError(f"poll_timeout_ms must be positive, got {poll_timeout_ms}")
        fixed = sorted(set(client_options) & set(_FIXED))
        if fixed:
            raise TypeError(
                f"a bounded read sets {', '.join(fixed)} itself (it reads without a group "
                "and fails on offsets out of range)"
            )
        self._bounds = bounds
        self._include_headers = bool(include_headers)
        self._fail = bool(fail_on_data_loss)
        self._poll_timeout = poll_timeout_ms / 1000
        # Made now, so that a wrong option fails here rather than at the first batch.
        self._options: dict[str, Any] = {
            "bootstrap_servers": bootstrap_servers,
            **_READ_DEFAULTS,
            **client_options,
            **_FIXED,
        }
        self._consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(**self._options)
        self._ranges: dict[TopicPartition, tuple[int, int]] | None = None
        #: The partitions still being read (None until the first batch is asked for).
        self._reading: dict[TopicPartition, _Partition] | None = None
        self._ready: collections.deque[Any] = collections.deque()
        self._started = False
        #: One caller starts the consumer and resolves the ranges; a second one waits for it.
        self._resolving = asyncio.Lock()
        self._closed = False
        check_formats(key_format, value_format)
        self._formats = (key_format, value_format)
        self._formatted = key_format is not None or value_format is not None
        self._schema = arrow_schema(self._include_headers)
        if self._formatted:
            schema = formatted_schema(arrow_schema(True), key_format, value_format)
            self._schema = schema if include_headers else schema.remove(HEADERS_INDEX)

    @property
    def schema(self) -> Any:
        """The batches' ``pyarrow.Schema``: Spark's Kafka schema (``headers`` last, when
        asked for)."""
        return self._schema

    async def ranges(self) -> dict[TopicPartition, tuple[int, int]]:
        """``[from, until)`` of every partition read, by offset, resolved against the broker
        on the first call (or the first batch asked for). Fetching starts with the first
        batch."""
        async with self._resolving:
            if self._ranges is None:
                await self._resolve()
        assert self._ranges is not None
        return dict(self._ranges)

    async def _resolve(self) -> None:
        if self._closed:
            raise Errors.ConsumerStoppedError("the read was closed")
        if not self._started:
            try:
                await self._consumer.start()
            except BaseException:
                # A consumer whose start() failed (or was cancelled) is stopped: the next call
                # starts a fresh one.
                self._consumer = AIOKafkaConsumer(**self._options)
                raise
            self._started = True
        try:
            self._ranges = await resolve(self._consumer, self._bounds)
        except Exception:
            # Bounds the topic cannot meet, a topic that does not exist: the read ends.
            await self.close()
            raise

    async def _begin(self) -> None:
        ranges = await self.ranges()
        self._reading = {tp: _Partition(a, b) for tp, (a, b) in ranges.items() if b > a}
        if self._reading:
            self._consumer.assign(list(self._reading))
            for tp, part in self._reading.items():
                self._consumer.seek(tp, part.position)

    @property
    def _partitions(self) -> dict[TopicPartition, _Partition]:
        assert self._reading is not None, "the read has not begun"
        return self._reading

    def __aiter__(self) -> AsyncBatchReader:
        return self

    async def __anext__(self) -> Any:
        while not self._ready:
            if self._closed:
                raise StopAsyncIteration
            if self._reading is None:
                await self._begin()
            if not self._reading:
                await self.close()
                raise StopAsyncIteration
            try:
                await self._fetch()
            except Exception:
                # Data loss, a timeout, a broker's error: the read ends with it.
                await self.close()
                raise
        return self._ready.popleft()

    async def read_all(self) -> Any:
        """The rest of the read as one ``pyarrow.Table``."""
        import pyarrow as pa

        return pa.Table.from_batches([batch async for batch in self], schema=self._schema)

    async def close(self) -> None:
        """Close the consumer. Idempotent."""
        self._closed = True
        self._ready.clear()
        await self._consumer.stop()

    async def __aenter__(self) -> AsyncBatchReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _fetch(self) -> None:
        consumer = self._consumer
        pending = list(self._partitions)
        try:
            key_format, value_format = self._formats
            got = await consumer.getmany_arrow(
                *pending,
                timeout_ms=int(_POLL_S * 1000),
                max_records=MAX_BATCH_RECORDS,
                key_format=key_format,
                value_format=value_format,
            )
        except Errors.OffsetOutOfRangeError:
            await self._out_of_range()
            return
        # No await gives way until the batches are in _ready: a cancelled call took nothing.
        now = time.monotonic()
        for tp in pending:
            part = self._partitions[tp]
            batch = got.get(tp)
            position = consumer._subscription.state(tp).position
            if position is not None and position > part.position:
                # Progress, rows or not (markers and aborted records move it too).
                part.position = position
                part.last_progress = now
            if batch is not None and batch.num_rows:
                if batch.column(OFFSET_COLUMN)[batch.num_rows - 1].as_py() >= part.until:
                    batch = cut(batch, part.until)
                if batch.num_rows:
                    if not self._include_headers:
                        batch = (
                            batch.remove_column(HEADERS_INDEX)
                            if self._formatted
                            else without_headers(batch)
                        )
                    self._ready.append(batch)
            if part.position >= part.until:
                self._finish(tp)
        if not self._ready and self._partitions:
            await self._check_stalled()

    def _finish(self, tp: TopicPartition) -> None:
        del self._partitions[tp]
        # Nothing past the range is wanted: stop fetching it.
        self._consumer.pause(tp)

    async def _out_of_range(self) -> None:
        """Retention deleted a position, or a log was cut below it: which partitions?"""
        consumer = self._consumer
        tps = list(self._partitions)
        earliest = await consumer.beginning_offsets(tps)
        latest = await consumer.end_offsets(tps)
        for tp in tps:
            part = self._partitions.get(tp)
            if part is None:
                continue
            if part.position < earliest[tp]:
                report_data_loss(
                    self._fail, deleted(tp, part.position, earliest[tp], part.until), _OPTION
                )
                part.position = min(earliest[tp], part.until)
            elif part.position > latest[tp]:
                report_data_loss(
                    self._fail, truncated(tp, part.position, latest[tp], part.until), _OPTION
                )
                part.position = part.until
            else:
                continue
            if part.position >= part.until:
                self._finish(tp)
            else:
                consumer.seek(tp, part.position)

    async def _check_stalled(self) -> None:
        """No data for a while: are the partitions still there? Past the poll timeout, fail."""
        now = time.monotonic()
        stalled = [
            tp
            for tp, part in self._partitions.items()
            if now - part.last_progress >= min(_STALL_S, self._poll_timeout)
        ]
        if not stalled:
            return
        existing: set[tuple[str | None, int]] | None
        try:
            response = await self._consumer._client.fetch_all_metadata()
        except Errors.KafkaError as exc:
            if not exc.retriable:
                raise
            existing = None  # unknown for now: only the poll timeout applies
        else:
            existing = {
                (t["name"], p["partition_index"])
                for t in response["topics"]
                if not t["error_code"]
                for p in t["partitions"]
            }
        for tp in stalled:
            part = self._partitions.get(tp)
            if part is None:
                continue
            if existing is not None and (tp.topic, tp.partition) not in existing:
                report_data_loss(self._fail, gone(tp, part.position, part.until), _OPTION)
                self._finish(tp)
            elif time.monotonic() - part.last_progress >= self._poll_timeout:
                # The partition exists and brings nothing: its leader does not answer.
                raise Errors.KafkaTimeoutError(
                    f"no record of {tp.topic}-{tp.partition} at offset {part.position} came in "
                    f"{self._poll_timeout * 1000:.0f} ms (reading [{part.position}, "
                    f"{part.until}); option poll_timeout_ms)"
                )
