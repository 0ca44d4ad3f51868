"""The producer's background task: drain ready batches, send Produce requests, settle futures.

One loop (like the Java client's ``Sender`` thread) takes ready batches from the accumulator,
groups them by partition leader and starts one request task per Produce request. Requests to a
broker are pipelined on its connection, at most ``max_in_flight`` (5, as Java's
``max.in.flight.requests.per.connection``) at a time.

Ordering per partition:

* without idempotence a partition has at most one batch in flight, so a retry can never land
  behind a later batch (aiokafka's guarantee);
* with idempotence a partition may have several batches in flight once the broker has
  acknowledged one of them under the current producer id (until then the broker holds no
  sequence for the partition and would append any batch first, so the first goes out alone);
  the broker then appends them only in sequence order. When one fails with a retriable error,
  the ones behind it come back
  OUT_OF_ORDER_SEQUENCE_NUMBER and are queued again in sequence order; a re-queued batch is
  sent only once nothing of its partition is in flight, so the retries go out in order.
  An out-of-order refusal of the batch right after the last acknowledged one cannot be explained
  that way: that batch fails with ``OutOfOrderSequenceNumber`` and the producer takes a new
  producer id before sending more (sequences restart at 0), as the Java client bumps its epoch.
  A refused batch numbered before the last acknowledged one can never be appended under its
  id: it is numbered again under a new one and re-sent. A refused batch still waiting for the
  ones before it fails, like any retry, once it has outlived ``request_timeout_ms``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config import ProducerConfig
from ..metrics.producer import ProducerMetrics
from ..protocol import Api
from ..structs import TopicPartition
from ..waits import finish_tasks
from .idempotence import ProducerIdState
from .message_accumulator import MessageAccumulator, ProducerBatch
from .transactions import LAST_PRODUCE_VERSION_BEFORE_TV2, TransactionManager

if TYPE_CHECKING:
    from .._native import (
        InitProducerIdRequest,
        PartitionProduceData,
        PartitionProduceResponse,
        ProduceRequest,
        ProduceResponse,
        TopicProduceData,
    )

__all__ = ["Sender"]

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 5

# Produce v13 names topics by id (KIP-516); earlier versions by name.
_FIRST_TOPIC_ID_VERSION = 13

# InitProducerId's transaction timeout for an idempotent producer without a transactional id:
# there is no transaction to time out (the broker ignores it), so the largest int32.
_NO_TRANSACTION_TIMEOUT_MS = 2**31 - 1

_COORDINATOR_RETRIABLE = (
    Errors.for_code(14),  # COORDINATOR_LOAD_IN_PROGRESS
    Errors.for_code(15),  # COORDINATOR_NOT_AVAILABLE
    Errors.for_code(16),  # NOT_COORDINATOR
)


class Sender:
    def __init__(
        self,
        client: AIOKafkaClient,
        accumulator: MessageAccumulator,
        config: ProducerConfig,
        *,
        idempotence: ProducerIdState | None,
        transactions: TransactionManager | None = None,
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        self._client = client
        self._accumulator = accumulator
        self._acks = int(config.acks)
        self._request_timeout_ms = config.request_timeout_ms
        self._retry_backoff = config.retry_backoff_ms / 1000
        self._max_request_size = config.max_request_size
        self._idempotence = idempotence
        self._txn = transactions
        self._transactional_id = None if transactions is None else transactions.transactional_id
        self._max_in_flight = max_in_flight
        self._node_in_flight: dict[int, int] = {}
        self._tp_in_flight: dict[TopicPartition, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._metadata_task: asyncio.Task[None] | None = None
        self._last_metadata_request = 0.0
        self._pid_reset_needed = False
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.metrics = ProducerMetrics(client.metrics, lambda: sum(self._node_in_flight.values()))

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self._idempotence is not None and not self._idempotence.has_pid:
            await self._init_producer_id()
        self._task = asyncio.create_task(self._run(), name="ferrokafka-producer-sender")
        self._task.add_done_callback(self._on_done)

    def _on_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            exc: BaseException = Errors.ProducerClosed("the producer's sender was stopped")
        else:
            exc = task.exception() or Errors.ProducerClosed("the producer's sender ended")
            if task.exception() is not None:
                log.error("producer sender failed: %r", exc)
        self._accumulator.fail_all(exc)

    async def close(self) -> None:
        """Stop the loop and every request task; whatever is unfinished fails."""
        self._closing = True
        tasks = list(self._tasks)
        if self._metadata_task is not None:
            tasks.append(self._metadata_task)
        if self._task is not None:
            tasks.append(self._task)
        await finish_tasks(tasks, "producer sender")

    # -- the loop --------------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        wakeup = self._accumulator.wakeup
        while True:
            if self._pid_reset_needed and not self._tasks:
                await self._init_producer_id()
                self._pid_reset_needed = False
            wakeup.clear()
            wait, unknown_leader = self._send_ready()
            if unknown_leader:
                self._refresh_metadata()
                wait = min(wait, self._retry_backoff) if wait is not None else self._retry_backoff
            timer = loop.call_later(wait, wakeup.set) if wait is not None else None
            try:
                await wakeup.wait()
            finally:
                if timer is not None:
                    timer.cancel()

    def _send_ready(self) -> tuple[float | None, bool]:
        """Start a request for every node with batches ready, again and again until no node
        can take another (its in-flight limit, or nothing sendable is left): a drain makes one
        request per node, and what did not fit in it is ready now, not at the next wake-up.
        Returns the drain's ``(seconds until something else may be ready, leader unknown)``."""
        any_unknown = False
        txn = self._txn
        if txn is not None:
            held = txn.produce_not_before - asyncio.get_running_loop().time()
            if held > 0:
                return held, False
        while True:
            ready, wait, unknown_leader = self._accumulator.drain(
                node_ready=self._node_ready,
                sendable=self._sendable,
                max_request_size=self._max_request_size,
                node_idle=self._node_idle,
            )
            any_unknown = any_unknown or unknown_leader
            if not ready:
                return wait, any_unknown
            for node_id, batches in ready.items():
                self._start_request(node_id, batches)

    def _node_ready(self, node_id: int) -> bool:
        return self._node_in_flight.get(node_id, 0) < self._max_in_flight

    def _node_idle(self, node_id: int) -> bool:
        return not self._node_in_flight.get(node_id, 0)

    def _sendable(self, batch: ProducerBatch) -> bool:
        in_flight = self._tp_in_flight.get(batch.tp, 0)
        if self._idempotence is None:
            return in_flight == 0
        if self._pid_reset_needed:
            return False
        if batch.encoded is not None:
            # A retry goes out alone, after everything of its partition has come back.
            return in_flight == 0
        if not self._idempotence.acknowledged(batch.tp):
            # The broker appends a producer's first batch on a partition whatever its
            # sequence: if the first failed (a new topic's NOT_LEADER) and the next were
            # already in flight, the next would be appended ahead of it and the first could
            # never follow. So the first batch goes out alone.
            return in_flight == 0
        return in_flight < self._max_in_flight

    def _prepare(self, batch: ProducerBatch) -> bytes:
        ids = self._idempotence
        if batch.encoded is not None and (ids is None or batch.producer_id == ids.producer_id):
            return batch.encoded
        if ids is None:
            return batch.encode(-1, -1, -1)
        # New, or a retry from before a producer id reset: (re)number it under the current id.
        # The sequence is reserved once the batch is encoded: a batch that cannot be encoded
        # leaves no gap in its partition's sequence.
        data = batch.encode(ids.producer_id, ids.producer_epoch, ids.peek(batch.tp))
        ids.assign(batch.tp, batch.record_count)
        return data

    def _start_request(self, node_id: int, batches: list[ProducerBatch]) -> None:
        metrics = self.metrics
        now = time.monotonic()
        payload: list[tuple[ProducerBatch, bytes]] = []
        records = 0
        for batch in list(batches):
            first = batch.attempts == 0
            uncompressed = batch.builder.size() if first else 0
            try:
                data = self._prepare(batch)
            except ValueError as exc:
                # The caller's rows cannot be encoded (Arrow buffers changed after send_arrow
                # checked them): that batch fails, naming the row; the others go on.
                batches.remove(batch)
                self._give_up(batch, exc)
                continue
            payload.append((batch, data))
            count = batch.record_count
            records += count
            if first:
                metrics.batch_sent(count, len(data), uncompressed, batch.created, now)
        if not batches:
            return
        metrics.per_request.record(records, now)
        self._node_in_flight[node_id] = self._node_in_flight.get(node_id, 0) + 1
        for batch in batches:
            self._tp_in_flight[batch.tp] = self._tp_in_flight.get(batch.tp, 0) + 1
            batch.attempts += 1
            batch.sent = True
        task = asyncio.create_task(self._produce(node_id, payload))
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._request_done(t, node_id, batches))

    def _request_done(
        self, task: asyncio.Task[None], node_id: int, batches: list[ProducerBatch]
    ) -> None:
        self._tasks.discard(task)
        self._node_in_flight[node_id] -= 1
        for batch in batches:
            left = self._tp_in_flight[batch.tp] - 1
            if left:
                self._tp_in_flight[batch.tp] = left
            else:
                del self._tp_in_flight[batch.tp]
        if task.cancelled():
            # Its batches are neither known sent nor failed: left alone they would never
            # complete, and flush() and stop() would wait for them for ever. Only close()
            # means to cancel a request task; a cancellation that leaked in from something
            # it awaited costs a retry, as a lost connection does (idempotence makes it safe
            # to repeat), or the batch's failure with this typed error once out of time.
            if self._closing:
                for batch in batches:
                    self._give_up(batch, Errors.ProducerClosed("the producer was stopped"))
            else:
                log.warning("produce request to node %s was cancelled; retrying it", node_id)
                for batch in batches:
                    self._failed(
                        batch, Errors.Cancelled(f"produce request to node {node_id} cancelled")
                    )
        elif task.exception() is not None:
            exc = task.exception()
            assert exc is not None
            log.error("produce request to node %s failed unexpectedly: %r", node_id, exc)
            for batch in batches:
                batch.failure(exc)
        self._accumulator.wakeup.set()

    # -- one Produce request ---------------------------------------------------------------

    async def _produce(self, node_id: int, payload: list[tuple[ProducerBatch, bytes]]) -> None:
        batches = {batch.tp: batch for batch, _ in payload}
        try:
            conn = await self._client.ready(node_id)
            version = conn.version_for(Api.PRODUCE.key)
            if self._txn is not None and not self._txn.v2:
                # Version 12 tells the leader to add the partition to the transaction itself
                # (transaction version 2); under version 1 the producer adds it first.
                version = min(version, LAST_PRODUCE_VERSION_BEFORE_TV2)
            body, topic_names = self._request_body(payload, version)
            if version >= _FIRST_TOPIC_ID_VERSION and topic_names is None:
                version = _FIRST_TOPIC_ID_VERSION - 1
                body, topic_names = self._request_body(payload, version)
            if self._acks == 0:
                await conn.send_raw(Api.PRODUCE.key, version, body, expect_response=False)
                for batch in batches.values():
                    batch.done_noack()
                return
            # The broker may hold the request up to timeout_ms waiting for replicas, so the
            # connection waits longer than that (aiokafka documents up to twice as long).
            response = await conn.send(
                Api.PRODUCE, body, version=version, timeout_ms=2 * self._request_timeout_ms
            )
            self.metrics.throttle.record(response.get("throttle_time_ms", 0))
        except Errors.KafkaError as exc:
            log.warning("produce request to node %s failed: %s", node_id, exc)
            if exc.invalid_metadata:
                self._refresh_metadata(force=True)
            for batch in batches.values():
                self._failed(batch, exc)
            return
        self._handle_response(response, batches, topic_names)

    def _request_body(
        self, payload: list[tuple[ProducerBatch, bytes]], version: int
    ) -> tuple[ProduceRequest, dict[bytes, str] | None]:
        by_topic: dict[str, list[PartitionProduceData]] = {}
        for batch, data in payload:
            by_topic.setdefault(batch.tp.topic, []).append(
                {"index": batch.tp.partition, "records": data}
            )
        topic_data: list[TopicProduceData] = []
        names: dict[bytes, str] | None = {}
        for topic, partitions in by_topic.items():
            entry: TopicProduceData = {"partition_data": partitions}
            if version >= _FIRST_TOPIC_ID_VERSION:
                info = self._client.cluster.topic_info(topic)
                if info is None or info.topic_id is None:
                    names = None
                    break
                entry["topic_id"] = info.topic_id.bytes
                names[info.topic_id.bytes] = topic  # type: ignore[index]
            else:
                entry["name"] = topic
            topic_data.append(entry)
        body: ProduceRequest = {
            "transactional_id": self._transactional_id,
            "acks": self._acks,
            "timeout_ms": self._request_timeout_ms,
            "topic_data": topic_data,
        }
        return body, names

    def _handle_response(
        self,
        response: ProduceResponse,
        batches: dict[TopicPartition, ProducerBatch],
        topic_names: dict[bytes, str] | None,
    ) -> None:
        for topic_response in response["responses"]:
            if topic_names:
                topic = topic_names.get(bytes(topic_response.get("topic_id") or b""), "")
            else:
                topic = topic_response["name"]
            for part in topic_response["partition_responses"]:
                batch = batches.pop(TopicPartition(topic, part["index"]), None)
                if batch is None:
                    continue
                self._settle(batch, part)
        for batch in batches.values():
            self._failed(
                batch,
                Errors.KafkaProtocolError(
                    f"{batch.tp.topic}[{batch.tp.partition}]: the produce response did not "
                    "mention this partition"
                ),
            )

    def _settle(self, batch: ProducerBatch, part: PartitionProduceResponse) -> None:
        tp = batch.tp
        code = part["error_code"]
        ids = self._idempotence
        if code in (0, Errors.DuplicateSequenceNumber.errno):
            # A duplicate is a batch the broker already has (a retry of a lost response).
            if ids is not None and batch.producer_id == ids.producer_id:
                ids.acked(tp, batch.base_sequence, batch.record_count)
            log_start = part.get("log_start_offset", -1)
            batch.done(
                part["base_offset"],
                part.get("log_append_time_ms", -1),
                None if log_start is None or log_start < 0 else log_start,
            )
            return
        cls = Errors.for_code(code)
        detail = part.get("error_message") or cls.description or cls.message
        record_errors = part.get("record_errors") or []
        if record_errors:
            detail += "; " + "; ".join(
                f"record {e['batch_index']}: {e.get('batch_index_error_message')}"
                for e in record_errors
            )
        exc = cls(f"{tp.topic}[{tp.partition}]: {detail}")
        if cls is Errors.OutOfOrderSequenceNumber and ids is not None:
            if batch.producer_id == ids.producer_id and ids.is_next_expected(
                tp, batch.base_sequence
            ):
                # Nothing ahead of it is pending: the broker lost our sequence state.
                log.error("%s (sequence %s): taking a new producer id", exc, batch.base_sequence)
                self._sequence_lost(exc)
                self._give_up(batch, exc)
                return
            if batch.producer_id == ids.producer_id and ids.behind_acked(tp, batch.base_sequence):
                # Batches numbered after it are in the log: under this id it can never be
                # appended. Take a new id; the batch is numbered again under it and re-sent.
                log.error("%s (sequence %s): taking a new producer id", exc, batch.base_sequence)
                self._sequence_lost(exc)
                self._retry(batch, exc)
                return
            if self._expired(batch):
                self._sequence_lost(exc)
                self._give_up(batch, exc)
                return
            self._retry(batch, exc)  # refused: an earlier batch is being retried
            return
        if cls is Errors.UnknownProducerId and ids is not None:
            self._sequence_lost(exc)
        if cls is Errors.InvalidProducerEpoch or cls is Errors.ProducerFencedError:
            self._give_up(batch, Errors.ProducerFenced(f"{tp.topic}[{tp.partition}]: {detail}"))
            return
        if exc.invalid_metadata:
            self._refresh_metadata(force=True)
        # CONCURRENT_TRANSACTIONS: under transaction version 2 the leader adds the partition to
        # the transaction, and the previous transaction may still be ending. aiokafka's class
        # is not retriable; the Java client retries it, as here.
        self._failed(batch, exc, retriable=exc.retriable or cls is Errors.ConcurrentTransactions)

    def _failed(
        self, batch: ProducerBatch, exc: Errors.KafkaError, *, retriable: bool | None = None
    ) -> None:
        """Retry ``batch`` if ``exc`` allows (or ``retriable`` says) and time is left, else
        fail its futures."""
        if (exc.retriable if retriable is None else retriable) and not self._expired(batch):
            self._retry(batch, exc)
            return
        if self._idempotence is not None and batch.sent:
            # Retriable: the broker may or may not have the batch. Not: it does not, and the
            # batches after it carry sequences with a gap. Either way the sequence is lost.
            self._sequence_lost(exc)
        self._give_up(batch, exc)

    def _expired(self, batch: ProducerBatch) -> bool:
        """Whether ``batch`` has outlived its time to be delivered (``request_timeout_ms``)."""
        return time.monotonic() - batch.created > self._accumulator.batch_ttl

    def _sequence_lost(self, exc: BaseException) -> None:
        """Take a new producer id before sending more; a transactional producer takes a new
        epoch when its transaction is aborted (its id is the transaction's)."""
        if self._txn is not None:
            self._txn.sequence_lost(exc)
        else:
            self._pid_reset_needed = True

    def _give_up(self, batch: ProducerBatch, exc: BaseException) -> None:
        """Fail ``batch``'s records for good."""
        self.metrics.failed(batch.record_count)
        batch.failure(exc)

    def _retry(self, batch: ProducerBatch, reason: BaseException) -> None:
        log.info("retrying %r after %s", batch, reason)
        self.metrics.retried(batch.record_count)
        batch.retry_at = time.monotonic() + self._retry_backoff
        self._accumulator.reenqueue(batch)

    # -- metadata and producer id ------------------------------------------------------------

    def _refresh_metadata(self, *, force: bool = False) -> None:
        """Start one background metadata refresh (at most one per retry backoff)."""
        if self._metadata_task is not None and not self._metadata_task.done():
            return
        now = time.monotonic()
        if not force and now - self._last_metadata_request < self._retry_backoff:
            return
        self._last_metadata_request = now
        self._metadata_task = asyncio.create_task(self._metadata_refresh())

    async def _metadata_refresh(self) -> None:
        try:
            await self._client.refresh_metadata()
        except Errors.KafkaError as exc:
            log.warning("metadata refresh for the producer failed: %s", exc)
        finally:
            self._accumulator.wakeup.set()

    async def _init_producer_id(self) -> None:
        """InitProducerId (no transactional id) from any broker, retrying retriable errors
        for up to ``request_timeout_ms``."""
        ids = self._idempotence
        assert ids is not None
        deadline = time.monotonic() + self._request_timeout_ms / 1000
        body: InitProducerIdRequest = {
            "transactional_id": None,
            "transaction_timeout_ms": _NO_TRANSACTION_TIMEOUT_MS,
            "producer_id": -1,
            "producer_epoch": -1,
        }
        while True:
            try:
                reply = await self._client.send_to_any(Api.INIT_PRODUCER_ID, body)
                code = reply["error_code"]
                if code:
                    raise Errors.for_code(code)("InitProducerId failed")
            except Errors.KafkaError as exc:
                retriable = exc.retriable or isinstance(exc, _COORDINATOR_RETRIABLE)
                if not retriable or time.monotonic() >= deadline:
                    raise
                log.warning("InitProducerId failed, retrying: %s", exc)
                await asyncio.sleep(self._retry_backoff)
                continue
            ids.set_pid(reply["producer_id"], reply["producer_epoch"])
            log.info("producer id %s epoch %s", ids.producer_id, ids.producer_epoch)
            return
