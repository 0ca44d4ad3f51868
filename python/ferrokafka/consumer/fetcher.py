"""The fetcher: Fetch requests to each partition's leader (or preferred read replica), one in
flight per broker, and a bounded buffer of fetched partition data that the consumer drains
(SEMANTICS.md section 5).

The raw ``records`` bytes of a partition are decoded by the Rust core only when the application
takes them, into ``ConsumerRecord`` lists or Arrow columns, whichever it asks for. Prefetch is
bounded: a partition is fetched again while at most ``MAX_BUFFERED_FETCHES - 1`` of its fetched
responses wait in the buffer, so buffered bytes never exceed that many times
``max_partition_fetch_bytes`` per partition (and ``fetch_max_bytes`` per broker).

Positions: ``TopicPartitionState.position`` is what the application has been given; the
fetcher keeps its own ``fetch position`` per partition (where its next request starts), which
runs ahead by the buffered data. A seek drops the partition's buffered data.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .. import _native
from .. import errors as Errors
from ..client import AIOKafkaClient
from ..protocol import ApiKey
from ..structs import TopicPartition
from ..waits import finish_tasks, wait_event
from .subscription_state import OffsetResetStrategy, SubscriptionState, TopicPartitionState

__all__ = ["Fetcher", "OffsetLookup"]

log = logging.getLogger(__name__)

MAX_BUFFERED_FETCHES = 2
DRAIN_SOFT_RECORDS = 16384
DRAIN_SOFT_BYTES = 1 << 20
"""A ``getmany`` without ``max_records`` stops taking further partitions once it holds this many
records or this many fetched bytes (whole partition responses, at least one): a smaller burst of
objects stays in the allocator's caches, and the peak memory of a poll stays bounded when many
partitions have data buffered. An explicit ``max_records`` is honoured as given.

1 MiB (one default-sized partition response) rather than 4: a poll's values and records then
fit in a core's L2 cache (1 MiB here) when the next poll reuses their memory. A throwaway script
alternated the two over W2's data (1M x 1 KiB): in 12 pairs of reads the median took 0.82 s
against 0.87 s with 4 MiB, faster in 9 of 12; W1's data (5M x 100 B) 1.43 against 1.46 s, 7 of 8
pairs."""
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
_FETCH_SESSION_ERRORS = {
    Errors.FetchSessionIdNotFound.errno,
    Errors.InvalidFetchSessionEpoch.errno,
    Errors.FetchSessionTopicIdError.errno,
}
_ZERO_UUID = bytes(16)

OffsetLookup = Callable[[list[TopicPartition]], Awaitable[dict[TopicPartition, int]]]
"""Committed offsets for partitions without a position (the group's OffsetFetch); -1 = none."""


@dataclass(frozen=True)
class _FetchKey:
    """What a fetch session remembers of one partition (a change means: send it again)."""

    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int
    max_bytes: int


class _FetchSession:
    """KIP-227 incremental fetch session with one broker (the Java FetchSessionHandler's rules:
    a full request creates the session; later requests carry only partitions whose fetch state
    changed, and forget the ones no longer wanted)."""

    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = 0
        self._known: dict[TopicPartition, _FetchKey] = {}

    @property
    def full(self) -> bool:
        return self.session_id == 0 or self.epoch == 0

    def build(
        self, wanted: dict[TopicPartition, _FetchKey]
    ) -> tuple[dict[TopicPartition, _FetchKey], list[TopicPartition]]:
        if self.full:
            return dict(wanted), []
        send = {tp: k for tp, k in wanted.items() if self._known.get(tp) != k}
        forget = [tp for tp in self._known if tp not in wanted]
        return send, forget

    def succeeded(self, session_id: int, wanted: dict[TopicPartition, _FetchKey]) -> None:
        if self.full:
            self.session_id = session_id
            self.epoch = 1 if session_id else 0
        else:
            self.epoch = self.epoch + 1 if self.epoch < 0x7FFFFFFF else 1
        self._known = dict(wanted) if self.session_id else {}

    def reset(self) -> None:
        self.session_id = 0
        self.epoch = 0
        self._known = {}


class _Buffered:
    """One fetched response of one partition, decoded on demand, drained in order."""

    __slots__ = (
        "aborted",
        "end",
        "end_epoch",
        "form",
        "items",
        "next_offset",
        "raw",
        "start",
        "state",
        "taken",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        state: TopicPartitionState,
        start: int,
        raw: _native.SharedBytes | bytes,
        end: int,
        end_epoch: int,
        aborted: list[tuple[int, int]] | None,
    ) -> None:
        self.tp = tp
        self.state = state
        """The partition's state when it was fetched: a partition assigned anew (after it was
        lost or revoked) has a new state, and nothing fetched before that is handed out."""
        self.start = start
        """The offset this response was fetched from."""
        self.raw = raw
        self.end = end
        """The position after its last whole batch (where the next fetch started)."""
        self.end_epoch = end_epoch
        self.aborted = aborted
        self.form: str | None = None
        self.items: Any = None
        self.taken = 0
        self.next_offset: int | None = None


@dataclass
class _Node:
    session: _FetchSession
    task: asyncio.Task[None] | None = None
    not_before: float = 0.0


class Fetcher:
    """Fetches assigned partitions in the background and hands out what it fetched."""

    def __init__(
        self,
        client: AIOKafkaClient,
        subscriptions: SubscriptionState,
        *,
        key_deserializer: Callable[[bytes | None], Any] | None = None,
        value_deserializer: Callable[[bytes | None], Any] | None = None,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        fetch_max_wait_ms: int = 500,
        max_partition_fetch_bytes: int = 1048576,
        check_crcs: bool = True,
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 40000,
        auto_offset_reset: str = "latest",
        isolation_level: str = "read_uncommitted",
        client_rack: str | None = None,
        metadata_max_age_ms: int = 300000,
        committed_lookup: OffsetLookup | None = None,
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._key_deserializer = key_deserializer
        self._value_deserializer = value_deserializer
        self._min_bytes = fetch_min_bytes
        self._max_bytes = fetch_max_bytes
        self._max_wait_ms = fetch_max_wait_ms
        self._partition_max_bytes = max_partition_fetch_bytes
        self._check_crcs = check_crcs
        self._retry_backoff = retry_backoff_ms / 1000
        self._request_timeout_ms = request_timeout_ms
        self._default_reset = OffsetResetStrategy.from_config(auto_offset_reset)
        self._isolation = (
            READ_COMMITTED if isolation_level == "read_committed" else READ_UNCOMMITTED
        )
        self._rack = client_rack or ""
        self._replica_ttl = metadata_max_age_ms / 1000
        self._committed_lookup = committed_lookup

        self._buffers: dict[TopicPartition, deque[_Buffered]] = {}
        self._fetch_pos: dict[TopicPartition, tuple[int, int]] = {}
        """Per partition: (fetch offset, last fetched epoch) of the next request."""
        self._in_flight: set[TopicPartition] = set()
        self._tp_not_before: dict[TopicPartition, float] = {}
        self._nodes: dict[int, _Node] = {}
        self._wake = asyncio.Event()
        self.data_ready = asyncio.Event()
        """Set when fetched data (or an error for the application) arrives."""
        self._errors: deque[Errors.KafkaError] = deque()
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
        self._buffers.clear()
        self.data_ready.set()

    def wake(self) -> None:
        self._wake.set()

    def _subscription_changed(self) -> None:
        """Drop what was fetched for partitions no longer assigned, or assigned anew since
        (a member that lost its partitions must not hand out records fetched while it owned
        them), then fetch again for whatever changed."""
        stale = [
            tp
            for tp, queue in self._buffers.items()
            if not self._subs.is_assigned(tp) or queue[0].state is not self._subs.state(tp)
        ]
        for tp in stale:
            self._drop(tp)
        for tp in [tp for tp in self._fetch_pos if not self._subs.is_assigned(tp)]:
            del self._fetch_pos[tp]
        self._wake.set()

    # -- the background routine --------------------------------------------------------------

    async def _routine(self) -> None:
        while not self._closed:
            self._wake.clear()
            try:
                await self._update_positions()
            except Errors.KafkaError as exc:
                if exc.retriable or isinstance(exc, Errors.KafkaConnectionError):
                    log.info("resetting positions failed (will retry): %s", exc)
                else:
                    # The application must hear of it (authorization, an unsupported
                    # broker...): raised by its next poll, retried after a backoff.
                    log.warning("resetting positions failed: %s", exc)
                    self._errors.append(exc)
                    self.data_ready.set()
                await asyncio.sleep(self._retry_backoff)
                continue
            delay = self._start_fetches()
            timeout = None if delay is None else max(delay, 0.001)
            await wait_event(self._wake, timeout)

    def _start_fetches(self) -> float | None:
        """Send a Fetch to every node that has fetchable partitions and nothing in flight.
        Returns how long until something in backoff becomes fetchable (None: nothing is)."""
        now = time.monotonic()
        by_node: dict[int, list[tuple[TopicPartition, TopicPartitionState]]] = {}
        next_retry: float | None = None
        need_metadata = False
        for tp, st in self._subs.items():
            if (
                st.paused
                or st.error is not None
                or not st.has_valid_position
                or tp in self._in_flight
                or len(self._buffers.get(tp, ())) >= MAX_BUFFERED_FETCHES
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
        for node_id, parts in by_node.items():
            peer = self._nodes.setdefault(node_id, _Node(_FetchSession()))
            if peer.task is not None:
                continue
            if peer.not_before > now:
                next_retry = min(next_retry or peer.not_before, peer.not_before)
                continue
            for tp, _ in parts:
                self._in_flight.add(tp)
            peer.task = asyncio.create_task(self._fetch_from(node_id, peer, parts))
        return None if next_retry is None else next_retry - now

    def _refresh_metadata_soon(self) -> None:
        task = asyncio.ensure_future(self._client.refresh_metadata())
        task.add_done_callback(_log_failure)

    def _position_for_fetch(self, tp: TopicPartition, st: TopicPartitionState) -> tuple[int, int]:
        pos = self._fetch_pos.get(tp)
        if pos is None or not self._buffers.get(tp):
            # Nothing buffered: the next fetch starts where the application is.
            assert st.position is not None
            pos = (st.position, st.position_epoch)
            self._fetch_pos[tp] = pos
        return pos

    async def _fetch_from(
        self,
        node_id: int,
        node: _Node,
        parts: list[tuple[TopicPartition, TopicPartitionState]],
    ) -> None:
        cluster = self._client.cluster
        wanted: dict[TopicPartition, _FetchKey] = {}
        for tp, st in parts:
            offset, epoch = self._position_for_fetch(tp, st)
            wanted[tp] = _FetchKey(
                offset,
                cluster.leader_epoch_for_partition(tp),
                epoch,
                self._partition_max_bytes,
            )
        try:
            conn = await self._client.ready(node_id)
            version = conn.version_for(ApiKey.FETCH)
            send, forget = node.session.build(wanted)
            ids = {tp.topic: _topic_id(self._client, tp.topic) for tp in [*wanted, *forget]}
            if any(ids[tp.topic] == _ZERO_UUID for tp in forget):
                # A topic left the assignment and its metadata with it: start a new session
                # (a full request) rather than name the forgotten partitions.
                node.session.reset()
                send, forget = node.session.build(wanted)
                ids = {tp.topic: ids[tp.topic] for tp in wanted}
            if version >= 13 and _ZERO_UUID in ids.values():
                version = 12
            request = self._fetch_request(node.session, send, forget, ids, version)
            response = await conn.send(
                ApiKey.FETCH,
                request,
                version=version,
                timeout_ms=self._request_timeout_ms + self._max_wait_ms,
            )
            error = response["error_code"]
            if error:
                node.session.reset()
                if error not in _FETCH_SESSION_ERRORS:
                    raise Errors.for_code(error)(f"Fetch to node {node_id}")
                log.debug("fetch session with node %s reset: error %s", node_id, error)
            else:
                node.session.succeeded(response["session_id"], wanted)
                by_id = {v: k for k, v in ids.items()}
                self._handle_response(node_id, response, wanted, dict(parts), by_id)
        except asyncio.CancelledError:
            raise
        except Errors.KafkaError as exc:
            node.session.reset()
            node.not_before = time.monotonic() + self._retry_backoff
            log.info("fetch from node %s failed: %s", node_id, exc)
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

    def _fetch_request(
        self,
        session: _FetchSession,
        send: dict[TopicPartition, _FetchKey],
        forget: list[TopicPartition],
        ids: dict[str, bytes],
        version: int,
    ) -> dict[str, Any]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for tp, key in send.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition": tp.partition,
                    "current_leader_epoch": key.current_leader_epoch,
                    "fetch_offset": key.fetch_offset,
                    "last_fetched_epoch": key.last_fetched_epoch,
                    "log_start_offset": -1,
                    "partition_max_bytes": key.max_bytes,
                }
            )
        forgotten: dict[str, list[int]] = {}
        for tp in forget:
            forgotten.setdefault(tp.topic, []).append(tp.partition)

        def topic_ref(topic: str) -> dict[str, Any]:
            return {"topic_id": ids[topic]} if version >= 13 else {"topic": topic}

        return {
            "max_wait_ms": self._max_wait_ms,
            "min_bytes": self._min_bytes,
            "max_bytes": self._max_bytes,
            "isolation_level": self._isolation,
            "session_id": session.session_id,
            "session_epoch": session.epoch,
            "topics": [topic_ref(t) | {"partitions": p} for t, p in by_topic.items()],
            "forgotten_topics_data": [
                topic_ref(t) | {"partitions": p} for t, p in forgotten.items()
            ],
            "rack_id": self._rack,
        }

    def _handle_response(
        self,
        node_id: int,
        response: dict[str, Any],
        wanted: dict[TopicPartition, _FetchKey],
        states: dict[TopicPartition, TopicPartitionState],
        by_id: dict[bytes, str],
    ) -> None:
        now = time.monotonic()
        now_ms = int(time.time() * 1000)
        got_data = False
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
                    or self._fetch_pos.get(tp, (None,))[0] != key.fetch_offset
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
                diverging = p.get("diverging_epoch") or {}
                if diverging.get("epoch", -1) >= 0 or diverging.get("end_offset", -1) >= 0:
                    self._truncated(tp, st, key, diverging)
                    continue
                raw = p.get("records")
                if not raw:
                    continue
                end = _native.records_end(raw)
                if end is None:
                    continue  # only a partial batch: the next fetch tries again
                aborted = p.get("aborted_transactions")
                self._buffers.setdefault(tp, deque()).append(
                    _Buffered(
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
                self._fetch_pos[tp] = end
                got_data = True
        if got_data:
            self.data_ready.set()

    def _partition_error(
        self,
        node_id: int,
        tp: TopicPartition,
        st: TopicPartitionState,
        key: _FetchKey,
        error: int,
    ) -> None:
        cls = Errors.for_code(error)
        now = time.monotonic()
        if cls is Errors.OffsetOutOfRangeError:
            if st.preferred_read_replica is not None:
                # The follower may lag the leader: go back to the leader first.
                st.preferred_read_replica = None
                return
            if self._buffers.get(tp):
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
        # Not retriable (authorization, corrupt data on the broker, ...): tell the application
        # and stop fetching the partition until it seeks.
        self._fail(st, cls(f"fetch of {tp} at offset {key.fetch_offset} from node {node_id}"))

    def _truncated(
        self,
        tp: TopicPartition,
        st: TopicPartitionState,
        key: _FetchKey,
        diverging: dict[str, Any],
    ) -> None:
        """KIP-320: the leader's log diverges from what we fetched (an unclean election)."""
        end_offset = diverging.get("end_offset", -1)
        self._buffers.pop(tp, None)
        self._fetch_pos.pop(tp, None)
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

    def _fail(self, st: TopicPartitionState, exc: Errors.KafkaError) -> None:
        """Stop fetching the partition; its error is raised by every poll until a seek."""
        st.error = exc
        self.data_ready.set()

    # -- positions -------------------------------------------------------------------------

    async def _update_positions(self) -> None:
        missing = self._subs.missing_positions()
        if missing:
            committed: dict[TopicPartition, int] = {}
            if self._committed_lookup is not None:
                committed = await self._committed_lookup(missing)
            for tp in missing:
                if not self._subs.is_assigned(tp):
                    continue
                st = self._subs.state(tp)
                if st.position is not None or st.reset_strategy is not None:
                    continue
                offset = committed.get(tp, -1)
                if offset >= 0:
                    st.seek(offset)
                else:
                    st.request_reset(self._default_reset)
        resets = self._subs.awaiting_reset()
        if not resets:
            return
        for tp, strategy in list(resets.items()):
            if strategy is OffsetResetStrategy.NONE:
                del resets[tp]
                st = self._subs.state(tp)
                if st.error is None:
                    self._fail(
                        st,
                        Errors.NoOffsetForPartitionError(
                            f"{tp} has no committed offset and auto_offset_reset is 'none'; "
                            "seek to a position first"
                        ),
                    )
        if not resets:
            return
        found = await self.list_offsets({tp: int(s) for tp, s in resets.items()})
        for tp, (offset, _, epoch) in found.items():
            if self._subs.is_assigned(tp):
                st = self._subs.state(tp)
                if st.reset_strategy is not None and offset >= 0:
                    st.seek(offset, epoch)
                    self._tp_not_before.pop(tp, None)

    async def list_offsets(
        self,
        timestamps: dict[TopicPartition, int],
        timeout: float | None = None,
    ) -> dict[TopicPartition, tuple[int, int | None, int]]:
        """ListOffsets for each partition (timestamp, or -2 earliest, -1 latest, -3 max
        timestamp) from its leader: ``{tp: (offset, timestamp, leader_epoch)}``; offset -1 when
        no record matches a timestamp. Retries retriable errors until ``timeout``
        (``request_timeout_ms``), then raises ``KafkaTimeoutError``."""
        deadline = time.monotonic() + (
            self._request_timeout_ms / 1000 if timeout is None else timeout
        )
        remaining = dict(timestamps)
        result: dict[TopicPartition, tuple[int, int | None, int]] = {}
        last_error: BaseException | None = None
        for topic in {tp.topic for tp in remaining}:
            if self._client.cluster.partitions_for_topic(topic) is None:
                self._client.add_topic(topic)
        while remaining:
            by_node: dict[int, dict[TopicPartition, int]] = {}
            unknown = []
            for tp, ts in remaining.items():
                leader = self._client.cluster.leader_for_partition(tp)
                if leader is None or leader < 0:
                    unknown.append(tp)
                else:
                    by_node.setdefault(leader, {})[tp] = ts
            if by_node:
                results = await asyncio.gather(
                    *(self._list_offsets_node(n, parts) for n, parts in by_node.items()),
                    return_exceptions=True,
                )
                for outcome in results:
                    if isinstance(outcome, BaseException):
                        if not isinstance(outcome, Errors.KafkaError) or not outcome.retriable:
                            raise outcome
                        last_error = outcome
                        continue
                    done, error = outcome
                    result.update(done)
                    for tp in done:
                        remaining.pop(tp, None)
                    if error is not None:
                        last_error = error
            if not remaining:
                break
            if time.monotonic() >= deadline:
                raise Errors.KafkaTimeoutError(
                    f"ListOffsets for {sorted(remaining)} did not succeed in time"
                    + (f" (last error: {last_error})" if last_error else "")
                )
            if unknown:
                last_error = Errors.UnknownTopicOrPartitionError(f"no leader for {unknown}")
            await asyncio.sleep(self._retry_backoff)
            with contextlib.suppress(Errors.KafkaError):
                await self._client.refresh_metadata()
        return result

    async def _list_offsets_node(
        self, node_id: int, parts: dict[TopicPartition, int]
    ) -> tuple[dict[TopicPartition, tuple[int, int | None, int]], Errors.KafkaError | None]:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for tp, ts in parts.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "current_leader_epoch": self._client.cluster.leader_epoch_for_partition(tp),
                    "timestamp": ts,
                }
            )
        body = {
            "replica_id": -1,
            "isolation_level": self._isolation,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
            "timeout_ms": self._request_timeout_ms,
        }
        response = await self._client.send(node_id, ApiKey.LIST_OFFSETS, body)
        done: dict[TopicPartition, tuple[int, int | None, int]] = {}
        error: Errors.KafkaError | None = None
        for t in response["topics"]:
            for p in t["partitions"]:
                tp = TopicPartition(t["name"], p["partition_index"])
                code = p["error_code"]
                if code == 0:
                    ts = p.get("timestamp", -1)
                    done[tp] = (p["offset"], None if ts < 0 else ts, p.get("leader_epoch", -1))
                    continue
                cls = Errors.for_code(code)
                exc = cls(f"ListOffsets for {tp} from node {node_id}")
                if not (cls.retriable or cls.invalid_metadata):
                    raise exc
                error = exc
        return done, error

    # -- handing out records ---------------------------------------------------------------

    def raise_pending_error(self, partitions: set[TopicPartition] | None = None) -> None:
        """Raise what the application must see: a failed fetch, else the error of a partition
        that cannot be fetched until it seeks (out of range with reset 'none', no offset,
        truncation, authorization)."""
        if self._errors:
            raise self._errors.popleft()
        for tp, st in self._subs.items():
            if st.error is not None and (partitions is None or tp in partitions):
                raise st.error

    def seeked(self, tp: TopicPartition) -> None:
        """The application moved ``tp``'s position: forget what was fetched for it."""
        self._buffers.pop(tp, None)
        self._fetch_pos.pop(tp, None)
        self._tp_not_before.pop(tp, None)
        self.wake()

    def has_buffered(self, partitions: Iterable[TopicPartition] | None = None) -> bool:
        wanted = None if partitions is None else set(partitions)
        return any(
            bufs
            and (wanted is None or tp in wanted)
            and self._subs.is_assigned(tp)
            and not self._subs.state(tp).paused
            for tp, bufs in self._buffers.items()
        )

    def drain(
        self,
        partitions: set[TopicPartition] | None,
        max_records: int | None,
        form: str,
    ) -> dict[TopicPartition, Any]:
        """Take up to ``max_records`` buffered records (``form`` "records": lists of
        ``ConsumerRecord``; "arrow": ``pyarrow.RecordBatch``es), advancing positions."""
        out: dict[TopicPartition, Any] = {}
        budget = max_records if max_records is not None else -1
        soft = max_records is None
        records_taken = bytes_taken = 0
        for tp in list(self._buffers):
            if budget == 0:
                break
            if soft and (records_taken >= DRAIN_SOFT_RECORDS or bytes_taken >= DRAIN_SOFT_BYTES):
                break
            if partitions is not None and tp not in partitions:
                continue
            queue = self._buffers[tp]
            if not self._subs.is_assigned(tp):
                self._drop(tp)
                continue
            st = self._subs.state(tp)
            if st.paused:
                continue
            taken = None
            while queue and budget != 0:
                buf = queue[0]
                if (
                    st.position is None
                    or buf.state is not st
                    or (buf.taken == 0 and buf.start > st.position)
                    or (buf.taken == 0 and buf.end <= st.position)
                ):
                    self._drop(tp)  # seeked away: everything buffered is stale
                    break
                size = len(buf.raw)
                chunk, count, total = self._take(buf, st, budget, form)
                if chunk is not None:
                    taken = chunk if taken is None else _concat(taken, chunk, form)
                    records_taken += count
                    bytes_taken += size * count // total
                    if budget > 0:
                        budget -= count
                if buf.next_offset is None:
                    break
                queue.popleft()
                self.wake()
                if taken is not None:
                    # One fetched response per partition per poll, as aiokafka hands out: a
                    # smaller burst of objects is cheaper to allocate and free.
                    break
            if not queue:
                self._buffers.pop(tp, None)
            elif taken is not None:
                # Partly taken: let other partitions go first next time (fairness).
                self._buffers[tp] = self._buffers.pop(tp)
            if taken is not None:
                out[tp] = taken
        return out

    def _drop(self, tp: TopicPartition) -> None:
        self._buffers.pop(tp, None)
        self._fetch_pos.pop(tp, None)
        self.wake()

    def _decode(self, buf: _Buffered, st: TopicPartitionState, form: str) -> None:
        assert st.position is not None
        common: dict[str, Any] = {
            "check_crcs": self._check_crcs,
            "read_committed": self._isolation == READ_COMMITTED,
            "aborted_transactions": buf.aborted,
            "start_offset": st.position,
        }
        tp = buf.tp
        try:
            if form == "arrow":
                part: Any = _native.decode_columns(buf.raw, tp.topic, tp.partition, **common)
                items: Any = part.records.to_pyarrow()
            else:
                part = _native.decode_records(
                    buf.raw,
                    tp.topic,
                    tp.partition,
                    key_deserializer=self._key_deserializer,
                    value_deserializer=self._value_deserializer,
                    **common,
                )
                items = part.records
        except Errors.CorruptRecordException as exc:
            bad = getattr(exc, "offset", None)
            cut = None if bad is None else _native.batch_position(buf.raw, bad)
            if not cut or bad is None or bad <= st.position:
                # Nothing good before it: the application sees the error and the position
                # stays on the bad batch (it may seek past it).
                self._drop(tp)
                raise
            # Hand out the whole batches before the bad one first; the next fetch starts at
            # the bad batch and raises there.
            buf.raw = buf.raw[:cut]
            buf.end = bad
            self._decode(buf, st, form)
            return
        except BaseException:
            self._drop(tp)
            raise
        buf.form = form
        buf.items = items
        buf.taken = 0
        buf.start = st.position
        buf.next_offset = None
        buf.end = part.next_offset if part.next_offset is not None else buf.end

    def _take(
        self, buf: _Buffered, st: TopicPartitionState, budget: int, form: str
    ) -> tuple[Any, int, int]:
        """Up to ``budget`` (-1: all) of ``buf``'s records in ``form``: (chunk or None, how many,
        how many records ``buf`` has in all)."""
        if buf.form != form:
            self._decode(buf, st, form)
        items = buf.items
        total = len(items) if form == "records" else items.num_rows
        n = total - buf.taken if budget < 0 else min(budget, total - buf.taken)
        start = buf.taken
        buf.taken += n
        if form == "records":
            chunk: Any = items[start : start + n] if (start or n != total) else items
            last = chunk[-1].offset if n else None
        else:
            chunk = items.slice(start, n) if (start or n != total) else items
            last = chunk.column(4)[n - 1].as_py() if n else None
        if buf.taken >= total:
            # All of it: the position moves past control batches and aborted data too.
            st.position = max(buf.end, (last + 1) if last is not None else buf.end)
            st.position_epoch = buf.end_epoch
            buf.next_offset = st.position
        elif last is not None:
            st.position = last + 1
        return (chunk if n else None), n, total


def _concat(a: Any, b: Any, form: str) -> Any:
    if form == "records":
        return a + b
    import pyarrow  # type: ignore[import-untyped]

    return pyarrow.concat_batches([a, b])


def _topic_id(client: AIOKafkaClient, topic: str) -> bytes:
    info = client.cluster.topic_info(topic)
    return _ZERO_UUID if info is None or info.topic_id is None else info.topic_id.bytes


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("background metadata refresh failed: %s", task.exception())
