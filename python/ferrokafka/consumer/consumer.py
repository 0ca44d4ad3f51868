"""``AIOKafkaConsumer``: aiokafka 0.14's consumer API over ferrokafka's fetcher.

The group member (``ferrokafka.consumer.group``) does what depends on the group: membership
and its assignment (``subscribe`` with a ``group_id``), committed offsets; without a
``group_id``, ``subscribe`` assigns every partition of the subscribed topics, as aiokafka does.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import warnings
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic

from .. import _native, formats, memory
from .. import errors as Errors
from ..abc import ConsumerRebalanceListener
from ..client import AIOKafkaClient
from ..config import ConsumerConfig
from ..config.checks import commit_offsets, max_records_value, positive_int
from ..config.connection import LOOP_DEPRECATED, keyword_options
from ..formats import check_formats
from ..metrics import MetricName
from ..metrics.consumer import FetchMetrics
from ..own_methods import install_getone, mark_coroutine_function
from ..structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition
from ..waits import Signal, wait_any
from .fetch_buffer import FetchBuffer
from .fetcher import Fetcher
from .group import GroupMember, group_member
from .output_form import ARROW, RECORDS, OutputForm
from .payload_formats import decode_payloads, prepare_payloads
from .subscription_state import OffsetResetStrategy, SubscriptionState, SubscriptionType
from .topic_creation import wait_for_created_topics

__all__ = ["AIOKafkaConsumer"]

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    # Defaults (PEP 696) for type checkers: without deserializers, keys and values are bytes.
    from typing_extensions import TypeVar

    KT = TypeVar("KT", default=bytes)
    VT = TypeVar("VT", default=bytes)
else:
    from typing import TypeVar

    KT = TypeVar("KT")
    VT = TypeVar("VT")
T = TypeVar("T")

_VERSION = _native.__version__


class AIOKafkaConsumer(Generic[KT, VT]):
    """A Kafka consumer with aiokafka's constructor, methods and errors.

    The keyword arguments are aiokafka's (plus ``group_protocol``, ``group_remote_assignor``
    and ``allow_auto_create_topics``); ``ferrokafka.config.ConsumerConfig`` documents each
    (meaning, unit, default, the Java client's name) and checks them: a wrong value raises
    ``ValueError`` naming the option. ``loop`` is a deprecated no-op.

    Beyond aiokafka: ``getmany_arrow`` returns each partition's records as one
    ``pyarrow.RecordBatch`` in Spark's Kafka schema, decoded by the Rust core; ``poll`` is
    the batch poll of kafka-python and the Java client (``getmany`` under their name).
    """

    def __init__(
        self,
        *topics: str,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | list[str] = "localhost",
        client_id: str = "ferrokafka-" + _VERSION,
        group_id: str | None = None,
        group_instance_id: str | None = None,
        key_deserializer: Callable[[bytes | None], KT] | None = None,
        value_deserializer: Callable[[bytes | None], VT] | None = None,
        fetch_max_wait_ms: int = 500,
        fetch_max_bytes: int = 52428800,
        fetch_min_bytes: int = 1,
        max_partition_fetch_bytes: int = 1 * 1024 * 1024,
        request_timeout_ms: int = 40 * 1000,
        retry_backoff_ms: int = 100,
        auto_offset_reset: str = "latest",
        enable_auto_commit: bool = True,
        auto_commit_interval_ms: int = 5000,
        check_crcs: bool = True,
        metadata_max_age_ms: int = 5 * 60 * 1000,
        partition_assignment_strategy: tuple[Any, ...] | list[Any] | None = None,
        max_poll_interval_ms: int = 300000,
        rebalance_timeout_ms: int | None = None,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
        consumer_timeout_ms: int = 200,
        max_poll_records: int | None = None,
        ssl_context: Any = None,
        security_protocol: str = "PLAINTEXT",
        api_version: str | None = None,
        exclude_internal_topics: bool = True,
        connections_max_idle_ms: int = 540000,
        isolation_level: str = "read_uncommitted",
        sasl_mechanism: str = "PLAIN",
        sasl_plain_password: str | None = None,
        sasl_plain_username: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
        client_rack: str | None = None,
        group_protocol: str = "classic",
        group_remote_assignor: str | None = None,
        allow_auto_create_topics: bool = True,
    ) -> None:
        options = keyword_options(locals(), {"loop": LOOP_DEPRECATED})
        self._started = False
        self._closed = False
        config = self._config = ConsumerConfig(**options)
        self._client = AIOKafkaClient(config, metric_group_prefix="consumer")
        self._max_poll_records = config.max_poll_records

        self._subscription = SubscriptionState()
        self._fetch_metrics = FetchMetrics(
            self._client.metrics, self._subscription, read_committed=config.read_committed
        )
        self._fetcher: Fetcher | None = None
        self._buffer: FetchBuffer | None = None
        """The fetcher's buffer, whose ``run`` ``async for`` and ``getone`` take from."""
        self._coordinator: GroupMember = group_member(
            self._client, self._subscription, self._config
        )
        self._polling_member = self._coordinator if self._coordinator.has_group else None
        """The member each record handed out counts as a poll of (None without a group)."""
        self._next_step = self._steps()
        """Makes ``getone()``'s coroutine: the extension's, which reuses the last one when
        nothing else holds it."""
        self._stopped = Signal()
        if topics:
            self.subscribe(list(topics))

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster and start fetching for what is assigned or subscribed. With a
        ``group_id`` and a subscription, returns once the group has assigned this member its
        partitions (as aiokafka's does). If it raises, the consumer is stopped."""
        if self._started:
            raise Errors.IllegalStateError("start() was already called")
        if self._closed:
            raise Errors.IllegalStateError("the consumer is stopped")
        self._started = True
        memory.apply_environment()
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        await self._client.bootstrap()
        if self._subscription.subscription_type is SubscriptionType.AUTO_TOPICS:
            # As aiokafka's start(): subscribed topics the broker is creating on first use
            # are waited for, so that their partitions are assigned when start() returns.
            await wait_for_created_topics(
                self._client,
                self._subscription.subscription,
                timeout=self._config.request_timeout_ms / 1000,
                interval=self._config.retry_backoff_ms / 1000,
                stopped=self._stopped,
            )
        self._fetcher = Fetcher(
            self._client,
            self._subscription,
            self._config,
            committed_lookup=self._coordinator.committed_positions,
            metrics=self._fetch_metrics,
        )
        self._buffer = self._fetcher.buffer
        await self._coordinator.start()
        self._fetcher.start()
        if self._subscription.partitions_auto_assigned():
            await self._first_assignment()

    async def _first_assignment(self) -> None:
        """Wait until the group has given this member its first assignment, as aiokafka's
        ``start()`` does, so that ``assignment()`` and seeks work right after ``start()``; raise
        why membership failed for good (a join error that cannot be retried)."""
        member = self._coordinator
        await wait_any([member.assignment_ready, member.failed, self._stopped], None)
        member.raise_if_failed()

    async def stop(self) -> None:
        """Leave the group (committing first with auto-commit) and close every connection. A
        pending ``getmany`` returns ``{}``, a pending ``getone`` raises ``ConsumerStoppedError``
        (an ``async for`` over the consumer ends), and so does every call after this."""
        if self._closed:
            return
        self._closed = True
        self._stopped.set()
        if self._fetcher is not None:
            self._fetcher.stop_runs()  # no record is handed out once stop() has begun
        await self._coordinator.close()
        if self._fetcher is not None:
            await self._fetcher.close()
        await self._client.close()

    async def __aenter__(self) -> AIOKafkaConsumer[KT, VT]:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __aiter__(self) -> AsyncIterator[ConsumerRecord[KT, VT]]:
        """Each step is ``getone()``; a record that the last poll left ready (the rest of the
        response it took a record from, while nothing changes) is handed out by the extension
        with no coroutine: per record, that step is what ``async for`` costs beyond the loop's
        body. Ends when the consumer stops, as aiokafka's iteration does."""
        if self._closed:
            raise Errors.ConsumerStoppedError()
        return _native.RecordStream(self, self.__anext__, self._polling_member)

    def _steps(self) -> Callable[[], Coroutine[Any, Any, ConsumerRecord[KT, VT]]]:
        """``getone()``'s steps, from a stream that holds this consumer weakly (the consumer
        holds the stream: a cycle would keep a dropped consumer alive until a collection);
        the stream is also what this consumer's own ``getone`` attribute steps."""
        me = weakref.ref(self)

        def slow() -> Coroutine[Any, Any, ConsumerRecord[KT, VT]]:
            consumer = me()
            if consumer is None:
                raise Errors.ConsumerStoppedError()
            return consumer._getone()

        stream = _native.RecordStream(weakref.proxy(self), slow, self._polling_member)
        install_getone(self, stream, _GETONE)
        return stream.__anext__

    def __del__(self, _warn: Callable[..., None] = warnings.warn) -> None:
        # As aiokafka's: a consumer started and never stopped keeps sockets and tasks alive.
        # (One never started holds neither, and is not warned about.)
        if getattr(self, "_started", False) and not getattr(self, "_closed", True):
            _warn(f"Unclosed AIOKafkaConsumer {self!r}", ResourceWarning, source=self)

    async def __anext__(self) -> ConsumerRecord[KT, VT]:
        try:
            return await self._getone()
        except Errors.ConsumerStoppedError:
            raise StopAsyncIteration from None

    def _running(self) -> Fetcher:
        if self._closed:
            raise Errors.ConsumerStoppedError()
        if self._fetcher is None:
            raise Errors.IllegalStateError("call start() first")
        return self._fetcher

    # -- assignment and subscription -----------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions (no group management)."""
        parts = list(partitions)
        self._subscription.assign_from_user(parts)
        self._client.set_topics({tp.topic for tp in parts})
        self._refresh_metadata_in_background()

    def assignment(self) -> set[TopicPartition]:
        return self._subscription.assigned_partitions()

    def subscribe(
        self,
        topics: Iterable[str] = (),
        pattern: str | None = None,
        listener: ConsumerRebalanceListener | None = None,
    ) -> None:
        """Subscribe to topics by name, or to every topic whose name matches ``pattern``.

        ``pattern`` matches as aiokafka's does, with ``re.match``: from the start of the name,
        so ``"logs"`` also takes ``"logs-eu"`` (the Java client matches whole names: anchor
        the pattern with ``$`` for that). Without a ``group_id`` every partition of the
        subscribed topics is assigned to this consumer, and kept up to date as topics and
        partitions appear in the cluster metadata.

        Raises ``TypeError`` for both topics and a pattern, neither, topics that are not a
        list (or tuple or set), or a listener that is not a ``ConsumerRebalanceListener``;
        ``ValueError`` for a pattern that does not compile."""
        if not (topics or pattern):
            raise TypeError("You should provide either `topics` or `pattern`")
        if topics and pattern:
            raise TypeError("You can't provide both `topics` and `pattern`")
        if listener is not None and not isinstance(listener, ConsumerRebalanceListener):
            raise TypeError(f"listener should be a ConsumerRebalanceListener, got {listener!r}")
        if pattern is not None:
            try:
                compiled = re.compile(pattern)
            except (re.error, TypeError) as exc:
                raise ValueError(f"{pattern!r} is not a valid pattern: {exc}") from exc
            self._subscription.subscribe_pattern(compiled, listener)
            self._client.set_topics(None)
        else:
            if isinstance(topics, str) or not isinstance(topics, tuple | set | list | frozenset):
                raise TypeError("Topics should be list of strings")
            topic_list = list(topics)
            self._subscription.subscribe(topic_list, listener)
            self._client.set_topics(set(topic_list))
        self._coordinator.subscription_changed()

    def subscription(self) -> frozenset[str]:
        return self._subscription.subscription

    def unsubscribe(self) -> None:
        self._subscription.unsubscribe()
        self._coordinator.subscription_changed()
        self._client.set_topics(None)

    def _refresh_metadata_in_background(self) -> None:
        if self._started and not self._closed:
            task = asyncio.ensure_future(self._client.refresh_metadata())
            task.add_done_callback(_log_failure)

    # -- positions -----------------------------------------------------------------------------

    def _check_partitions(self, partitions: Iterable[Any]) -> list[TopicPartition]:
        parts = list(partitions)
        for tp in parts:
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"partitions must be TopicPartition objects, got {tp!r}")
            if not self._subscription.is_assigned(tp):
                raise Errors.IllegalStateError(f"Partition {tp} is not assigned")
        return parts

    async def position(self, partition: TopicPartition) -> int:
        """The offset of the next record that will be returned for ``partition``."""
        fetcher = self._running()
        while True:
            state = self._subscription.state(partition)
            if state.error is not None:
                raise state.error
            if state.has_valid_position and state.position is not None:
                return state.position
            version = self._subscription.version
            fetcher.wake()
            await self._subscription.wait_for_change(version, self._config.retry_backoff_ms / 1000)
            if self._closed:
                raise Errors.ConsumerStoppedError()

    def highwater(self, partition: TopicPartition) -> int | None:
        """The high watermark the last fetch of ``partition`` reported (None before one)."""
        return self._subscription.state(partition).highwater

    def last_stable_offset(self, partition: TopicPartition) -> int | None:
        return self._subscription.state(partition).last_stable_offset

    def last_poll_timestamp(self, partition: TopicPartition) -> int | None:
        """Wall-clock ms of the last fetch response that covered ``partition``."""
        return self._subscription.state(partition).timestamp

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Make ``offset`` the next record returned for ``partition``."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"Offset must be a non-negative integer, got {offset!r}")
        self._check_partitions([partition])
        self._subscription.seek(partition, offset)
        if self._fetcher is not None:
            self._fetcher.seeked(partition)

    async def _reset(self, partitions: tuple[Any, ...], strategy: OffsetResetStrategy) -> None:
        self._running()
        parts = self._check_partitions(partitions) or list(self.assignment())
        for tp in parts:
            self._subscription.request_reset(tp, strategy)
            assert self._fetcher is not None
            self._fetcher.seeked(tp)
        for tp in parts:
            await self.position(tp)

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Seek to the earliest offset of the given (default: all assigned) partitions."""
        await self._reset(partitions, OffsetResetStrategy.EARLIEST)

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Seek to the end (high watermark, or LSO with read_committed) of the partitions."""
        await self._reset(partitions, OffsetResetStrategy.LATEST)

    async def seek_to_committed(self, *partitions: TopicPartition) -> dict[TopicPartition, int]:
        """Seek to the group's committed offsets; returns them (None where none is)."""
        self._running()
        parts = self._check_partitions(partitions) or sorted(self.assignment())
        committed = await self._need_group().fetch_committed_offsets(parts)
        out: dict[TopicPartition, Any] = {}
        for tp in parts:
            om = committed.get(tp)
            out[tp] = None if om is None else om.offset
            if om is not None and om.offset >= 0:
                self.seek(tp, om.offset)
        return out

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop returning and fetching records of these partitions (they stay assigned)."""
        for tp in self._check_partitions(partitions):
            self._subscription.pause(tp)

    def resume(self, *partitions: TopicPartition) -> None:
        for tp in self._check_partitions(partitions):
            self._subscription.resume(tp)

    def paused(self) -> set[TopicPartition]:
        return self._subscription.paused_partitions()

    # -- offsets by time and watermarks --------------------------------------------------------

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """The earliest offset of each partition (assigned or not)."""
        found = await self._running().list_offsets({tp: -2 for tp in partitions})
        return {tp: v[0] for tp, v in found.items()}

    async def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset after the last record (the LSO with read_committed) of each partition."""
        found = await self._running().list_offsets({tp: -1 for tp in partitions})
        return {tp: v[0] for tp, v in found.items()}

    async def offsets_for_times(
        self, timestamps: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The earliest offset whose timestamp is >= the given one (ms), per partition; None
        where no record is that new."""
        for tp, ts in timestamps.items():
            if isinstance(ts, bool) or not isinstance(ts, int) or ts < 0:
                raise ValueError(f"The target time for partition {tp} is {ts!r}: must be >= 0")
        found = await self._running().list_offsets(dict(timestamps))
        return {
            tp: None if offset < 0 else OffsetAndTimestamp(offset, ts)
            for tp, (offset, ts, _) in found.items()
        }

    # -- committed offsets ---------------------------------------------------------------------

    def _need_group(self) -> GroupMember:
        self._running()
        self._coordinator.require_group()
        return self._coordinator

    async def committed(self, partition: TopicPartition) -> int | None:
        """The group's committed offset of ``partition`` (None when nothing is committed)."""
        coordinator = self._need_group()
        om = (await coordinator.fetch_committed_offsets([partition])).get(partition)
        return None if om is None else om.offset

    async def commit(
        self,
        offsets: Mapping[TopicPartition, int | tuple[int, str] | OffsetAndMetadata] | None = None,
    ) -> None:
        """Commit ``offsets`` (the next offset to read, optionally with metadata), or the
        positions of every assigned partition."""
        coordinator = self._need_group()
        if offsets is None:
            to_commit = self._subscription.all_consumed_offsets()
        else:
            to_commit = commit_offsets("commit()", offsets)
            coordinator.refuse_commit()  # out of the group: say why, before "not assigned"
            self._check_partitions(to_commit)
        await coordinator.commit(to_commit)

    # -- metadata ------------------------------------------------------------------------------

    async def topics(self) -> set[str]:
        """Every topic the cluster shows this client."""
        self._running()
        response = await self._client.fetch_all_metadata()
        return {
            t["name"]
            for t in response["topics"]
            if t["name"]
            and not t["error_code"]
            and not (self._config.exclude_internal_topics and t.get("is_internal"))
        }

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """The partition ids of ``topic`` from the metadata in hand (None if unknown)."""
        return self._client.cluster.partitions_for_topic(topic)

    def metrics(self) -> dict[MetricName, float]:
        """This consumer's metrics, named as the Java consumer's (``consumer-metrics``,
        ``consumer-node-metrics``, ``consumer-fetch-manager-metrics``,
        ``consumer-coordinator-metrics``): a snapshot, computed now. ``flatten()`` from
        ``ferrokafka.metrics`` gives string keys."""
        return self._client.metrics.read()

    # -- records -------------------------------------------------------------------------------

    # A consumer's own ``getone`` attribute (see own_methods.py) answers
    # ``consumer.getone()`` without this frame while this method is the class's; it calls this
    # one when partitions are named.
    def getone(self, *partitions: TopicPartition) -> Coroutine[Any, Any, ConsumerRecord[KT, VT]]:
        """The next record (of the given partitions, or any assigned one), waiting for it.

        A coroutine, as aiokafka's: nothing is taken until it runs (one cancelled or dropped
        before then costs no record). The next record of the response the last poll took one
        from is handed out by the extension when it runs, with no Python frame; any other
        record goes through the whole poll."""
        if partitions:
            return self._getone(partitions)
        return self._next_step()

    async def _getone(self, partitions: tuple[TopicPartition, ...] = ()) -> ConsumerRecord[KT, VT]:
        fetcher = self._running()
        member = self._coordinator
        if member.has_group:
            member.raise_if_failed()
        record: ConsumerRecord[KT, VT] | None = fetcher.buffer.take_one(
            set(self._check_partitions(partitions)) if partitions else None
        )
        if record is not None:
            if member.has_group:
                member.polled()
            return record
        while True:
            data = await self._poll(partitions, None, 1, RECORDS, raise_on_stop=True)
            for records in data.values():
                first: ConsumerRecord[KT, VT] = records[0]
                return first

    async def getmany(
        self,
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
    ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """Records fetched so far, by partition; waits up to ``timeout_ms`` if none are.

        At most ``max_records`` (default ``max_poll_records``). With neither set, one call
        returns whole fetched responses until it holds about 16k records or 1 MiB (unlike
        aiokafka, which returns everything buffered): the rest comes with the next call, with
        no wait. Smaller bursts keep a poll's memory bounded and its objects in cache.

        A deserializer that raises stops its partition at that record: the records before it
        are returned, then every poll raises the deserializer's exception (``topic``,
        ``partition`` and ``offset`` set on it) until the application seeks past it."""
        if timeout_ms < 0:
            raise ValueError(f"timeout_ms must not be negative, got {timeout_ms}")
        max_records_value(max_records)
        result: dict[TopicPartition, list[ConsumerRecord[KT, VT]]] = await self._poll(
            partitions, timeout_ms / 1000, max_records or self._max_poll_records, RECORDS
        )
        return result

    async def poll(
        self,
        timeout_ms: int = 0,
        max_records: int | None = None,
        update_offsets: bool = True,
    ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """kafka-python's and the Java client's batch poll: ``getmany`` under their name, for
        code that says ``await consumer.poll()``.

        Returns what ``getmany(timeout_ms=..., max_records=...)`` returns, a dict of
        ``TopicPartition`` to its records: with ``timeout_ms=0`` (the default) at once, with
        whatever is buffered (``{}`` when nothing is); otherwise waiting up to ``timeout_ms``
        for records. ``max_records`` defaults to ``max_poll_records``.

        ``update_offsets=False`` (kafka-python's) returns the records without moving the
        positions: the next poll returns the same records again (``commit()`` without offsets
        and auto-commit commit the positions, so neither covers them), until a poll with
        ``update_offsets=True`` or a ``seek()`` moves on.

        Raises ``ValueError`` for a negative ``timeout_ms`` or a ``max_records`` below 1,
        ``TypeError`` for a ``max_records`` that is not an int, as kafka-python's does. A
        cancelled poll has taken nothing: the records it would have returned come with the
        next one."""
        if timeout_ms < 0:
            raise ValueError(f"timeout_ms must not be negative, got {timeout_ms}")
        if max_records is not None:
            if isinstance(max_records, bool) or not isinstance(max_records, int):
                raise TypeError(f"max_records must be an int, got {max_records!r}")
            positive_int("max_records", max_records)
        if not isinstance(update_offsets, bool):
            raise TypeError(f"update_offsets must be True or False, got {update_offsets!r}")
        result: dict[TopicPartition, list[ConsumerRecord[KT, VT]]] = await self._poll(
            (),
            timeout_ms / 1000,
            max_records or self._max_poll_records,
            RECORDS,
            advance=update_offsets,
        )
        return result

    async def getmany_arrow(
        self,
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
        key_format: formats.PayloadFormat | None = None,
        value_format: formats.PayloadFormat | None = None,
    ) -> dict[TopicPartition, Any]:
        """Like ``getmany``, but each partition's records as one ``pyarrow.RecordBatch`` in
        Spark's Kafka schema (key, value, topic, partition, offset, timestamp, timestampType,
        headers), built by the Rust decoder. Deserializers are not applied. Needs pyarrow.

        ``value_format`` (``key_format``): decode the values (keys) in Rust into a struct
        column of a schema, e.g. ``ferrokafka.formats.JsonFormat(schema)``; see
        :mod:`ferrokafka.formats` for malformed records."""
        if timeout_ms < 0:
            raise ValueError(f"timeout_ms must not be negative, got {timeout_ms}")
        max_records_value(max_records)
        check_formats(key_format, value_format)
        got = await self._poll(
            partitions, timeout_ms / 1000, max_records or self._max_poll_records, ARROW
        )
        await prepare_payloads(self, got, key_format, value_format)
        return decode_payloads(self, got, key_format, value_format)

    async def _poll(
        self,
        partitions: tuple[TopicPartition, ...],
        timeout: float | None,
        max_records: int | None,
        form: OutputForm[T],
        *,
        raise_on_stop: bool = False,
        advance: bool = True,
    ) -> dict[TopicPartition, T]:
        """Wait for data. ``stop()`` meanwhile returns ``{}`` (``getmany``, as aiokafka's
        does) or, with ``raise_on_stop`` (``getone``), raises ``ConsumerStoppedError``.

        Records are taken only after the last wait, with no await between taking and
        returning them: a cancelled poll has taken nothing."""
        fetcher = self._running()
        member = self._coordinator
        member.raise_if_failed()
        member.polled()
        wanted = set(self._check_partitions(partitions)) if partitions else None
        deadline = None if timeout is None else time.monotonic() + timeout
        waited = False
        if fetcher.fetch_ahead():
            # One turn of the loop sends it, before anything is taken (a poll cancelled here
            # has taken nothing); the response then comes in while the application works.
            await asyncio.sleep(0)
        while True:
            fetcher.data_ready.clear()
            data = fetcher.drain(wanted, max_records, form, advance=advance)
            if data:
                return data
            fetcher.raise_pending_error(wanted)
            member.raise_if_failed()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if not waited:
                    # A poll with nothing buffered and no time to wait still lets the loop
                    # run once: `while True: await consumer.poll()` would otherwise never
                    # yield, and the fetcher would never get to fetch anything.
                    await asyncio.sleep(0)
                return {}
            # A fatal group error ends the wait.
            waited = True
            await wait_any([self._stopped, fetcher.data_ready, member.failed], remaining)
            if self._closed:
                if raise_on_stop:
                    raise Errors.ConsumerStoppedError()
                return {}


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("background consumer task failed: %s", task.exception())


mark_coroutine_function(AIOKafkaConsumer.getone)
_GETONE = AIOKafkaConsumer.getone
"""The class's own ``getone``, as defined here: what a consumer's own ``getone`` stands in for
while the class's attribute is this function (not, for one made after the class was patched or
instrumented, the wrapper found on the class then)."""
