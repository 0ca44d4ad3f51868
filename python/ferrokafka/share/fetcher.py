"""The share consumer's fetcher: one share session and one fetch routine per partition leader
(KIP-932).

A routine fetches when a poll wants records and less than half a fetch of its broker's
records is buffered, so a member holds at most about one and a half fetches of records it has
not handed out (their locks run while they wait). The acknowledgements pending for the
partitions it fetches ride on that ShareFetch, as the Java client does; RENEWs, and
acknowledgements for partitions it no longer fetches, go in a ShareAcknowledge of their own;
``commit()`` sends everything pending at once and returns the broker's answer per partition.

Requests run in tasks of the fetcher: a cancelled ``commit()`` stops waiting, and its
acknowledgements still reach the broker (a request cut off half-way would leave the session's
epoch unknown). ``close()`` lets each routine finish the request it has in flight, releases
what was fetched but never handed out, and closes each session with the last
acknowledgements (epoch -1; the broker releases whatever the session still held).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config.share_consumer import ACQUIRE_MODES, ShareConsumerConfig
from ..protocol import Api, key_of
from ..structs import ConsumerRecord, TopicPartition
from ..waits import finish_tasks, wait_any
from .acknowledgements import GAP
from .fetched import FetchedSharePartition
from .ledger import AckLedger, Runs
from .member import ShareMember
from .session import CLOSE_EPOCH, ShareSession

if TYPE_CHECKING:
    from .._native import (
        AcknowledgementBatch,
        ShareAcknowledgeRequest,
        ShareFetchRequest,
        ShareFetchTopic,
    )

T = TypeVar("T")

if TYPE_CHECKING:  # for the checker alone: a generic TypedDict needs Python 3.11 at run time

    class _PartitionResponse(TypedDict):
        partition_index: int

    _P = TypeVar("_P", bound=_PartitionResponse)

    class _TopicResponse(TypedDict, Generic[_P]):
        """What ShareFetch and ShareAcknowledge responses have alike: topics by id, each
        with its partitions' answers."""

        topic_id: bytes
        partitions: list[_P]


__all__ = ["AckResults", "ShareFetcher", "Taken", "answered_offsets"]

log = logging.getLogger(__name__)

AckResults = dict[TopicPartition, tuple[list["AcknowledgementBatch"], Errors.KafkaError | None]]
"""Partition -> (the acknowledgements answered for, None or the error for all of them); their
offsets are worked out (``answered_offsets``) only for whoever asks."""

_SESSION_LOST = (Errors.ShareSessionNotFoundError, Errors.InvalidShareSessionEpochError)
_DEFAULT_LOCK_MS = 30_000  # the broker's default, until a response says
_LOCK_MARGIN = 0.9
"""Records are handed out only within this share of their lock's duration (the lock started on
the broker, before the response arrived)."""
_MAX_FETCH_FACTOR = 16
_EARLY_FOR = 100
"""Polls of fewer records (``getone``'s one) send nothing as they start (``poll_starting``):
the application is back before a broker would have answered, and the look at the buffer and
the ledger would cost more than it gains."""
_ONE_CHECK = 256
"""``take_one`` looks whether a fetch should go every this many records."""
_WAITED_LONG = 0.25
"""Fetched records still waiting for the application after this share of their lock's
duration have waited long: the next fetches ask for fewer (``FetchSize.stale``)."""


@dataclass(frozen=True)
class Taken:
    """A partition's Arrow batch taken from the buffer, not yet settled (``runs``: its offsets
    held, as runs)."""

    fetched: FetchedSharePartition
    batch: Any
    runs: Runs


class FetchSize:
    """How many records a ShareFetch asks a broker to acquire: ``max_poll_records`` to begin
    with (the Java client's fixed amount); doubled, up to 16 times that, while polls find
    nothing to hand out after full fetches (fetching holds the application up: one ShareFetch
    a round trip, whose time in the broker grows more slowly than its size; 16 times the
    default is 8,000, what a broker's default of 2,000 record locks per partition lets one
    member hold of 4 partitions), halved back when fetched records wait long for the
    application (they sit under locks other members could use). Fixed with
    ``share_acquire_mode="record_limit"``."""

    def __init__(self, max_poll_records: int, *, fixed: bool) -> None:
        self.floor = max_poll_records
        self.ceiling = max_poll_records if fixed else max_poll_records * _MAX_FETCH_FACTOR
        self.records = max_poll_records
        self._last_full = False

    def answered(self, acquired: int) -> None:
        self._last_full = acquired >= self.records

    def starved(self) -> None:
        if self._last_full:
            self.records = min(self.records * 2, self.ceiling)
            self._last_full = False

    def stale(self) -> None:
        self.records = max(self.records // 2, self.floor)


class ShareFetcher:
    def __init__(
        self, client: AIOKafkaClient, member: ShareMember, config: ShareConsumerConfig
    ) -> None:
        self._client = client
        self._member = member
        self._config = config
        self._decoding = {
            "check_crcs": config.check_crcs,
            "key_deserializer": config.key_deserializer,
            "value_deserializer": config.value_deserializer,
        }
        self.ledger = AckLedger(explicit=config.explicit)
        self._fetch_size = FetchSize(
            config.max_poll_records, fixed=config.share_acquire_mode == "record_limit"
        )
        self.callback: Callable[..., Any] | None = config.acknowledgement_commit_callback
        self.acquisition_lock_timeout_ms: int | None = None
        self.data_ready = asyncio.Event()
        self._unsettled = False
        """A poll took batches it has not settled yet (it waits for a registry): another poll
        takes nothing meanwhile, since rows given back would then be handed out twice."""
        self.polls_waiting = 0
        self._sessions: dict[int, ShareSession] = {}
        self._routines: dict[int, asyncio.Task[None]] = {}
        self._wake: dict[int, asyncio.Event] = {}
        self._want: set[int] = set()
        self._taken_one = 0
        self.turn_due = False
        """A fetch ``take_one`` asked for waits for the loop to turn."""
        self._ahead: set[int] = set()
        """Nodes a starting poll asked to fetch from at once (``poll_starting``)."""
        self._acking: set[int] = set()
        """Nodes with a ShareAcknowledge ``poll_starting`` sent in flight."""
        self._buffer: deque[FetchedSharePartition] = deque()
        self._requests: set[asyncio.Task[Any]] = set()
        self._fetching: set[int] = set()
        """Nodes with a ShareFetch in flight."""
        self._carrying: set[asyncio.Future[AckResults]] = set()
        """Requests in flight with acknowledgements: a ``commit()`` waits for them too."""
        self._riders: dict[int, list[asyncio.Future[AckResults]]] = {}
        """Node -> commits waiting for the answer to the next ShareFetch, which carries their
        acknowledgements."""
        self._errors: list[Errors.KafkaError] = []
        self._failure: Errors.KafkaError | None = None
        self._closing = False
        self._placer: asyncio.Task[None] | None = None
        self._metadata_changed = asyncio.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._client.cluster.add_listener(self._on_metadata)
        self._placer = asyncio.create_task(self._place_routine(), name="ferrokafka-share-placer")

    def _on_metadata(self, _cluster: Any) -> None:
        self._metadata_changed.set()

    async def _place_routine(self) -> None:
        member = self._member
        while True:
            member.assignment_changed.clear()
            self._metadata_changed.clear()
            self._place()
            await wait_any([member.assignment_changed, self._metadata_changed], None)
            if member.failure is not None:
                self.data_ready.set()  # a waiting poll hears of it

    def _place(self) -> None:
        """A fetch routine for every leader of an assigned partition; each is woken to look
        at what it now fetches."""
        missing = False
        for tp in self._member.assignment:
            node = self._client.cluster.leader_for_partition(tp)
            if node is None or node < 0:
                missing = True
                continue
            if node not in self._routines and not self._closing:
                self._sessions.setdefault(node, ShareSession(node))
                self._wake[node] = asyncio.Event()
                routine = asyncio.create_task(
                    self._routine(node), name=f"ferrokafka-share-fetch-{node}"
                )
                routine.add_done_callback(self._routine_ended)
                self._routines[node] = routine
        if missing:
            self._spawn(self._client.refresh_metadata())
        if self.polls_waiting:
            self.want_more()  # a new routine fetches for the waiting poll
        else:
            self.wake()

    def _routine_ended(self, task: asyncio.Task[None]) -> None:
        """A fetch routine ends only when the fetcher closes or fails; anything else is a bug,
        which the next poll raises rather than waiting for records that will never come."""
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        log.error("%s ended by %r", task.get_name(), exc)
        if self._failure is None:
            self._failure = Errors.KafkaError(f"{task.get_name()} ended by {exc!r}")
        self.data_ready.set()

    async def close(self) -> None:
        """Finish the requests in flight, release what was never handed out, and close every
        share session with the acknowledgements still pending."""
        self._closing = True
        self._client.cluster.remove_listener(self._on_metadata)
        if self._placer is not None:
            await finish_tasks([self._placer], "share consumer")
        for wake in self._wake.values():
            wake.set()
        routines = list(self._routines.values())
        if routines:
            # Each ends after the request it has in flight (cut off, the session's epoch
            # would be unknown and the closing acknowledgements refused).
            grace = (self._config.request_timeout_ms + self._config.fetch_max_wait_ms) / 1000
            await asyncio.wait(routines, timeout=grace)
            await finish_tasks(routines, "share consumer")
        for node in list(self._riders):  # a routine cut off did not answer its commits
            self._settle_riders(node, {})
        if self._requests:
            await asyncio.wait(set(self._requests), timeout=self._config.request_timeout_ms / 1000)
        while self._buffer:
            fetched = self._buffer.popleft()
            self.ledger.release_unhanded(fetched.tp, fetched.node, fetched.unhanded())
        self.ledger.forget_held()
        closing = [
            self._spawn(
                self._acknowledge(
                    node, self.ledger.take(node, renewals=False), renewals=False, close=True
                )
            )
            for node, session in self._sessions.items()
            if session.is_open
        ]
        if closing:
            await asyncio.wait(closing)
        for node in self.ledger.pending_nodes():  # no session to carry them
            self._report(
                self._fail_pending(node, Errors.ShareSessionNotFoundError(self._where(node)))
            )

    # -- handing out ---------------------------------------------------------------------------

    def raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._errors:
            error, self._errors = self._errors[0], self._errors[1:]
            raise error

    def want_more(self) -> None:
        """A poll wants records: every routine with nothing buffered fetches. In explicit mode
        not while records handed out are unanswered: the fetch after their answers carries
        them (``acknowledge`` of the last one calls this again)."""
        if self.ledger.explicit and self.ledger.unanswered():
            return
        for node, wake in self._wake.items():
            if not self._stocked(node):
                self._want.add(node)
                wake.set()

    def take_records(
        self, max_records: int, whole_batch: bool = False
    ) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        """Up to ``max_records`` records, by partition; with ``whole_batch``, the rest of the
        record batch the last of them is in too (``FetchedSharePartition.take_records``)."""
        out: dict[TopicPartition, list[ConsumerRecord[Any, Any]]] = {}
        left = 0 if self._unsettled else max_records
        while self._fresh_head() and left > 0:
            fetched = self._buffer[0]
            refused = fetched.refused()
            if refused is not None:
                if out:
                    break  # the next poll raises it
                self._refuse(fetched, *refused)
            records, runs, gaps = fetched.take_records(left, whole_batch)
            self.ledger.gaps(fetched.tp, fetched.node, gaps)
            if records:
                out.setdefault(fetched.tp, []).extend(records)
                self.ledger.delivered(fetched.tp, fetched.node, runs)
                left -= len(records)
            if not fetched:
                self._buffer.popleft()
        return out

    def take_one(self) -> ConsumerRecord[Any, Any] | None:
        """``getone``'s fast path: the next record of the buffer's first partition, when it is
        decoded already and its partition has not waited long; None otherwise, or when there
        is a failure to raise (the poll's general path then runs). Every ``_ONE_CHECK``
        records, and when a partition is done, a broker with too little buffered is asked to
        fetch (``turn_due``: ``getone`` gives the loop a turn for it)."""
        buffer = self._buffer
        if not buffer or self._unsettled or self._failure is not None or self._errors:
            return None
        fetched = buffer[0]
        now = time.monotonic()
        if now >= fetched.expires_at or now - fetched.fetched_at > fetched.lock_s * _WAITED_LONG:
            return None
        record = fetched.take_one()
        if record is None:
            return None
        self.ledger.delivered_one(fetched.tp, fetched.node, record.offset)
        self._taken_one += 1
        if not fetched:
            buffer.popleft()
        elif self._taken_one % _ONE_CHECK:
            return record
        self.want_more()
        self.turn_due = any(n in self._want and n not in self._fetching for n in self._wake)
        return record

    def _refuse(self, fetched: FetchedSharePartition, offset: int, error: Exception) -> None:
        """A poll came to a record its deserializer refused, first of the poll: it is released
        (delivered again, its delivery count one higher, until the broker's delivery limit
        archives it) and the poll raises the deserializer's error, as Java's share consumer
        does; the records after it stay acquired for the next polls."""
        fetched.skip_refused()
        self.ledger.release_unhanded(fetched.tp, fetched.node, [(offset, offset)])
        if not fetched:
            self._buffer.popleft()
        if hasattr(error, "add_note"):
            error.add_note(
                f"ferrokafka: the deserializer failed on topic {fetched.tp.topic!r} partition "
                f"{fetched.tp.partition} offset {offset}; the record was released: delivered "
                "again, its delivery count one higher (the delivery count limit archives it)"
            )
        raise error

    def take_arrow(self, max_records: int, whole_batch: bool = False) -> dict[TopicPartition, Any]:
        taken = self._take_arrow(max_records, whole_batch)
        for tp, got in taken.items():
            self.ledger.delivered(tp, got.fetched.node, got.runs)
        return {tp: got.batch for tp, got in taken.items()}

    def take_arrow_unsettled(
        self, max_records: int, whole_batch: bool = False
    ) -> dict[TopicPartition, Taken]:
        """Up to ``max_records`` rows as Arrow batches, one per partition, taken from the
        buffer but not yet handed out: ``settle`` then says what was."""
        taken = self._take_arrow(max_records, whole_batch)
        self._unsettled = bool(taken)
        return taken

    def _take_arrow(self, max_records: int, whole_batch: bool) -> dict[TopicPartition, Taken]:
        out: dict[TopicPartition, Taken] = {}
        left = 0 if self._unsettled else max_records
        skipped: list[FetchedSharePartition] = []
        while self._fresh_head() and left > 0:
            fetched = self._buffer[0]
            if fetched.tp in out:  # one batch per partition per poll
                skipped.append(self._buffer.popleft())
                continue
            batch, runs, gaps = fetched.take_arrow(left, whole_batch)
            self.ledger.gaps(fetched.tp, fetched.node, gaps)
            if batch is not None:
                out[fetched.tp] = Taken(fetched, batch, runs)
                left -= batch.num_rows
            if not fetched:
                self._buffer.popleft()
        self._buffer.extendleft(reversed(skipped))
        return out

    def settle(
        self,
        taken: dict[TopicPartition, Taken],
        handed: dict[TopicPartition, int],
        release: TopicPartition | None = None,
    ) -> None:
        """What became of batches ``take_arrow_unsettled`` took: the first ``handed[tp]`` rows
        of each (none when absent) went to the application; the row after them is released
        for ``release`` (a record it was never given: delivered again, its delivery count one
        higher); the rest is given back, still acquired, to be handed out by the next polls in
        the order it came."""
        back: list[FetchedSharePartition] = []
        for tp, got in taken.items():
            fetched, offsets = got.fetched, got.batch.column("offset")
            row = handed.get(tp, 0)
            if row:
                last = offsets[row - 1].as_py()
                runs = [(lo, min(hi, last)) for lo, hi in got.runs if lo <= last]
                self.ledger.delivered(tp, fetched.node, runs)
            if tp == release:
                offset = offsets[row].as_py()
                self.ledger.release_unhanded(tp, fetched.node, [(offset, offset)])
                row += 1
            if row < got.batch.num_rows:
                fetched.give_back(offsets[row].as_py())
                if not any(waiting is fetched for waiting in self._buffer):
                    back.append(fetched)
        self._buffer.extendleft(reversed(back))
        self._unsettled = False
        if self._buffer:
            self.data_ready.set()  # a poll that waited meanwhile takes what is left

    def _fresh_head(self) -> bool:
        """Whether a fetched partition waits to be handed out. Those whose locks have run out
        while they waited are dropped unseen: the broker has given their records back to the
        group (handing them out would process them twice). Records that waited long make the
        next fetches smaller."""
        now = time.monotonic()
        while self._buffer:
            head = self._buffer[0]
            if now < head.expires_at:
                if now - head.fetched_at > head.lock_s * _WAITED_LONG:
                    self._fetch_size.stale()
                return True
            log.info(
                "%s: dropping %s-%s's records fetched %.1f s ago: their locks ran out",
                self._where(head.node),
                head.tp.topic,
                head.tp.partition,
                now - head.fetched_at,
            )
            self._fetch_size.stale()
            self._buffer.popleft()
        return False

    def poll_starting(self, limit: int) -> bool:
        """A poll starts (the last poll's records accepted, in implicit mode): ask now for
        what the broker can work on while the application works through this poll's
        records. Whether a request was asked for (the poll then gives the loop a turn for it
        to go out before it takes records). Not for polls of fewer than ``_EARLY_FOR`` records.

        A broker whose buffered records this poll will take most of (up to ``limit``) is
        fetched from now, if any of its partitions is free to acquire: one with nothing
        buffered and no acknowledgement pending (a broker does not acquire a partition's next
        records in the request that acknowledges its last ones, nor past its limit of locks
        per partition). Otherwise, acknowledgements for partitions whose fetched records were
        all handed out go now, in a ShareAcknowledge, so that the broker has stored them
        before the next fetch comes: unless nothing is buffered and no fetch is on its way,
        when the fetch the poll waits for carries them."""
        if limit < _EARLY_FOR:
            return False
        asked = False
        for node, wake in self._wake.items():
            session = self._sessions.get(node)
            if session is None or not session.is_open:
                continue
            waiting = 0
            held: set[TopicPartition] = set()
            for fetched in self._buffer:
                if fetched.node == node and fetched:
                    waiting += fetched.remaining()
                    held.add(fetched.tp)
            pending = set(self.ledger.pending_partitions(node))
            fetching = node in self._fetching
            if (
                waiting
                and not fetching
                and (waiting - limit) * 2 <= self._fetch_size.records
                and self._fetchable(node) - held - pending
            ):
                self._ahead.add(node)
                wake.set()
                asked = True
                continue
            done = pending - held
            if done and node not in self._acking and (waiting or fetching):
                acks = self.ledger.take(node, renewals=False, only=done)
                if acks:
                    self._acking.add(node)
                    self._spawn(self._acknowledge_ahead(node, acks))
                    asked = True
        return asked

    async def _acknowledge_ahead(
        self, node: int, acks: dict[TopicPartition, list[AcknowledgementBatch]]
    ) -> None:
        try:
            await self._acknowledge(node, acks, renewals=False)
        finally:
            self._acking.discard(node)

    def _stocked(self, node: int) -> bool:
        """Whether enough of ``node``'s records wait to be handed out that its next fetch can
        wait: half a fetch. (The next fetch goes while the application works through the other
        half, so that a round trip does not hold it up.)"""
        waiting = 0
        for fetched in self._buffer:
            if fetched.node == node:
                waiting += fetched.remaining()
        return waiting * 2 > self._fetch_size.records

    def starved(self) -> None:
        """A poll found nothing to hand out and waits: fetching is what holds it up."""
        self._fetch_size.starved()

    def wake(self, node: int | None = None) -> None:
        for n, wake in self._wake.items():
            if node is None or n == node:
                wake.set()

    # -- the fetch routine ---------------------------------------------------------------------

    def _fetchable(self, node: int) -> set[TopicPartition]:
        leader = self._client.cluster.leader_for_partition
        return {tp for tp in self._member.assignment if leader(tp) == node}

    async def _routine(self, node: int) -> None:
        session = self._sessions[node]
        wake = self._wake[node]
        backoff = self._config.retry_backoff_ms / 1000
        while not self._closing and self._failure is None:
            wanted = self._fetchable(node)
            try:
                if session.is_open and self.ledger.has_renewals(node):
                    acks = self.ledger.take(node, renewals=True)
                    await self._acknowledge(node, acks, renewals=True)
                    continue
                stray = self._stray_acks(node, wanted)
                if stray and session.is_open:
                    acks = self.ledger.take(node, renewals=False, only=stray)
                    answered = await self._acknowledge(node, acks, renewals=False)
                    if not wanted:  # no fetch will come for a commit waiting on one
                        self._settle_riders(node, answered)
                    continue
                if stray:
                    self._report(
                        self._fail_pending(
                            node,
                            Errors.ShareSessionNotFoundError(
                                f"{self._where(node)}: no share session to acknowledge through"
                            ),
                            only=stray,
                        )
                    )
                riders = bool(self._riders.get(node))
                if riders and not wanted:
                    self._settle_riders(node, {})
                    riders = False
                ahead = node in self._ahead
                if wanted and ((node in self._want and not self._stocked(node)) or ahead or riders):
                    self._want.discard(node)
                    self._ahead.discard(node)
                    got = await self._share_fetch(node, session, wanted)
                    if not got and self.polls_waiting:
                        self._want.add(node)  # a poll is still waiting: fetch again
                    continue
            except Errors.KafkaError as exc:
                log.info("%s: %s", self._where(node), exc)
                if exc.invalid_metadata:
                    self._spawn(self._client.refresh_metadata())
                if self.polls_waiting:
                    self._want.add(node)
                await asyncio.sleep(backoff)
                continue
            wake.clear()
            await wake.wait()
        # Closing or failed: commits waiting on this routine's next fetch get no answer from it.
        self._settle_riders(node, {})

    def _settle_riders(self, node: int, results: AckResults) -> None:
        """Answer the commits waiting for ``node``'s next ShareFetch with ``results``."""
        for rider in self._riders.pop(node, []):
            if not rider.done():
                rider.set_result(results)

    def _stray_acks(self, node: int, wanted: set[TopicPartition]) -> set[TopicPartition]:
        """Partitions with acknowledgements pending for ``node`` that no ShareFetch will carry."""
        return {tp for tp in self.ledger.pending_partitions(node) if tp not in wanted}

    async def _share_fetch(
        self, node: int, session: ShareSession, wanted: set[TopicPartition]
    ) -> bool:
        """One ShareFetch; whether it brought records."""
        riders: list[asyncio.Future[AckResults]] = []
        results: AckResults = {}
        carrying = asyncio.get_running_loop().create_future()
        self._fetching.add(node)
        try:
            async with session.lock:
                riders = self._riders.pop(node, [])
                return await self._share_fetch_locked(
                    node, session, wanted, results, carrying, commit=bool(riders)
                )
        finally:
            self._fetching.discard(node)
            self._carrying.discard(carrying)
            for rider in [*riders, carrying]:
                if not rider.done():
                    rider.set_result(results)

    async def _share_fetch_locked(
        self,
        node: int,
        session: ShareSession,
        wanted: set[TopicPartition],
        results: AckResults,
        carrying: asyncio.Future[AckResults],
        *,
        commit: bool,
    ) -> bool:
        """The ShareFetch itself, under the session's lock: whether it brought records.
        ``results`` gets the broker's answers to the acknowledgements it carried (or the
        error that stopped them)."""
        config = self._config
        listed, forgotten = session.changes(wanted)
        acks = self.ledger.take(node, renewals=False, only=wanted)
        if acks and not session.is_open:
            # A ShareFetch that opens a session (epoch 0) may not carry acknowledgements: the
            # broker refuses the whole request (INVALID_REQUEST). The session they belong to
            # is gone (a lost connection, a session the broker dropped), and the broker
            # releases what it had acquired, so those records come again with a higher
            # delivery count; their acknowledgements fail here, and the fetch goes without.
            # (Reported with the rest of `results` once the fetch is answered.)
            results.update(
                _failed(
                    acks,
                    Errors.ShareSessionNotFoundError(
                        f"{self._where(node)}: the share session these records were acquired "
                        "in has ended; they will be delivered again"
                    ),
                )
            )
            acks = {}
        if acks:
            self._carrying.add(carrying)
        listed |= acks.keys()
        body: ShareFetchRequest = {
            "group_id": self._member.group_id,
            "member_id": self._member.member_id,
            "share_session_epoch": session.epoch,
            # Only a fetch a poll waits for waits for records: one fetched ahead, or carrying a
            # commit, answers at once (a broker serves a connection's requests in turn, so a
            # fetch waiting in the broker would hold back the acknowledgements after it).
            "max_wait_ms": config.fetch_max_wait_ms if self.polls_waiting and not commit else 0,
            "min_bytes": config.fetch_min_bytes,
            "max_bytes": config.fetch_max_bytes,
            "max_records": self._fetch_size.records,
            "batch_size": config.max_poll_records,
            "share_acquire_mode": ACQUIRE_MODES[config.share_acquire_mode],
            "is_renew_ack": False,
            "topics": self._topics(listed, acks),
            "forgotten_topics_data": [
                {"topic_id": tid, "partitions": [p for _, p in parts]}
                for tid, parts in self._by_topic_id(forgotten).items()
            ],
        }
        try:
            response = await self._client.send(node, Api.SHARE_FETCH, body)
        except Errors.KafkaError as exc:
            session.reset()
            results.update(_failed(acks, exc))
            self._report(results)
            raise
        except asyncio.CancelledError:
            session.reset()  # whether the broker took the epoch is unknown
            raise
        code = response["error_code"]
        if code:
            error = self._request_error(node, "ShareFetch", code, response["error_message"])
            results.update(_failed(acks, error))
            self._report(results)
            raise error
        session.answered(listed, forgotten)
        lock_ms = response["acquisition_lock_timeout_ms"]
        if lock_ms > 0:
            self.acquisition_lock_timeout_ms = lock_ms
        # Locks run from the broker's acquisition, a little before the answer came.
        lock_s = (self.acquisition_lock_timeout_ms or _DEFAULT_LOCK_MS) / 1000
        fetched_at = time.monotonic()
        acquired_count = 0
        got = False
        for tp, part in self._answered(response["responses"]):
            if tp in acks:
                results[tp] = (
                    acks.pop(tp),
                    self._partition_error(
                        part["acknowledge_error_code"], part["acknowledge_error_message"], tp
                    ),
                )
            if part["error_code"]:
                self._on_partition_error(tp, part["error_code"], part["error_message"])
                continue
            acquired = part["acquired_records"]
            records = part["records"]
            if acquired and records is not None:
                fetched = FetchedSharePartition(tp, node, records, acquired, self._decoding)
                fetched.fetched_at = fetched_at
                fetched.lock_s = lock_s
                fetched.expires_at = fetched_at + lock_s * _LOCK_MARGIN
                acquired_count += fetched.acquired_count
                self._buffer.append(fetched)
                got = True
        for tp, batches in acks.items():  # the broker said nothing of them
            results[tp] = (batches, None)
        self._report(results)
        self._fetch_size.answered(acquired_count)
        if got:
            self.data_ready.set()
        return got

    # -- acknowledging -------------------------------------------------------------------------

    async def commit(self) -> AckResults:
        """Send every pending acknowledgement now; the broker's answers, per partition.

        A broker whose fetch routine is idle with nothing of it buffered gets them on a
        ShareFetch that does not wait for records (one round trip that also fetches the next
        records); otherwise in a ShareAcknowledge. RENEWs always go alone."""
        # Acknowledgements already on their way count as sent by this commit too.
        waits: list[asyncio.Future[AckResults]] = list(self._carrying)
        for node in self.ledger.pending_nodes():
            acks = self.ledger.take(node, renewals=True)
            if acks:
                waits.append(self._spawn(self._acknowledge(node, acks, renewals=True)))
            if not self.ledger.has_pending(node):
                continue
            fetchable = self._fetchable(node)
            session = self._sessions.get(node)
            idle = (
                node in self._routines
                and node not in self._fetching
                and session is not None
                and session.is_open
                and not self._stocked(node)
            )
            if idle and set(self.ledger.pending_partitions(node)) <= fetchable:
                rider: asyncio.Future[AckResults] = asyncio.get_running_loop().create_future()
                self._riders.setdefault(node, []).append(rider)
                self.wake(node)
                waits.append(rider)
                continue
            # Taken now, so that no fetch carries them off while the request waits its turn.
            acks = self.ledger.take(node, renewals=False)
            waits.append(self._spawn(self._acknowledge(node, acks, renewals=False)))
        if not waits:
            return {}
        await asyncio.wait(waits)  # a cancelled commit stops waiting; the requests go on
        results: AckResults = {}
        for wait in waits:
            for tp, (offsets, error) in wait.result().items():
                old = results.get(tp)
                if old is None:
                    results[tp] = (offsets, error)
                else:
                    results[tp] = (old[0] + offsets, old[1] or error)
        return results

    async def _acknowledge(
        self,
        node: int,
        acks: dict[TopicPartition, list[AcknowledgementBatch]],
        *,
        renewals: bool,
        close: bool = False,
    ) -> AckResults:
        """One ShareAcknowledge of ``acks`` (taken from the ledger by the caller) to ``node``;
        with ``close``, the one that closes the session. The callback hears the outcome here,
        whether or not anyone still waits for it."""
        carrying = asyncio.get_running_loop().create_future()
        self._carrying.add(carrying)
        results: AckResults = {}
        try:
            results = await self._send_acks(node, acks, renewals=renewals, close=close)
            self._report(results)
            return results
        finally:
            self._carrying.discard(carrying)
            carrying.set_result(results)

    async def _send_acks(
        self,
        node: int,
        acks: dict[TopicPartition, list[AcknowledgementBatch]],
        *,
        renewals: bool,
        close: bool,
    ) -> AckResults:
        session = self._sessions.get(node)
        if session is None:
            return _failed(acks, Errors.ShareSessionNotFoundError(self._where(node)))
        async with session.lock:
            if not acks and not close:
                return {}
            if not session.is_open:
                return _failed(
                    acks,
                    Errors.ShareSessionNotFoundError(
                        f"{self._where(node)}: no share session to acknowledge through"
                    ),
                )
            epoch = CLOSE_EPOCH if close else session.epoch
            if renewals and self._version(node, Api.SHARE_ACKNOWLEDGE) < 2:
                return _failed(
                    acks,
                    Errors.UnsupportedVersionError(
                        f"{self._where(node)}: RENEW needs ShareAcknowledge v2 (Kafka 4.2)"
                    ),
                )
            ack_body: ShareAcknowledgeRequest = {
                "group_id": self._member.group_id,
                "member_id": self._member.member_id,
                "share_session_epoch": epoch,
                "is_renew_ack": renewals,
                "topics": self._topics(set(acks), acks),
            }
            try:
                response = await self._client.send(node, Api.SHARE_ACKNOWLEDGE, ack_body)
            except Errors.KafkaError as exc:
                session.reset()
                return _failed(acks, exc)
            except asyncio.CancelledError:
                session.reset()
                raise
            code = response["error_code"]
            if code:
                error = self._request_error(
                    node, "ShareAcknowledge", code, response["error_message"]
                )
                if close:
                    session.reset()
                return _failed(acks, error)
            if close:
                session.reset()
            else:
                session.advance()
        results: AckResults = {}
        for tp, part in self._answered(response["responses"]):
            if tp in acks:
                refused = self._partition_error(part["error_code"], part["error_message"], tp)
                if refused is not None and refused.invalid_metadata:
                    self._spawn(self._client.refresh_metadata())
                results[tp] = (acks.pop(tp), refused)
        for tp, batches in acks.items():
            results[tp] = (batches, None)
        return results

    def _fail_pending(
        self, node: int, error: Errors.KafkaError, only: Iterable[TopicPartition] | None = None
    ) -> AckResults:
        results = _failed(self.ledger.take(node, renewals=True, only=only), error)
        for tp, (offsets, err) in _failed(
            self.ledger.take(node, renewals=False, only=only), error
        ).items():
            results[tp] = (results.get(tp, ([], err))[0] + offsets, err)
        return results

    def _report(self, results: AckResults) -> None:
        """Tell the acknowledgement-commit callback, once per distinct outcome."""
        callback = self.callback
        if callback is None or not results:
            return
        groups: dict[int, tuple[Errors.KafkaError | None, dict[TopicPartition, set[int]]]] = {}
        for tp, (batches, error) in results.items():
            offsets = answered_offsets(batches)
            if offsets:
                groups.setdefault(id(error), (error, {}))[1][tp] = offsets
        for error, answered in groups.values():
            try:
                callback(answered, error)
            except Exception:
                log.exception("the acknowledgement commit callback raised")

    # -- helpers -------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.ensure_future(coro)
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)
        task.add_done_callback(_retrieve)
        return task

    def _where(self, node: int) -> str:
        return (
            f"share group {self._member.group_id!r}, member {self._member.member_id}, node {node}"
        )

    def _version(self, node: int, api: Api[Any, Any]) -> int:
        conn = self._client.connections.get(node)
        return 0 if conn is None else conn.version_for(key_of(api))

    def _request_error(
        self, node: int, what: str, code: int, message: str | None
    ) -> Errors.KafkaError:
        cls = Errors.for_code(code)
        error = cls(f"{what} to {self._where(node)}: {message or cls.__name__}")
        session = self._sessions.get(node)
        if session is not None and (cls in _SESSION_LOST or cls is Errors.UnknownMemberIdError):
            session.reset()
        elif not cls.retriable and not cls.invalid_metadata:
            self._failure = error
            self.data_ready.set()
        return error

    def _partition_error(
        self, code: int, message: str | None, tp: TopicPartition
    ) -> Errors.KafkaError | None:
        if not code:
            return None
        cls = Errors.for_code(code)
        return cls(
            f"share group {self._member.group_id!r}, {tp.topic}-{tp.partition}: "
            f"{message or cls.__name__}"
        )

    def _on_partition_error(self, tp: TopicPartition, code: int, message: str | None) -> None:
        error = self._partition_error(code, message, tp)
        assert error is not None
        if error.invalid_metadata or error.retriable:
            log.info("%s; refreshing metadata", error)
            self._spawn(self._client.refresh_metadata())
            return
        self._errors.append(error)
        self.data_ready.set()

    def _answered(self, topics: list[_TopicResponse[_P]]) -> Iterator[tuple[TopicPartition, _P]]:
        """Each partition of a response's topics, named; topics whose id the metadata does not
        name (any more) are passed over."""
        names = self._names_by_id()
        for topic in topics:
            name = names.get(bytes(topic["topic_id"]))
            if name is None:
                continue
            for part in topic["partitions"]:
                yield TopicPartition(name, part["partition_index"]), part

    def _names_by_id(self) -> dict[bytes, str]:
        out = {}
        for topic in {tp.topic for tp in self._member.assignment} | self._member.topics:
            info = self._client.cluster.topic_info(topic)
            if info is not None and info.topic_id is not None:
                out[info.topic_id.bytes] = topic
        return out

    def _by_topic_id(self, tps: Iterable[TopicPartition]) -> dict[bytes, list[TopicPartition]]:
        out: dict[bytes, list[TopicPartition]] = {}
        for tp in sorted(tps):
            info = self._client.cluster.topic_info(tp.topic)
            if info is None or info.topic_id is None:
                continue
            out.setdefault(info.topic_id.bytes, []).append(tp)
        return out

    def _topics(
        self,
        listed: Iterable[TopicPartition],
        acks: dict[TopicPartition, list[AcknowledgementBatch]],
    ) -> list[ShareFetchTopic]:
        return [
            {
                "topic_id": tid,
                "partitions": [
                    {
                        "partition_index": tp.partition,
                        "acknowledgement_batches": acks.get(tp, []),
                    }
                    for tp in tps
                ],
            }
            for tid, tps in self._by_topic_id(listed).items()
        ]


def answered_offsets(batches: list[AcknowledgementBatch]) -> set[int]:
    """The offsets the batches answer for (gaps left out)."""
    out: set[int] = set()
    for batch in batches:
        types = batch["acknowledge_types"]
        first, last = batch["first_offset"], batch["last_offset"]
        if len(types) == 1:
            if types[0] != GAP:
                out.update(range(first, last + 1))
            continue
        out.update(o for o, t in zip(range(first, last + 1), types, strict=False) if t != GAP)
    return out


def _failed(
    acks: dict[TopicPartition, list[AcknowledgementBatch]], error: Errors.KafkaError
) -> AckResults:
    return {tp: (batches, error) for tp, batches in acks.items()}


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()
