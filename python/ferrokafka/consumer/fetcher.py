"""The fetcher: Fetch requests to each partition's leader (or preferred read replica, KIP-392),
one in flight per broker, in incremental fetch sessions (KIP-227), and a bounded buffer of
fetched partition data that the consumer drains.

The raw ``records`` bytes of a partition are decoded by the Rust core only when the application
takes them, into ``ConsumerRecord`` lists or Arrow columns, whichever it asks for. Prefetch is
bounded: a partition is fetched again while at most ``MAX_BUFFERED_FETCHES - 1`` of its fetched
responses wait in the buffer, so buffered bytes never exceed that many times
``max_partition_fetch_bytes`` per partition (and ``fetch_max_bytes`` per broker).

Positions: each partition's ``TopicPartitionState`` holds both its ``position`` (what the
application has been given) and its ``fetch_position`` (where the next request starts), which
runs ahead by the buffered data. A seek drops the partition's buffered data.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import _native
from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config import ConsumerConfig
from ..conn import AUTHENTICATION_ERRORS
from ..protocol import Api
from ..structs import TopicPartition
from ..waits import Signal, finish_tasks, wait_event
from .fetch_buffer import Buffered, FetchBuffer
from .fetch_session import FIRST_TOPIC_ID_VERSION, FetchKey, FetchSession
from .positions import READ_COMMITTED, READ_UNCOMMITTED, OffsetLookup, Positions
from .subscription_state import OffsetResetStrategy, SubscriptionState, TopicPartitionState

if TYPE_CHECKING:
    from .._native import FetchEpochEndOffset, FetchRequest, FetchResponse
    from ..metrics.consumer import FetchMetrics

__all__ = ["Fetcher", "OffsetLookup"]

log = logging.getLogger(__name__)

MAX_BUFFERED_FETCHES = 2
_FETCH_SESSION_ERRORS = {
    Errors.FetchSessionIdNotFound.errno,
    Errors.InvalidFetchSessionEpoch.errno,
    Errors.FetchSessionTopicIdError.errno,
}
_ZERO_UUID = bytes(16)
_TOPIC_AUTHORIZATION_FAILED = Errors.TopicAuthorizationFailedError.errno
_MIN_WAIT_S = 0.001
"""The shortest wait of the fetch loop for a partition's backoff to end: one ending now (or
already, by the time it is computed) still sleeps a little rather than spin."""


@dataclass
class _Node:
    session: FetchSession
    task: asyncio.Task[None] | None = None
    not_before: float = 0.0


class Fetcher:
    """Fetches assigned partitions in the background and hands out what it fetched."""

    def __init__(
        self,
        client: AIOKafkaClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        *,
        committed_lookup: OffsetLookup | None = None,
        metrics: FetchMetrics | None = None,
    ) -> None:
        self._client = client
        self._metrics = metrics
        self._subs = subscriptions
        # The options each fetch reads, as attributes.
        self._min_bytes = config.fetch_min_bytes
        self._max_bytes = config.fetch_max_bytes
        self._max_wait_ms = config.fetch_max_wait_ms
        self._partition_max_bytes = config.max_partition_fetch_bytes
        self._retry_backoff = config.retry_backoff_ms / 1000
        self._request_timeout_ms = config.request_timeout_ms
        self._default_reset = OffsetResetStrategy.from_config(config.auto_offset_reset)
        self._isolation = READ_COMMITTED if config.read_committed else READ_UNCOMMITTED
        self._rack = config.client_rack or ""
        self._replica_ttl = config.metadata_max_age_ms / 1000
        self._positions = Positions(
            client, subscriptions, config, committed_lookup=committed_lookup, fail=self._fail
        )
        self._buffer = FetchBuffer(
            subscriptions,
            config,
            on_drop=self._dropped,
            on_taken=self.wake,
            on_consumed=None if metrics is None else metrics.consumed,
        )
        # Handing out what was fetched is the buffer's: the consumer calls it directly.
        self.drain = self._buffer.drain
        self.stop_runs = self._buffer.stop_runs
        self.buffer = self._buffer
        self._in_flight: set[TopicPartition] = set()
        self._tp_not_before: dict[TopicPartition, float] = {}
        self._nodes: dict[int, _Node] = {}
        self._fetches_started = 0
        self._wake = Signal()
        self.data_ready = Signal()
        """Set when fetched data (or an error for the application) arrives."""
        self._errors: deque[Errors.KafkaError] = deque()
        self._position_error: Errors.KafkaError | None = None
        """Why positions could not be reset, until a poll raises it or a retry succeeds."""
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        subscriptions.on_change(self._subscription_changed)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._routine(), name="ferrokafka-fetcher")

    async def close(self) -> None:
        self._closed = True
        tasks = [n.task for n in self._nodes.values() if n.task is not None]
        if self._task is not None:
            tasks.append(self._task)
        await finish_tasks(tasks, "fetcher")
        self._task = None
        self._buffer.clear()
        self.data_ready.set()

    def wake(self) -> None:
        self._wake.set()

    def fetch_ahead(self) -> bool:
        """From the application's poll: start the fetches the background routine was woken
        for (room made by records taken, a fetch ended) now rather than when it next runs.
        While records are buffered a poll returns without waiting, so the event loop, and the
        routine with it, would run only once the buffer is empty: the application would then
        wait for a whole fetch each time, where the fetch can travel while it works through
        what is buffered. Whether a fetch was started (its request goes out on the loop's next
        turn)."""
        if self._closed or self._task is None or not self._wake.is_set():
            return False
        started = self._fetches_started
        self._start_fetches()
        return self._fetches_started != started

    def _subscription_changed(self) -> None:
        """Drop what was fetched for partitions no longer assigned, or assigned anew since
        (a member that lost its partitions must not hand out records fetched while it owned
        them), then fetch again for whatever changed."""
        for tp in self._buffer.stale():
            self._drop(tp)
        self._wake.set()

    # -- the background routine --------------------------------------------------------------

    async def _routine(self) -> None:
        while not self._closed:
            self._wake.clear()
            try:
                await self._update_positions()
                self._position_error = None
            except Errors.KafkaError as exc:
                refused = isinstance(exc, AUTHENTICATION_ERRORS)
                if not refused and (exc.retriable or isinstance(exc, Errors.KafkaConnectionError)):
                    log.info("resetting positions failed (will retry): %s", exc)
                else:
                    # The application must hear of it (authorization, an unsupported
                    # broker...): raised by its next poll, retried after a backoff. One slot,
                    # not a queue: a poll after the cause went away must not see stale errors.
                    log.warning("resetting positions failed: %s", exc)
                    self._position_error = exc
                    self.data_ready.set()
                await asyncio.sleep(self._retry_backoff)
                continue
            delay = self._start_fetches()
            timeout = None if delay is None else max(delay, _MIN_WAIT_S)
            await wait_event(self._wake, timeout)

    def _start_fetches(self) -> float | None:
        """Send a Fetch to every node that has fetchable partitions and nothing in flight.
        Returns how long until something in backoff becomes fetchable (None: nothing is)."""
        now = time.monotonic()
        by_node: dict[int, list[tuple[TopicPartition, TopicPartitionState]]] = {}
        next_retry: float | None = None
        need_metadata = False
        unauthorized: set[str] = set()
        for tp, st in self._subs.items():
            if (
                st.held
                or st.error is not None
                or not st.has_valid_position
                or tp in self._in_flight
                or self._buffer.queued(tp) >= MAX_BUFFERED_FETCHES
            ):
                continue
            not_before = self._tp_not_before.get(tp, 0.0)
            if not_before > now:
                next_retry = min(next_retry or not_before, not_before)
                continue
            node = st.read_replica(now)
            if node is None or self._client.cluster.broker_metadata(node) is None:
                node = self._client.cluster.leader_for_partition(tp)
            if node is None or node < 0:
                if self._client.cluster.topic_error(tp.topic) == _TOPIC_AUTHORIZATION_FAILED:
                    unauthorized.add(tp.topic)
                # Not in the metadata yet (a topic created after the last refresh): look it
                # up, and come back to it after the backoff even if nothing wakes the loop.
                need_metadata = True
                retry_at = now + self._retry_backoff
                self._tp_not_before[tp] = retry_at
                next_retry = min(next_retry or retry_at, retry_at)
                continue
            by_node.setdefault(node, []).append((tp, st))
        if need_metadata:
            self._refresh_metadata_soon()
        if unauthorized:
            # The metadata refused these topics: the application hears it from its next
            # poll (as the Java consumer does) while the lookups go on, so a grant resumes.
            self._report(
                Errors.TopicAuthorizationFailedError(
                    f"not authorized to describe topics {sorted(unauthorized)}"
                )
            )
        for node_id, parts in by_node.items():
            peer = self._nodes.setdefault(node_id, _Node(FetchSession()))
            if peer.task is not None:
                continue
            if peer.not_before > now:
                next_retry = min(next_retry or peer.not_before, peer.not_before)
                continue
            # Where each fetch starts is read now, with the states just checked: by the time
            # the task first runs, a seek or reset may have taken a position away.
            cluster = self._client.cluster
            wanted: dict[TopicPartition, FetchKey] = {}
            for tp, st in parts:
                offset, epoch = st.next_fetch(self._buffer.queued(tp) > 0)
                wanted[tp] = FetchKey(
                    offset,
                    cluster.leader_epoch_for_partition(tp),
                    epoch,
                    self._partition_max_bytes,
                )
                self._in_flight.add(tp)
            peer.task = asyncio.create_task(self._fetch_from(node_id, peer, parts, wanted))
            self._fetches_started += 1
        return None if next_retry is None else next_retry - now

    def _refresh_metadata_soon(self) -> None:
        task = asyncio.ensure_future(self._client.refresh_metadata())
        task.add_done_callback(_log_failure)

    async def _fetch_from(
        self,
        node_id: int,
        node: _Node,
        parts: list[tuple[TopicPartition, TopicPartitionState]],
        wanted: dict[TopicPartition, FetchKey],
    ) -> None:
        """One Fetch to ``node_id`` for ``wanted``; whatever happens, the node and the
        partitions are free for the next fetch when it ends."""
        try:
            conn = await self._client.ready(node_id)
            version = conn.version_for(Api.FETCH.key)
            send, forget = node.session.build(wanted)
            ids = {tp.topic: _topic_id(self._client, tp.topic) for tp in [*wanted, *forget]}
            if any(ids[tp.topic] == _ZERO_UUID for tp in forget):
                # A topic left the assignment and its metadata with it: start a new session
                # (a full request) rather than name the forgotten partitions.
                node.session.reset()
                send, forget = node.session.build(wanted)
                ids = {tp.topic: ids[tp.topic] for tp in wanted}
            if version >= FIRST_TOPIC_ID_VERSION and _ZERO_UUID in ids.values():
                version = FIRST_TOPIC_ID_VERSION - 1  # a topic without an id: by name
            body: FetchRequest = node.session.request(
                send,
                forget,
                ids,
                version,
                max_wait_ms=self._max_wait_ms,
                min_bytes=self._min_bytes,
                max_bytes=self._max_bytes,
                isolation_level=self._isolation,
                rack_id=self._rack,
            )
            sent_at = time.monotonic()
            response = await conn.send(
                Api.FETCH,
                body,
                version=version,
                timeout_ms=self._request_timeout_ms + self._max_wait_ms,
            )
            fetched_at = time.monotonic()
            error = response["error_code"]
            if error:
                node.session.reset()
                if error not in _FETCH_SESSION_ERRORS:
                    raise Errors.for_code(error)(f"Fetch to node {node_id}")
                log.debug("fetch session with node %s reset: error %s", node_id, error)
            else:
                node.session.succeeded(response["session_id"], wanted)
                by_id = {v: k for k, v in ids.items()}
                size = self._handle_response(node_id, response, wanted, dict(parts), by_id)
                if self._metrics is not None:
                    self._metrics.fetched(
                        (fetched_at - sent_at) * 1000,
                        size,
                        response.get("throttle_time_ms", 0),
                        fetched_at,
                    )
        except asyncio.CancelledError:
            raise
        except Errors.KafkaError as exc:
            node.session.reset()
            node.not_before = time.monotonic() + self._retry_backoff
            log.info("fetch from node %s failed: %s", node_id, exc)
            if isinstance(exc, AUTHENTICATION_ERRORS):
                # Retried after the backoff like any failure, but the application hears of
                # it: a refused authentication does not heal by itself (as the Java consumer).
                self._report(exc)
            if exc.invalid_metadata or isinstance(exc, Errors.KafkaConnectionError):
                self._refresh_metadata_soon()
        except Exception as exc:  # a bug or a corrupt response: keep fetching, tell the user
            node.session.reset()
            node.not_before = time.monotonic() + self._retry_backoff
            log.exception("fetch from node %s failed", node_id)
            self._errors.append(Errors.KafkaError(f"fetch from node {node_id} failed: {exc!r}"))
            self.data_ready.set()
        finally:
            node.task = None
            for tp in wanted:
                self._in_flight.discard(tp)
            self._wake.set()

    def _handle_response(
        self,
        node_id: int,
        response: FetchResponse,
        wanted: dict[TopicPartition, FetchKey],
        states: dict[TopicPartition, TopicPartitionState],
        by_id: dict[bytes, str],
    ) -> int:
        """Buffer what came; return how many bytes of records came."""
        now = time.monotonic()
        now_ms = int(time.time() * 1000)
        got_data = False
        size = 0
        for topic_resp in response["responses"]:
            topic = topic_resp.get("topic") or by_id.get(bytes(topic_resp.get("topic_id") or b""))
            if topic is None:
                continue
            for p in topic_resp["partitions"]:
                tp = TopicPartition(topic, p["partition_index"])
                key = wanted.get(tp)
                if key is None or not self._subs.is_assigned(tp):
                    continue
                st = self._subs.state(tp)
                if (
                    st is not states[tp]
                    or st.fetch_position is None
                    or st.fetch_position[0] != key.fetch_offset
                    or not st.has_valid_position
                ):
                    continue  # assigned anew, seeked or reset while the request was in flight
                error = p["error_code"]
                if error:
                    self._partition_error(node_id, tp, st, key, error)
                    continue
                st.highwater = p["high_watermark"]
                st.last_stable_offset = p.get("last_stable_offset", -1)
                st.log_start_offset = p.get("log_start_offset", -1)
                st.timestamp = now_ms
                replica = p.get("preferred_read_replica", -1)
                if replica is not None and replica >= 0:
                    st.preferred_read_replica = replica
                    st.preferred_read_replica_until = now + self._replica_ttl
                diverging = p.get("diverging_epoch")
                if diverging is not None and (
                    diverging.get("epoch", -1) >= 0 or diverging.get("end_offset", -1) >= 0
                ):
                    self._truncated(tp, st, key, diverging)
                    continue
                raw = p.get("records")
                if not raw:
                    continue
                size += len(raw)
                end = _native.records_end(raw)
                if end is None:
                    continue  # only a partial batch: the next fetch tries again
                aborted = p.get("aborted_transactions")
                self._buffer.add(
                    Buffered(
                        tp,
                        st,
                        key.fetch_offset,
                        raw,
                        end[0],
                        end[1],
                        None
                        if aborted is None
                        else [(a["producer_id"], a["first_offset"]) for a in aborted],
                    )
                )
                st.fetched(end)
                got_data = True
        if got_data:
            self.data_ready.set()
        return size

    def _partition_error(
        self,
        node_id: int,
        tp: TopicPartition,
        st: TopicPartitionState,
        key: FetchKey,
        error: int,
    ) -> None:
        cls = Errors.for_code(error)
        now = time.monotonic()
        if cls is Errors.OffsetOutOfRangeError:
            if st.preferred_read_replica is not None:
                # The follower may lag the leader: go back to the leader first.
                st.preferred_read_replica = None
                return
            if self._buffer.queued(tp):
                # The application has not reached that offset yet: look again later.
                self._tp_not_before[tp] = now + self._retry_backoff
                return
            if self._default_reset is OffsetResetStrategy.NONE:
                self._fail(
                    st,
                    Errors.OffsetOutOfRangeError(
                        f"fetch offset {key.fetch_offset} of {tp} is out of range and "
                        "auto_offset_reset is 'none'; seek to a valid offset"
                    ),
                )
            else:
                log.info(
                    "fetch offset %s of %s is out of range; resetting to %s",
                    key.fetch_offset,
                    tp,
                    self._default_reset.name.lower(),
                )
                self._subs.request_reset(tp, self._default_reset)
            return
        if cls.invalid_metadata or cls.retriable:
            log.debug(
                "fetch of %s from node %s: %s; refreshing metadata", tp, node_id, cls.__name__
            )
            st.preferred_read_replica = None
            self._tp_not_before[tp] = now + self._retry_backoff
            self._refresh_metadata_soon()
            return
        if cls is Errors.TopicAuthorizationFailedError:
            # Raised by the next poll and fetched again after the backoff, as the Java
            # consumer does: an ACL granted later lets the same position be read.
            self._tp_not_before[tp] = now + self._retry_backoff
            self._report(cls(f"not authorized to read topic {tp.topic!r} (fetch of {tp})"))
            return
        # Not retriable (corrupt data on the broker, ...): tell the application and stop
        # fetching the partition until it seeks.
        self._fail(st, cls(f"fetch of {tp} at offset {key.fetch_offset} from node {node_id}"))

    def _truncated(
        self,
        tp: TopicPartition,
        st: TopicPartitionState,
        key: FetchKey,
        diverging: FetchEpochEndOffset,
    ) -> None:
        """KIP-320: the leader's log diverges from what we fetched (an unclean election)."""
        end_offset = diverging.get("end_offset", -1)
        self._buffer.forget(tp)
        st.fetched_data_dropped()
        position = st.position if st.position is not None else key.fetch_offset
        if end_offset < 0 or end_offset >= position:
            # Divergence only past what the application has seen: fetch again from there.
            st.seek(min(position, end_offset) if end_offset >= 0 else position)
            return
        if self._default_reset is OffsetResetStrategy.NONE:
            self._fail(
                st,
                Errors.LogTruncationError(
                    f"the log of {tp} was truncated to offset {end_offset} (epoch "
                    f"{diverging.get('epoch')}) below the consumed position {position}; "
                    "records after it may be lost. Seek to continue.",
                    divergent_offsets={tp: end_offset},
                ),
            )
        else:
            log.warning(
                "truncation detected for %s: position %s is past the leader's end offset %s; "
                "continuing from there",
                tp,
                position,
                end_offset,
            )
            st.seek(end_offset, diverging.get("epoch", -1))
            self._subs.changed()

    def _report(self, exc: Errors.KafkaError) -> None:
        """Have the next poll raise ``exc``, once however often it recurs before that poll."""
        if not any(type(e) is type(exc) and str(e) == str(exc) for e in self._errors):
            self._errors.append(exc)
        self.data_ready.set()

    def _fail(self, st: TopicPartitionState, exc: Errors.KafkaError) -> None:
        """Stop fetching the partition; its error is raised by every poll until a seek."""
        st.error = exc
        self.data_ready.set()

    # -- positions -------------------------------------------------------------------------

    async def _update_positions(self) -> None:
        for tp in await self._positions.update():
            self._tp_not_before.pop(tp, None)

    async def list_offsets(
        self,
        timestamps: dict[TopicPartition, int],
        timeout: float | None = None,
    ) -> dict[TopicPartition, tuple[int, int | None, int]]:
        """See :meth:`Positions.list_offsets`."""
        return await self._positions.list_offsets(timestamps, timeout)

    # -- handing out records ---------------------------------------------------------------

    def raise_pending_error(self, partitions: set[TopicPartition] | None = None) -> None:
        """Raise what the application must see: a failed fetch or a refused topic (once),
        else why positions could not be reset (once), else the error of a partition that
        cannot be fetched until it seeks (out of range with reset 'none', no offset,
        truncation)."""
        if self._errors:
            raise self._errors.popleft()
        if self._position_error is not None:
            exc, self._position_error = self._position_error, None
            raise exc
        for tp, st in self._subs.items():
            if st.error is not None and (partitions is None or tp in partitions):
                raise st.error

    def seeked(self, tp: TopicPartition) -> None:
        """The application moved ``tp``'s position (which forgot its fetch position): forget
        what was fetched for it."""
        self._buffer.forget(tp)
        self._tp_not_before.pop(tp, None)
        self.wake()

    def _dropped(self, tp: TopicPartition) -> None:
        """What was fetched for ``tp`` is gone: the next fetch starts at its position."""
        st = self._subs.current(tp)
        if st is not None:
            st.fetched_data_dropped()
        self.wake()

    def _drop(self, tp: TopicPartition) -> None:
        self._buffer.drop(tp)


def _topic_id(client: AIOKafkaClient, topic: str) -> bytes:
    info = client.cluster.topic_info(topic)
    return _ZERO_UUID if info is None or info.topic_id is None else info.topic_id.bytes


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("background metadata refresh failed: %s", task.exception())
