"""``AIOKafkaShareConsumer``: a member of a share group (KIP-932), in the style of
``AIOKafkaConsumer`` and of the Java client's ``KafkaShareConsumer``.

Members of a share group take records from the same partitions cooperatively: each record is
acquired by one member under a time-limited lock, answered for one by one (ACCEPT, RELEASE,
REJECT, RENEW), and delivered again, its delivery count one higher, when it is released or its
lock runs out. There are no offsets to commit and no rebalances to wait through.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, Generic

from .. import _native, formats, memory
from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config import ShareConsumerConfig
from ..config.checks import max_records_value
from ..config.connection import LOOP_DEPRECATED, keyword_options
from ..consumer.consumer import KT, VT
from ..structs import ConsumerRecord, TopicPartition
from ..waits import Signal, wait_any
from .acknowledgements import AcknowledgeType
from .fetcher import AckResults, ShareFetcher, answered_offsets
from .member import ShareMember
from .payload_formats import hand_out_formatted

__all__ = ["AIOKafkaShareConsumer", "AcknowledgementCommitFailedError"]

_VERSION = _native.__version__


class AcknowledgementCommitFailedError(Errors.KafkaError):
    """``commit()``: the broker refused the acknowledgements of some partitions. ``errors``
    maps each such partition to its typed error (``InvalidRecordStateError`` when a record's
    lock had run out and it went to another member)."""

    def __init__(self, errors: dict[TopicPartition, Errors.KafkaError]) -> None:
        self.errors = errors
        parts = "; ".join(f"{tp.topic}-{tp.partition}: {err}" for tp, err in sorted(errors.items()))
        super().__init__(f"acknowledgements refused for {len(errors)} partition(s): {parts}")


class AIOKafkaShareConsumer(Generic[KT, VT]):
    """A member of the share group ``group_id``.

    The keyword arguments are documented on ``ferrokafka.config.ShareConsumerConfig`` (with
    their Java names); a wrong value raises ``ValueError`` naming the option. Records carry
    ``delivery_count``. With ``share_acknowledgement_mode="implicit"`` (the default) every
    record a poll returned is accepted by the next poll, ``commit()`` or ``stop()``; with
    ``"explicit"`` the application calls ``acknowledge()`` for each.
    """

    def __init__(
        self,
        *topics: str,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | list[str] = "localhost",
        client_id: str = "ferrokafka-" + _VERSION,
        group_id: str = "",
        key_deserializer: Callable[[bytes | None], KT] | None = None,
        value_deserializer: Callable[[bytes | None], VT] | None = None,
        share_acknowledgement_mode: str = "implicit",
        share_acquire_mode: str = "batch_optimized",
        max_poll_records: int = 500,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        check_crcs: bool = True,
        acknowledgement_commit_callback: Callable[..., Any] | None = None,
        request_timeout_ms: int = 40 * 1000,
        retry_backoff_ms: int = 100,
        metadata_max_age_ms: int = 5 * 60 * 1000,
        connections_max_idle_ms: int = 540000,
        security_protocol: str = "PLAINTEXT",
        ssl_context: Any = None,
        api_version: str | None = None,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
        client_rack: str | None = None,
    ) -> None:
        options = keyword_options(locals(), {"loop": LOOP_DEPRECATED})
        config = self._config = ShareConsumerConfig(**options)
        self._client = AIOKafkaClient(config, metric_group_prefix="share-consumer")
        self._member = ShareMember(
            self._client,
            config.group_id,
            rack=config.client_rack,
            retry_backoff_ms=config.retry_backoff_ms,
            request_timeout_ms=config.request_timeout_ms,
        )
        self._fetcher = ShareFetcher(self._client, self._member, config)
        self._explicit_mode = config.explicit
        self._started = False
        self._closed = False
        self._stopped = Signal()
        self._subscription: frozenset[str] = frozenset()
        if topics:
            self.subscribe(list(topics))

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, and join the share group if subscribed (returns once the coordinator has
        answered the join). If it raises, the consumer is stopped."""
        if self._started:
            raise Errors.IllegalStateError("start() was already called")
        if self._closed:
            raise Errors.IllegalStateError("the share consumer is stopped")
        self._started = True
        memory.apply_environment()
        try:
            await self._client.bootstrap()
            self._member.start()
            self._fetcher.start()
            if self._subscription:
                await wait_any([self._member.joined, self._stopped], None)
                self._member.raise_if_failed()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Accept what the last poll returned (implicit mode), send every pending
        acknowledgement, release what was fetched but not handed out, close the share
        sessions, leave the group and close the connections. A waiting poll returns ``{}``
        (``getone()`` raises ``ConsumerStoppedError``); records still held unanswered in
        explicit mode are released by the broker."""
        if self._closed:
            return
        self._closed = True
        self._stopped.set()
        if not self._config.explicit:
            self._fetcher.ledger.accept_unanswered()
        try:
            if self._started:
                await self._fetcher.close()
        finally:
            try:
                await self._member.close()
            finally:
                await self._client.close()

    close = stop
    """Java's name."""

    async def __aenter__(self) -> AIOKafkaShareConsumer[KT, VT]:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __del__(self, _warn: Callable[..., None] = warnings.warn) -> None:
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            _warn(f"Unclosed AIOKafkaShareConsumer {self!r}", ResourceWarning, source=self)

    # -- subscription --------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """Fetch from these topics (a list of names: share groups take no patterns); replaces
        the subscription. An empty list is ``unsubscribe()``."""
        if isinstance(topics, str):
            raise TypeError("subscribe() takes a list of topic names, not a string")
        names = list(topics)
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"topic names must be non-empty strings, got {name!r}")
        self._subscription = frozenset(names)
        self._member.subscribe(names)

    def unsubscribe(self) -> None:
        """Stop fetching and leave the group (records still held may be acknowledged)."""
        self._subscription = frozenset()
        self._member.subscribe([])

    def subscription(self) -> frozenset[str]:
        return self._subscription

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions the group currently has this member fetch from (shared with other
        members)."""
        return self._member.assignment

    @property
    def acquisition_lock_timeout_ms(self) -> int | None:
        """How long a record stays locked to this member after it was fetched, as the broker
        last said (None before the first fetch). Java: ``acquisitionLockTimeoutMs()``."""
        return self._fetcher.acquisition_lock_timeout_ms

    def set_acknowledgement_commit_callback(self, callback: Callable[..., Any] | None) -> None:
        """Called as ``callback(offsets, exception)`` when the broker has answered for
        acknowledgements (``offsets``: ``{TopicPartition: set of offsets}``)."""
        if callback is not None and not callable(callback):
            raise TypeError("the acknowledgement commit callback must be callable or None")
        self._fetcher.callback = callback

    # -- polling -------------------------------------------------------------------------------

    def _running(self) -> ShareFetcher:
        if self._closed:
            raise Errors.ConsumerStoppedError()
        if not self._started:
            raise Errors.IllegalStateError("the share consumer is not started: call start()")
        if not self._subscription:
            raise Errors.IllegalStateError("not subscribed to any topic: call subscribe()")
        return self._fetcher

    async def getmany(
        self, *, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """Records acquired for this member, by partition, each with its ``delivery_count``;
        waits up to ``timeout_ms`` when none are ready. ``{}`` after ``stop()``."""
        return await self._poll(timeout_ms, max_records, False)

    async def poll(
        self, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """``getmany`` under the Java client's name."""
        return await self._poll(timeout_ms, max_records, False)

    async def getmany_arrow(
        self,
        *,
        timeout_ms: int = 0,
        max_records: int | None = None,
        key_format: formats.PayloadFormat | None = None,
        value_format: formats.PayloadFormat | None = None,
    ) -> dict[TopicPartition, Any]:
        """Like ``getmany``, but each partition's records as one ``pyarrow.RecordBatch`` in
        Spark's Kafka schema plus ``deliveryCount`` (int16), decoded by the Rust core.
        Deserializers are not applied. Needs pyarrow. ``acknowledge_batch`` answers for a
        whole batch.

        ``value_format`` (``key_format``): decode the values (keys) in Rust into a struct
        column (see :mod:`ferrokafka.formats`). In ``FAILFAST`` mode a malformed record is
        handled as the Java share consumer handles one its deserializer refuses: the records
        before it are handed out, and when it comes first it is released (delivered again,
        its delivery count one higher) and ``PayloadFormatError`` names it; the records after
        it stay acquired for the next polls. A registry that fails, or a poll cancelled while
        it waits for one, gives back every record it took, still acquired: nothing is
        acknowledged that was not handed out."""
        if key_format is None and value_format is None:
            return await self._poll(timeout_ms, max_records, True)
        formats.check_formats(key_format, value_format)
        return await self._poll(timeout_ms, max_records, True, (key_format, value_format))

    async def getone(self) -> ConsumerRecord[KT, VT]:
        """The next record (waits for one). Raises ``ConsumerStoppedError`` after ``stop()``."""
        while True:
            if not self._closed and self._started and self._subscription:
                one = self._take_one()
                if one is not None:
                    return one
            data = await self._poll(None, 1, False)
            for records in data.values():
                record: ConsumerRecord[KT, VT] = records[0]
                return record
            if self._closed:
                raise Errors.ConsumerStoppedError()

    def _take_one(self) -> ConsumerRecord[KT, VT] | None:
        """``getone``'s fast path, what ``_poll`` does for one record without its general
        steps: None when they are needed (nothing decoded is buffered, a failure to raise,
        explicit mode with the last record unanswered)."""
        fetcher = self._fetcher
        if self._member.failure is not None:
            return None
        ledger = fetcher.ledger
        if not self._config.explicit:
            ledger.accept_unanswered()
        elif ledger.unanswered():
            return None
        if fetcher.turn_due:
            return None  # the general path gives the loop its turn first
        record: ConsumerRecord[KT, VT] | None = fetcher.take_one()
        return record

    def __aiter__(self) -> AsyncIterator[ConsumerRecord[KT, VT]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ConsumerRecord[KT, VT]]:
        while True:
            try:
                data = await self._poll(None, None, False)
            except Errors.ConsumerStoppedError:
                return
            for records in data.values():
                for record in records:
                    yield record
            if self._closed:
                return

    async def _poll(
        self,
        timeout_ms: int | None,
        max_records: int | None,
        arrow: bool,
        payloads: tuple[formats.PayloadFormat | None, formats.PayloadFormat | None] | None = None,
    ) -> dict[TopicPartition, Any]:
        """Take records after the last wait, with no await between taking and returning them:
        a cancelled poll has taken nothing. With ``payloads`` (the key's and value's formats)
        a registry may be awaited after taking: what was taken is then settled by
        :func:`.payload_formats.hand_out_formatted`, which gives it back if the poll fails
        or is cancelled."""
        if timeout_ms is not None and timeout_ms < 0:
            raise ValueError(f"timeout_ms must not be negative, got {timeout_ms}")
        max_records_value(max_records)
        if self._closed:
            return {}
        fetcher = self._running()
        ledger = fetcher.ledger
        if self._config.explicit:
            unanswered = ledger.unanswered()
            if unanswered:
                raise Errors.IllegalStateError(
                    f"{unanswered} record(s) of the last poll are not acknowledged; with "
                    "share_acknowledgement_mode='explicit' every record must be acknowledged "
                    "before the next poll"
                )
        else:
            ledger.accept_unanswered()
        limit = max_records or self._config.max_poll_records
        # max_poll_records, then the rest of the record batch it ends in, as Java's share
        # consumer hands out records; a max_records given is a bound.
        whole = max_records is None
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        waited = False
        while True:
            self._member.raise_if_failed()
            fetcher.raise_if_failed()
            turn, fetcher.turn_due = fetcher.turn_due, False
            if fetcher.poll_starting(limit) or waited or turn:
                # Before taking anything (a poll cancelled here has taken nothing): the
                # requests asked for go out, and after a wait, those that waited for the
                # fetch's answer (the application keeps the loop until its next poll).
                await asyncio.sleep(0)
                if self._closed:
                    return {}
            fetcher.data_ready.clear()
            data: dict[TopicPartition, Any] = (
                fetcher.take_arrow_unsettled(limit, whole)
                if payloads is not None
                else fetcher.take_arrow(limit, whole)
                if arrow
                else fetcher.take_records(limit, whole)
            )
            fetcher.want_more()
            if data:
                if payloads is not None:
                    return await hand_out_formatted(fetcher, data, *payloads)
                return data
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if not waited:
                    await asyncio.sleep(0)
                return {}
            if not waited:
                fetcher.starved()
            waited = True
            fetcher.polls_waiting += 1
            try:
                await wait_any([self._stopped, fetcher.data_ready], remaining)
            finally:
                fetcher.polls_waiting -= 1
            if self._closed:
                return {}

    # -- acknowledging -------------------------------------------------------------------------

    def _explicit(self) -> ShareFetcher:
        fetcher = self._running()
        if not self._config.explicit:
            raise Errors.IllegalStateError(
                "acknowledge() needs share_acknowledgement_mode='explicit' (in implicit mode "
                "every record handed out is accepted by the next poll)"
            )
        return fetcher

    def acknowledge(
        self, record: ConsumerRecord[Any, Any], type: AcknowledgeType | int = AcknowledgeType.ACCEPT
    ) -> None:
        """Answer for a record this consumer handed out: ACCEPT (done), RELEASE (deliver it
        again), REJECT (archive it), RENEW (keep its lock longer; answer for it again
        later). Sent with the next fetch from its broker, or by ``commit()``."""
        kind = _ACK_TYPES.get(type)
        if kind is None:
            kind = _ack_type(type)
        if not self._explicit_mode or self._closed or not self._started:
            self._explicit()  # raises why not
        # A plain tuple finds the same entries as a TopicPartition, for less.
        tp: Any = (record.topic, record.partition)
        last = self._fetcher.ledger.acknowledge(tp, record.offset, kind)
        if kind == _RENEW:
            self._fetcher.wake()  # renewals go at once
        elif last:
            # The last of the poll settled: the next fetch can carry the answers now. (Not after
            # a RENEW: that record is still being worked on, and records fetched now would
            # wait under locks.)
            self._fetcher.want_more()

    def acknowledge_offsets(
        self, partition: TopicPartition, offsets: Iterable[int], type: AcknowledgeType | int
    ) -> None:
        """``acknowledge`` for several records of one partition at once, by offset."""
        kind = _ack_type(type)
        fetcher = self._explicit()
        last = False
        for offset in offsets:
            last = fetcher.ledger.acknowledge(partition, int(offset), kind)
        if kind == _RENEW:
            fetcher.wake()
        elif last:
            fetcher.want_more()

    def acknowledge_batch(self, batch: Any, type: AcknowledgeType | int) -> None:
        """``acknowledge`` every row of an Arrow batch from ``getmany_arrow`` (its ``topic``,
        ``partition`` and ``offset`` columns)."""
        topics = batch.column("topic").to_pylist()
        partitions = batch.column("partition").to_pylist()
        offsets = batch.column("offset").to_pylist()
        by_tp: dict[TopicPartition, list[int]] = {}
        for topic, partition, offset in zip(topics, partitions, offsets, strict=True):
            by_tp.setdefault(TopicPartition(topic, partition), []).append(offset)
        for tp, tp_offsets in by_tp.items():
            self.acknowledge_offsets(tp, tp_offsets, type)

    async def commit(self) -> dict[TopicPartition, set[int]]:
        """Send every pending acknowledgement now (implicit mode: after accepting what the
        last poll returned) and wait for the brokers' answers: the offsets answered for, per
        partition. Raises ``AcknowledgementCommitFailedError`` naming each partition whose
        acknowledgements the broker refused. Cancelling it stops the wait, not the requests."""
        fetcher = self._running()
        if not self._config.explicit:
            fetcher.ledger.accept_unanswered()
        results = await fetcher.commit()
        return _raise_failures(results)

    def commit_async(self) -> asyncio.Task[dict[TopicPartition, set[int]]]:
        """``commit()`` in a task of its own; its outcome also reaches the acknowledgement
        commit callback."""
        fetcher = self._running()
        if not self._config.explicit:
            fetcher.ledger.accept_unanswered()
        task = asyncio.ensure_future(self._commit_task(fetcher))
        task.add_done_callback(_retrieve)
        return task

    async def _commit_task(self, fetcher: ShareFetcher) -> dict[TopicPartition, set[int]]:
        return _raise_failures(await fetcher.commit())


_ACK_TYPES: dict[Any, int] = {t: int(t) for t in AcknowledgeType}
_RENEW = int(AcknowledgeType.RENEW)


def _ack_type(type_: AcknowledgeType | int) -> int:
    try:
        return int(AcknowledgeType(type_))
    except ValueError:
        raise ValueError(
            f"acknowledge type must be one of {[t.name for t in AcknowledgeType]}, got {type_!r}"
        ) from None


def _raise_failures(results: AckResults) -> dict[TopicPartition, set[int]]:
    errors = {tp: err for tp, (_, err) in results.items() if err is not None}
    if errors:
        raise AcknowledgementCommitFailedError(errors)
    return {tp: answered_offsets(batches) for tp, (batches, _) in results.items()}


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
