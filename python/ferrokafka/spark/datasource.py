"""``spark.read.format("ferrokafka")``, ``spark.readStream.format("ferrokafka")`` and
``df.write`` / ``writeStream.format("ferrokafka")``: a Python data source (PySpark 4.0 and later)
with the options of Spark's Kafka source and sink, reading through the same planning and
fetchers as :func:`ferrokafka.spark.read_kafka`.

PySpark's data source API changed between 4.0 and 4.3; what differs is handled here:

* 4.2 added ``latestOffset(start, limit)`` with read limits and ``getDefaultReadLimit``; 4.0 and
  4.1 call ``latestOffset()`` with no arguments. Both are served by one method: without a start
  the reader continues from the end it returned or planned last (a restarted query tells it
  with ``partitions(end, end)``), else from its initial offsets, so ``maxOffsetsPerTrigger``
  bounds the first micro-batch too. 4.0 and 4.1 run ``Trigger.AvailableNow`` as one batch and
  cannot tell the reader which trigger runs: that batch is rate-limited like any other.
* ``SupportsTriggerAvailableNow`` and the read limits exist from 4.2, the Arrow stream writer
  from 4.1; they are used where present (4.0's streaming writer gets rows).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

from .options import parse_formats, parse_sink_options, parse_source_options
from .planning import OffsetRange, plan_batch
from .reader import read_range
from .runtime import runtime
from .schema import spark_schema
from .streaming import (
    backlog,
    fill_new,
    from_json,
    initial_offsets,
    latest_offsets,
    micro_batch_ranges,
    rate_limit,
    to_json,
)
from .writer import check_sink_schema, chunks, write_batches

try:  # PySpark >= 4.1; 4.0 hands streaming writers rows
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase
except ImportError:  # pragma: no cover
    _StreamWriterBase = DataSourceStreamWriter  # type: ignore[assignment,misc]
_limits: Any
try:  # PySpark >= 4.2: read limits and Trigger.AvailableNow
    from pyspark.sql.streaming import datasource as _limits

    _stream_bases: tuple[type, ...] = (
        DataSourceStreamReader,
        _limits.SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover
    _limits = None
    _stream_bases = (DataSourceStreamReader,)

__all__ = ["KafkaDataSource", "RangePartition", "register"]

NAME = "ferrokafka"

log = logging.getLogger(__name__)


class RangePartition(InputPartition):
    """One offset range: one Spark task."""

    def __init__(self, rng: OffsetRange) -> None:
        super().__init__(rng)
        self.range = rng


def _read(options: Any, partition: Any) -> Iterator[Any]:
    if not isinstance(partition, RangePartition):
        # Spark hands a placeholder partition to a read that planned none.
        return iter(())
    return read_range(options.fetch, partition.range)


class _BatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = parse_source_options(options, streaming=False)

    def partitions(self) -> Sequence[InputPartition]:
        rt = runtime()

        async def plan() -> list[OffsetRange]:
            consumer = await rt.consumer(self.options.client, self.options.ssl)
            return await plan_batch(consumer, self.options)

        with rt.lock:
            ranges = rt.run(plan())
        return [RangePartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.options, partition)


class _StreamReader(*_stream_bases):  # type: ignore[misc]
    """Offsets in the checkpoint are Spark's own ``{"topic": {"partition": offset}}``."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = parse_source_options(options, streaming=True)
        self._target: dict[Any, int] | None = None  # Trigger.AvailableNow's end
        self._previous: dict[str, dict[str, int]] | None = None
        self._initial: dict[str, dict[str, int]] | None = None
        self._last_batch: float | None = None  # the first trigger is never delayed
        #: The offsets last committed (or tried) to the ``commitOffsetsToGroup`` group.
        self._to_group: dict[Any, int] | None = None
        if self.options.commit_group is not None:
            log.info(
                "commitOffsetsToGroup: this query's progress goes to consumer group %r",
                self.options.commit_group,
            )

    def _run(self, make: Any) -> Any:
        rt = runtime()

        async def go() -> Any:
            consumer = await rt.consumer(self.options.client, self.options.ssl)
            return await make(consumer)

        with rt.lock:
            return rt.run(go())

    def initialOffset(self) -> dict[str, Any]:
        # Resolved once: 4.0/4.1 may ask for it after the first latestOffset(), which starts here.
        if self._initial is None:
            self._initial = to_json(self._run(lambda c: initial_offsets(c, self.options)))
        return self._initial

    def getDefaultReadLimit(self) -> Any:
        opts = self.options
        if opts.max_offsets_per_trigger is not None:
            return _limits.ReadMaxRows(opts.max_offsets_per_trigger)
        if opts.min_offsets_per_trigger is not None:
            return _limits.ReadMinRows(opts.min_offsets_per_trigger)
        return _limits.ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        latest, _ = self._run(lambda c: latest_offsets(c, self.options))
        self._target = latest

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        latest, earliest = self._run(lambda c: latest_offsets(c, self.options))
        if self._target is not None:
            latest = {
                tp: min(off, self._target[tp]) for tp, off in latest.items() if tp in self._target
            }
        if start is None:  # PySpark 4.0/4.1
            start = self._previous if self._previous is not None else self.initialOffset()
        else:
            # Spark asks for the next batch only once the previous one is in its checkpoint,
            # and ``start`` is that batch's end: the group gets it if it lacks it (a driver
            # that died before ``commit()`` left the group behind the checkpoint).
            self._commit_to_group(start)
        begin = fill_new(from_json(start), earliest)
        end = self._limited(begin, latest, limit)
        if end is None:
            return start
        self._previous = to_json(end)
        self._last_batch = time.monotonic()
        return self._previous

    def _limited(self, begin: Any, latest: Any, limit: Any) -> Any:
        """``latest`` within the read limits, or None to skip this trigger
        (``minOffsetsPerTrigger`` not reached before ``maxTriggerDelay``)."""
        opts = self.options
        if _limits is not None and isinstance(limit, _limits.ReadAllAvailable):
            return latest
        waited_ms = (
            float("inf")
            if self._last_batch is None
            else (time.monotonic() - self._last_batch) * 1000
        )
        if (
            opts.min_offsets_per_trigger is not None
            and self._target is None
            and backlog(begin, latest) < opts.min_offsets_per_trigger
            and waited_ms < opts.max_trigger_delay_ms
        ):
            return None
        if opts.max_offsets_per_trigger is not None:
            return rate_limit(begin, latest, opts.max_offsets_per_trigger)
        return latest

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        # PySpark 4.0/4.1 tell a restarted query where it stopped only through this call.
        self._previous = end
        ranges = self._run(
            lambda c: micro_batch_ranges(c, self.options, from_json(start), from_json(end))
        )
        return [RangePartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.options, partition)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark calls this once the micro-batch ending at ``end`` is in its checkpoint, which
        stays the source of truth. With ``commitOffsetsToGroup``, ``end`` is committed to
        that consumer group too, so that Kafka's lag tools follow the stream."""
        self._commit_to_group(end)

    def _commit_to_group(self, end: dict[str, Any]) -> None:
        group = self.options.commit_group
        offsets = from_json(end)
        if group is None or not offsets or offsets == self._to_group:
            return
        # Tried once per set of offsets: latestOffset() is asked every few milliseconds while
        # no data comes, and a group that refuses (members of its own, no permission) must not
        # get a request and a warning each time. The next micro-batch tries again.
        self._to_group = offsets

        async def commit(consumer: Any) -> None:
            admin = await runtime().admin(self.options.client, self.options.ssl)
            await admin.alter_consumer_group_offsets(group, offsets)

        try:
            self._run(commit)
        except Exception as exc:
            # Lag reporting failed (a group with members of its own, no permission): the
            # stream goes on, its progress is in the checkpoint.
            log.warning(
                "commitOffsetsToGroup: committing the offsets of a micro-batch to group %r "
                "failed: %s: %s",
                group,
                type(exc).__name__,
                exc,
            )

    def stop(self) -> None:
        """The clients belong to the process and close when it exits."""


class _Written(WriterCommitMessage):
    def __init__(self, count: int) -> None:
        self.count = count


def _fields(schema: Any) -> Mapping[str, str]:
    return {f.name: f.dataType.simpleString() for f in schema.fields}


class _Writer(DataSourceArrowWriter):
    def __init__(self, options: Mapping[str, str], schema: Any) -> None:
        self.sink = parse_sink_options(options)
        check_sink_schema(_fields(schema), self.sink.topic)

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        return _Written(write_batches(self.sink, iterator))


class _StreamWriter(_StreamWriterBase):
    def __init__(self, options: Mapping[str, str], schema: Any) -> None:
        self.sink = parse_sink_options(options)
        check_sink_schema(_fields(schema), self.sink.topic)

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        arrow = _StreamWriterBase is not DataSourceStreamWriter
        return _Written(write_batches(self.sink, iterator if arrow else chunks(iterator)))

    def commit(self, messages: Any, batchId: int) -> None:
        """Every record was acknowledged by its task."""

    def abort(self, messages: Any, batchId: int) -> None:
        """Records already acknowledged stay written (Kafka has no rollback without
        transactions), as with Spark's own sink."""


class KafkaDataSource(DataSource):
    """The ``ferrokafka`` format."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return spark_schema(include, *parse_formats(self.options))

    def reader(self, schema: Any) -> DataSourceReader:
        return _BatchReader(self.options)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _StreamReader(self.options)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.options, schema)

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return _StreamWriter(self.options, schema)


def register(spark: Any) -> None:
    """Make ``format("ferrokafka")`` available in ``spark`` (reads, streams and writes)."""
    spark.dataSource.register(KafkaDataSource)
