"""``AIOKafkaProducer``: aiokafka 0.14's producer API over ferrokafka's client and native batches.

``send`` serializes, picks a partition and appends to the accumulator; the sender task
(``sender.py``) turns ready batches into Produce requests, keeping per-partition order and, with
idempotence (KIP-98), sequence numbers that let the broker drop retried duplicates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import operator
import ssl
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import _native, formats
from .. import errors as Errors
from .._native import RecordFuture
from .._rng import rng
from ..client import AIOKafkaClient
from ..cluster import TopicInfo
from ..config import ProducerConfig
from ..config.checks import commit_offsets, epoch_ms
from ..config.connection import LOOP_DEPRECATED, keyword_options
from ..config.producer import DEFAULT_ACKS, DEFAULT_PARTITIONER, Partitioner, Serializer
from ..metrics import MetricName
from ..own_methods import install_send
from ..partitioner import DefaultPartitioner, StickyPartitions
from ..retry import polling
from ..structs import OffsetAndMetadata, RecordMetadata, TopicPartition
from . import arrow
from .batch import (
    BATCH_OVERHEAD,
    BatchBuilder,
    as_bytes,
    check_headers,
    estimate_record_size,
    now_ms,
)
from .idempotence import ProducerIdState
from .message_accumulator import MessageAccumulator
from .sender import Sender
from .transactions import TransactionManager, TransactionState

__all__ = ["AIOKafkaProducer", "TransactionContext"]

log = logging.getLogger(__name__)


_NO_OPS = {
    "loop": LOOP_DEPRECATED,
    "api_version": "The `api_version` parameter has been deprecated since aiokafka 0.13.0 and "
    "is a no-op: versions are negotiated per connection.",
}


class AIOKafkaProducer:
    """A Kafka producer with aiokafka 0.14's parameters, defaults and behaviour.

    ``ferrokafka.config.ProducerConfig`` documents each keyword argument (meaning, unit,
    default, the Java client's name) and checks them: a wrong value raises ``ValueError``
    naming the option.

    ``acks`` defaults to 1 (``"all"`` with ``enable_idempotence``); ``send`` returns a future
    resolved with the record's ``RecordMetadata`` (None with ``acks=0``). Unkeyed records with
    the default partitioner stick to one partition until its batch is complete (KIP-480);
    keyed records go where the Java client puts them.

    With ``transactional_id``, records are sent in transactions (``begin_transaction``,
    ``commit_transaction``, ``abort_transaction``, ``transaction()``,
    ``send_offsets_to_transaction``), as in aiokafka; ``send`` outside one raises
    ``IllegalOperation``.
    ``api_version`` and ``loop`` are deprecated no-ops, as in aiokafka 0.14.
    """

    _PRODUCER_CLIENT_ID_SEQUENCE = 0

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | list[str] = "localhost",
        client_id: str | None = None,
        metadata_max_age_ms: int = 300000,
        request_timeout_ms: int = 40000,
        api_version: str | None = None,
        acks: int | str = DEFAULT_ACKS,
        key_serializer: Serializer | None = None,
        value_serializer: Serializer | None = None,
        compression_type: str | None = None,
        max_batch_size: int = 16384,
        partitioner: Partitioner = DEFAULT_PARTITIONER,
        max_request_size: int = 1048576,
        linger_ms: int = 0,
        retry_backoff_ms: int = 100,
        security_protocol: str = "PLAINTEXT",
        ssl_context: ssl.SSLContext | None = None,
        connections_max_idle_ms: int | None = 540000,
        enable_idempotence: bool = False,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 60000,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_password: str | None = None,
        sasl_plain_username: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
    ) -> None:
        options = keyword_options(locals(), _NO_OPS)
        sequence = AIOKafkaProducer._PRODUCER_CLIENT_ID_SEQUENCE + 1
        if client_id is None:
            options["client_id"] = f"ferrokafka-producer-{sequence}"
        config = self._config = ProducerConfig(**options)
        AIOKafkaProducer._PRODUCER_CLIENT_ID_SEQUENCE = sequence

        # The options each send reads, as attributes.
        self._acks = int(config.acks)
        self._key_serializer = config.key_serializer
        self._value_serializer = config.value_serializer
        self._partitioner = config.partitioner
        self._max_request_size = config.max_request_size
        self._request_timeout_ms = config.request_timeout_ms
        self._retry_backoff = config.retry_backoff_ms / 1000
        self._partition_lists: dict[str, tuple[TopicInfo | None, list[int], list[int]]] = {}
        self._tps: dict[str, dict[int, TopicPartition]] = {}

        self.client = AIOKafkaClient(config, metric_group_prefix="producer")
        self._metadata = self.client.cluster
        self._idempotence = ProducerIdState() if config.enable_idempotence else None
        self._txn: TransactionManager | None = None
        if config.transactional_id is not None:
            assert self._idempotence is not None
            self._txn = TransactionManager(self.client, config, self._idempotence)
        self._message_accumulator = MessageAccumulator(
            self._metadata, config, on_failure=None if self._txn is None else self._txn.failed
        )
        open_batches = self._message_accumulator.open
        accumulator = self._message_accumulator
        self._sticky = (
            StickyPartitions(
                open_batches,
                produced=lambda topic, p: accumulator.produced_bytes(TopicPartition(topic, p)),
                busy=lambda topic, p: accumulator.busy(TopicPartition(topic, p)),
                batch_size=config.max_batch_size,
            )
            if isinstance(config.partitioner, DefaultPartitioner)
            else None
        )
        # send()'s shortcuts (None: every record takes the full path): only where the bytes
        # and partition are the default partitioner's, and appending needs no transaction
        # bookkeeping.
        shortcuts = (
            self._sticky is not None
            and self._value_serializer is None
            and self._key_serializer is None
            and self._txn is None
        )
        self._sticky_send = open_batches.send if shortcuts else None
        self._keyed_send = open_batches.send_keyed if shortcuts else None
        if shortcuts:
            install_send(self, open_batches, _SEND)
        self._sender = Sender(
            self.client,
            self._message_accumulator,
            config,
            idempotence=self._idempotence,
            transactions=self._txn,
        )
        self._started = False
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster and, with idempotence or a ``transactional_id``, get a producer
        id (the latter from the transaction coordinator, which fences older producers with the
        same transactional id)."""
        if self._closed:
            raise Errors.ProducerClosed("the producer was stopped")
        if self._started:
            return
        log.debug("starting the Kafka producer")
        try:
            await self.client.bootstrap()
            if self._txn is not None:
                await self._txn.init()
            await self._sender.start()
        except BaseException:
            await self.client.close()
            raise
        self._started = True

    async def flush(self) -> None:
        """Send everything buffered now and wait until every batch is delivered or failed."""
        await self._message_accumulator.flush()

    async def stop(self) -> None:
        """Flush, then close every connection. Idempotent. An open transaction is aborted
        (as the Java client does), so that ``read_committed`` consumers need not wait for the
        broker to time it out."""
        if self._closed:
            return
        self._closed = True
        self._message_accumulator.open.close()  # send() now takes its full path, and fails
        task = self._sender.task
        txn = self._txn
        if txn is not None and task is not None and not task.done() and txn.can_abort:
            try:
                await txn.end(False, self._message_accumulator.flush)
                log.info("stop(): aborted the open transaction of %r", txn.transactional_id)
            except Exception as exc:
                log.warning("stop(): aborting the open transaction failed: %s", exc)
        if task is not None and not task.done():
            closing = asyncio.ensure_future(self._message_accumulator.close())
            await asyncio.wait([closing, task], return_when=asyncio.FIRST_COMPLETED)
            if not closing.done():
                closing.cancel()
            await asyncio.gather(closing, return_exceptions=True)
        await self._sender.close()
        await self.client.close()
        log.debug("the Kafka producer has stopped")

    def __del__(self, _warn: Callable[..., None] = warnings.warn) -> None:
        # As aiokafka's: a producer started and never stopped keeps sockets and tasks alive.
        # (One never started holds neither, and is not warned about.)
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            _warn(f"Unclosed AIOKafkaProducer {self!r}", ResourceWarning, source=self)

    async def __aenter__(self) -> AIOKafkaProducer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- metadata --------------------------------------------------------------------------

    def metrics(self) -> dict[MetricName, float]:
        """This producer's metrics, named as the Java producer's (``producer-metrics``,
        ``producer-node-metrics``): a snapshot, computed now. ``flatten()`` from
        ``ferrokafka.metrics`` gives string keys."""
        return self.client.metrics.read()

    async def partitions_for(self, topic: str) -> set[int]:
        """The topic's partition ids, waiting for metadata if needed."""
        return await self._wait_on_metadata(topic)

    async def _wait_on_metadata(self, topic: str) -> set[int]:
        """The topic's partitions, refreshing metadata until they are known; after
        ``request_timeout_ms`` raise ``UnknownTopicOrPartitionError`` naming the topic. A name
        the broker calls invalid, or a topic it does not authorize, raises at once."""
        partitions = self._metadata.partitions_for_topic(topic)
        if partitions is not None:
            return partitions
        self.client.add_topic(topic)
        found: set[int] | None = None
        code = 0

        async def known() -> bool:
            nonlocal found, code
            await self.client.refresh_metadata()
            found = self._metadata.partitions_for_topic(topic)
            if found is not None:
                return True
            code = self._metadata.topic_error(topic)
            if code == Errors.TopicAuthorizationFailedError.errno:
                raise Errors.TopicAuthorizationFailedError(topic)
            if code == Errors.InvalidTopicError.errno:
                raise Errors.InvalidTopicError(f"{topic!r} is not a valid topic name")
            return False

        await polling(
            known,
            timeout=self._request_timeout_ms / 1000,
            interval=self._retry_backoff,
            timed_out=lambda: Errors.UnknownTopicOrPartitionError(
                f"topic {topic!r} is not in the cluster metadata after "
                f"{self._request_timeout_ms} ms"
                + (f" (error {Errors.for_code(code).message})" if code else "")
            ),
        )
        assert found is not None
        return found

    # -- sending ---------------------------------------------------------------------------

    def _check_ready(self) -> None:
        if self._closed or self._message_accumulator.closed:
            raise Errors.ProducerClosed("the producer was stopped")
        if not self._started:
            raise Errors.IllegalStateError("the producer is not started: await start() first")

    def _serialize(
        self,
        key: Any,
        value: Any,
        headers: list[tuple[str, bytes | None]],
        value_serialized: bool = False,
    ) -> tuple[bytes | None, bytes | None, int]:
        """The key and value as bytes, and the record's ``estimate_record_size``; raises
        ``MessageSizeTooLargeError`` for a record that cannot fit ``max_request_size``."""
        if self._key_serializer is not None:
            key = self._key_serializer(key)
        if self._value_serializer is not None and not value_serialized:
            value = self._value_serializer(value)
        key_bytes = as_bytes("key", key)
        value_bytes = as_bytes("value", value)
        size = estimate_record_size(key_bytes, value_bytes, headers)
        if BATCH_OVERHEAD + size > self._max_request_size:
            raise Errors.MessageSizeTooLargeError(
                f"The message is {BATCH_OVERHEAD + size} bytes when serialized which is larger "
                f"than the maximum request size you have configured with the max_request_size "
                f"configuration ({self._max_request_size})"
            )
        return key_bytes, value_bytes, size

    def _partitions(self, topic: str) -> tuple[list[int], list[int]]:
        """All and available partitions of ``topic``, sorted; recomputed only when a metadata
        update replaced the topic's entry."""
        info = self._metadata.topic_info(topic)
        cached = self._partition_lists.get(topic)
        if cached is not None and cached[0] is info:
            return cached[1], cached[2]
        all_partitions = sorted(self._metadata.partitions_for_topic(topic) or ())
        available = sorted(self._metadata.available_partitions_for_topic(topic) or ())
        self._partition_lists[topic] = (info, all_partitions, available)
        return all_partitions, available

    def _partition(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        key_bytes: bytes | None,
        value_bytes: bytes | None,
    ) -> int:
        if partition is not None:
            info = self._metadata.topic_info(topic)
            known = info.partitions if info is not None else {}
            if (
                isinstance(partition, bool)
                or not isinstance(partition, int)
                or partition not in known
            ):
                raise ValueError(
                    f"partition {partition!r} is not a partition of topic {topic!r} "
                    f"(known: {sorted(known)})"
                )
            return partition
        all_partitions, available = self._partitions(topic)
        if key_bytes is None and self._sticky is not None:
            return self._sticky.current(topic, all_partitions, available)
        answer = self._partitioner(key_bytes, all_partitions, available)
        # A topic's partitions are 0 .. n-1; a custom partitioner may answer anything.
        try:
            chosen = operator.index(answer)
        except TypeError:
            chosen = -1
        if not 0 <= chosen < len(all_partitions):
            raise ValueError(
                f"the partitioner chose {answer!r} for topic {topic!r}, whose partitions are "
                f"{all_partitions}"
            )
        return chosen

    # A producer's own ``send`` attribute (see own_methods.py) answers ``send(topic, value,
    # key=key)`` without this coroutine while this method is the class's (and the shortcuts
    # apply): its records join the open batch natively, and only the rest run this one.
    async def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> RecordFuture:
        """Queue a record; return a future resolved with its ``RecordMetadata`` once the broker
        has it (None with ``acks=0``), or failed with a typed error naming topic and partition.

        Raises ``MessageSizeTooLargeError`` for a record larger than ``max_request_size``,
        ``UnknownTopicOrPartitionError`` when the topic's metadata does not appear within
        ``request_timeout_ms``, and ``KafkaTimeoutError`` when the partition's buffer stays
        full that long.
        """
        if partition is None and timestamp_ms is None and not headers:
            # The common cases, in one call (None: take the full path): an unkeyed bytes value
            # joining the open batch of the topic's sticky partition, or a bytes key and value
            # joining the open batch of the key's partition.
            if key is None:
                sticky = self._sticky_send
                if sticky is not None:
                    future = sticky(topic, value)
                    if future is not None:
                        return future
            else:
                keyed = self._keyed_send
                if keyed is not None:
                    future = keyed(topic, key, value)
                    if future is not None:
                        return future
        if value is None and key is None:
            raise ValueError("send: need at least one of key or value")
        return await self._send_record(topic, value, key, partition, timestamp_ms, headers, False)

    async def send_record(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> RecordFuture:
        """``send`` without aiokafka's refusal of a record whose key and value are both None
        (Kafka and the Java client accept one; Spark's Kafka sink writes one)."""
        return await self._send_record(topic, value, key, partition, timestamp_ms, headers, False)

    async def _send_record(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Iterable[tuple[str, bytes | None]] | None,
        value_serialized: bool,
    ) -> RecordFuture:
        """The whole of ``send`` (``value_serialized``: the value serializer was applied)."""
        if timestamp_ms is not None:
            timestamp_ms = epoch_ms("timestamp_ms", timestamp_ms)
        self._check_ready()
        txn = self._txn
        if txn is not None:
            txn.send_started()  # raises outside a transaction
        accumulator = self._message_accumulator
        try:
            if self._metadata.topic_info(topic) is None:
                await self._wait_on_metadata(topic)
            checked = check_headers(headers) if headers else []
            key_bytes, value_bytes, _ = self._serialize(key, value, checked, value_serialized)
            chosen = self._partition(topic, partition, key, value, key_bytes, value_bytes)
            tp = self._topic_partition(topic, chosen)
            if partition is None and self._sticky_send is not None:
                self._partitioned(topic)
            if txn is not None and tp not in txn.partitions:
                await txn.add_partition(tp)
            sticky = self._sticky is not None and partition is None and key_bytes is None
            # Most records fit the partition's open batch: no coroutine, no wait.
            future = accumulator.append_now(tp, key_bytes, value_bytes, timestamp_ms, checked)
            if future is not None:
                return future
            timeout = self._request_timeout_ms / 1000
            if not sticky:
                return await accumulator.add_message(
                    tp, key_bytes, value_bytes, timeout, timestamp_ms, checked
                )
            # The sticky partition's batch is complete (full or sent): this record starts a
            # batch, on another partition if this one is busy or had a batch's worth
            # (KIP-794). add_message raises if the producer failed or closed.
            accumulator.check_open()
            accumulator.wakeup.set()
            assert self._sticky is not None
            all_partitions, available = self._partitions(topic)
            tp = self._topic_partition(
                topic, self._sticky.switch(topic, chosen, all_partitions, available)
            )
            if txn is not None and tp not in txn.partitions:
                await txn.add_partition(tp)
            return await accumulator.add_message(
                tp, key_bytes, value_bytes, timeout, timestamp_ms, checked
            )
        finally:
            if txn is not None:
                txn.send_finished()

    def _partitioned(self, topic: str) -> None:
        """The default partitioner chose a partition of ``topic`` under the current metadata:
        send()'s keyed shortcut may map keys over its partition count (when the partitions
        are 0..n-1, where a key's index among them is its partition)."""
        all_partitions = self._partitions(topic)[0]
        if all_partitions and all_partitions[-1] == len(all_partitions) - 1:
            self._message_accumulator.open.partition_count(topic, len(all_partitions))

    def _topic_partition(self, topic: str, partition: int) -> TopicPartition:
        """One ``TopicPartition`` per partition, made once."""
        tps = self._tps.get(topic)
        if tps is None:
            tps = self._tps[topic] = {}
        tp = tps.get(partition)
        if tp is None:
            tp = tps[partition] = TopicPartition(topic, partition)
        return tp

    async def send_and_wait(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> RecordMetadata:
        """``send`` and wait for the record's metadata."""
        future = await self.send(topic, value, key, partition, timestamp_ms, headers)
        return await future

    def create_batch(self) -> BatchBuilder:
        """An empty ``BatchBuilder`` (with the producer's serializers) for ``send_batch``."""
        return self._message_accumulator.create_builder(
            key_serializer=self._key_serializer, value_serializer=self._value_serializer
        )

    async def send_batch(
        self, batch: BatchBuilder, topic: str, *, partition: int
    ) -> asyncio.Future[RecordMetadata]:
        """Queue a filled ``BatchBuilder`` for ``topic``/``partition``; the future resolves
        with the metadata of the batch's first record."""
        self._check_ready()
        txn = self._txn
        with contextlib.nullcontext() if txn is None else txn.sending():
            await self._wait_on_metadata(topic)
            chosen = self._partition(topic, partition, None, None, None, None)
            if batch.size() > self._max_request_size:
                raise Errors.MessageSizeTooLargeError(
                    f"the batch is {batch.size()} bytes, larger than max_request_size "
                    f"({self._max_request_size})"
                )
            tp = self._topic_partition(topic, chosen)
            if txn is not None:
                await txn.add_partition(tp)
            future = await self._message_accumulator.add_batch(
                batch, tp, self._request_timeout_ms / 1000
            )
        return future  # type: ignore[return-value]

    async def send_arrow(
        self,
        topic: str,
        data: Any,
        *,
        batch_size: int | None = None,
        key_format: formats.PayloadFormat | None = None,
        value_format: formats.PayloadFormat | None = None,
    ) -> asyncio.Future[list[arrow.ArrowBatchResult]]:
        """Queue every row of Arrow data (a pyarrow ``RecordBatch``, ``Table`` or
        ``RecordBatchReader``, or any object with ``__arrow_c_array__`` or
        ``__arrow_c_stream__``) as a record; return a
        future resolved with one ``ArrowBatchResult`` per batch sent (partition, base offset,
        record count) once the broker has them all.

        Columns, in Spark's Kafka-sink names: ``value`` (binary or string, required), ``key``
        (binary or string), ``headers`` (list<struct<key: string, value: binary>>),
        ``partition`` (int32 or int64) and ``timestamp`` (timestamp, or int64 epoch ms); nulls
        mean no key, no value, no headers, the partitioner's choice, the time of the call. A row
        without partition goes where ``send()`` would put it with the default partitioner
        (murmur2 of its key; unkeyed rows fill one partition's batch after another). Records are
        encoded in Rust from the Arrow buffers; serializers and a custom partitioner are not
        applied.

        ``batch_size`` caps each batch's bytes for this call (at most ``max_request_size``).
        By default it is librdkafka's batch size, 1,000,000 bytes (or ``max_batch_size`` if
        larger, ``max_request_size`` if smaller): the rows are in memory already, and a Kafka
        request carries one batch per partition, so bulk data goes faster in large batches. A
        topic whose ``max.message.bytes`` is lower needs a ``batch_size`` below it.

        Every row is checked before anything is queued: an unknown column or a column of the
        wrong type raises ``TypeError``, a bad row (a partition out of range, a null header
        key) ``ValueError``, a row larger than ``max_request_size``
        ``MessageSizeTooLargeError``; each names the column or row (counted from 0 across a
        Table's batches), and then nothing is sent. A null record (a null row of a struct
        array) raises ``ValueError`` too. The rows are read when their batch is encoded, after
        this returns: the data must not change until the future resolves (a batch whose
        buffers changed fails with ``ValueError`` naming the row).

        ``value_format`` (``key_format``): the ``value`` (``key``) column is a struct, written
        by the format, e.g. ``ferrokafka.formats.JsonFormat`` (as Spark's ``to_json`` writes
        it), in Rust, before the rows are checked. Needs pyarrow.
        """
        self._check_ready()
        data = arrow.arrow_input(data)
        if key_format is not None or value_format is not None:
            data = formats.encoded_batches(data, key_format, value_format)
        created_ms = now_ms()
        if batch_size is None:
            batch_size = max(
                self._config.max_batch_size, min(arrow.BATCH_SIZE, self._max_request_size)
            )
        elif (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, int)
            or not 0 < batch_size <= self._max_request_size
        ):
            raise ValueError(
                f"send_arrow: batch_size must be an int in 1..max_request_size "
                f"({self._max_request_size}), got {batch_size!r}"
            )
        txn = self._txn
        if txn is not None:
            txn.send_started()  # raises outside a transaction
        accumulator = self._message_accumulator
        try:
            if self._metadata.topic_info(topic) is None:
                await self._wait_on_metadata(topic)
            all_partitions, available = self._partitions(topic)
            chunks = _native.plan_arrow_records(
                [data],
                num_partitions=len(all_partitions),
                sticky=rng.choice(available or all_partitions),
                batch_size=batch_size,
                max_request_size=self._max_request_size,
            )
            queued = []
            for chunk in chunks:
                tp = self._topic_partition(topic, chunk.partition)
                if txn is not None and tp not in txn.partitions:
                    await txn.add_partition(tp)
                builder = arrow.ArrowBatch(
                    chunk,
                    self._config.compression_type,
                    transactional=txn is not None,
                    created_ms=created_ms,
                )
                queued.append((tp, builder))
            futures = accumulator.add_batches(queued)
        finally:
            if txn is not None:
                txn.send_finished()
        return asyncio.ensure_future(arrow.results(topic, chunks, futures))

    # -- transactions ----------------------------------------------------------------------

    def _transactions(self) -> TransactionManager:
        if self._txn is None:
            raise Errors.IllegalOperation(
                "You need to configure transaction_id to use transactions"
            )
        self._check_ready()
        return self._txn

    async def begin_transaction(self) -> None:
        """Open a transaction: ``send`` may be called until it is committed or aborted."""
        self._transactions().begin()

    async def commit_transaction(self) -> None:
        """Send every record of the transaction, then commit it. If a record (or an offset
        commit) of the transaction failed, that error is raised and the transaction must be
        aborted."""
        await self._transactions().end(True, self._message_accumulator.flush)

    async def abort_transaction(self) -> None:
        """Abort the open transaction: ``read_committed`` consumers never see its records."""
        await self._transactions().end(False, self._message_accumulator.flush)

    def transaction(self) -> TransactionContext:
        """``async with producer.transaction():`` begins a transaction, commits it when the
        block ends, and aborts it when the block raises."""
        return TransactionContext(self)

    async def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, int | tuple[int, str] | OffsetAndMetadata],
        group_id: str,
    ) -> None:
        """Commit ``offsets`` (the next offsets to read) of consumer group ``group_id`` with
        the transaction: they count only if it commits (consume-transform-produce)."""
        txn = self._transactions()
        if txn.state is not TransactionState.IN_TRANSACTION:
            raise Errors.IllegalOperation("Not in the middle of a transaction")
        if not group_id or not isinstance(group_id, str):
            raise ValueError(f"group_id must be a non-empty str, got {group_id!r}")
        await txn.send_offsets(commit_offsets("send_offsets_to_transaction", offsets), group_id)


class TransactionContext:
    """What ``AIOKafkaProducer.transaction()`` returns."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self._producer = producer

    async def __aenter__(self) -> TransactionContext:
        await self._producer.begin_transaction()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            await self._producer.commit_transaction()
            return
        txn = self._producer._txn
        if txn is not None and txn.is_fatal:
            return  # the block's exception goes on; aborting cannot work
        await self._producer.abort_transaction()


_SEND = AIOKafkaProducer.send
"""The class's own ``send``, as defined here: what a producer's own ``send`` stands in for while
the class's attribute is this function (not, for one made after the class was patched or
instrumented, the wrapper found on the class then)."""
