"""The fetched data a consumer has not handed out yet: per partition, a queue of fetched
responses, each kept as the raw ``records`` bytes and decoded by the Rust core only when the
application takes it, into ``ConsumerRecord`` lists or Arrow record batches, whichever form
(``output_form``) it asks for.

Taking moves the partition's position: past the last record handed out, and past control
batches and aborted records once a whole response is taken. A drain that does not advance
(``poll(update_offsets=False)``) hands out copies and leaves the position and the data where
they were, so the next poll hands out the same records. Data fetched for a partition's
previous assignment (a different ``TopicPartitionState``) or before a seek is never handed out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .. import _native
from .. import errors as Errors
from ..config import ConsumerConfig
from ..structs import TopicPartition
from .output_form import OutputForm
from .subscription_state import SubscriptionState, TopicPartitionState

__all__ = ["DRAIN_SOFT_BYTES", "DRAIN_SOFT_RECORDS", "Buffered", "FetchBuffer"]

T = TypeVar("T")

DRAIN_SOFT_RECORDS = 16384
DRAIN_SOFT_BYTES = 1 << 20
"""A ``getmany`` without ``max_records`` stops taking further partitions once it holds this many
records or this many fetched bytes (whole partition responses, at least one): a smaller burst of
objects stays in the allocator's caches, and the peak memory of a poll stays bounded when many
partitions have data buffered. An explicit ``max_records`` is honoured as given.

1 MiB (one default-sized partition response) rather than 4: a poll's values and records then
fit in a core's L2 cache when the next poll reuses their memory, which measured faster (W2 in
benches/README.md)."""


class Buffered:
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
        self.form: OutputForm[Any] | None = None
        self.items: Any = None
        self.taken = 0
        self.next_offset: int | None = None


class FetchBuffer:
    """Fetched responses per partition, in fetch order; partitions in the order they are
    served (one partly taken goes to the back: fairness)."""

    def __init__(
        self,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        *,
        on_drop: Callable[[TopicPartition], None],
        on_taken: Callable[[], None] | None = None,
        on_consumed: Callable[[int, int], None] | None = None,
    ) -> None:
        self._subs = subscriptions
        # The options each take reads, as attributes.
        self._check_crcs = config.check_crcs
        self._read_committed = config.read_committed
        self._deserializers = {
            "key_deserializer": config.key_deserializer,
            "value_deserializer": config.value_deserializer,
        }
        self._on_drop = on_drop
        self._on_taken = on_taken
        self._on_consumed = on_consumed
        """Told (records, bytes) of each poll that hands out records."""
        self._buffers: dict[TopicPartition, deque[Buffered]] = {}
        self.run: _native.RecordRun | None = None
        """The records handed out one at a time next (``_serve_one``): the consumer's
        ``async for`` and ``getone`` take from it directly, it is their per-record path."""
        self._one_tp: TopicPartition | None = None

    def add(self, buf: Buffered) -> None:
        self._buffers.setdefault(buf.tp, deque()).append(buf)

    def queued(self, tp: TopicPartition) -> int:
        """How many fetched responses of ``tp`` wait."""
        queue = self._buffers.get(tp)
        return len(queue) if queue else 0

    def forget(self, tp: TopicPartition) -> None:
        """Drop ``tp``'s data without telling anyone (the caller resets what it needs)."""
        self._buffers.pop(tp, None)
        if self._one_tp == tp:
            self._serve_one(None)

    def clear(self) -> None:
        self._buffers.clear()
        self._serve_one(None)

    def stale(self) -> list[TopicPartition]:
        """Partitions whose data belongs to an assignment that is over: no longer assigned,
        or assigned anew since it was fetched."""
        return [
            tp
            for tp, queue in self._buffers.items()
            if not self._subs.is_assigned(tp) or queue[0].state is not self._subs.state(tp)
        ]

    def _on_drop_taken(self) -> None:
        """A whole response was taken: room for the fetch loop to fetch the partition again."""
        if self._on_taken is not None:
            self._on_taken()

    def has_buffered(self, partitions: Iterable[TopicPartition] | None = None) -> bool:
        """Whether a poll of ``partitions`` (all) would find records to take."""
        wanted = None if partitions is None else set(partitions)
        return any(
            bufs
            and (wanted is None or tp in wanted)
            and self._subs.is_assigned(tp)
            and not self._subs.state(tp).held
            for tp, bufs in self._buffers.items()
        )

    def drain(
        self,
        partitions: set[TopicPartition] | None,
        max_records: int | None,
        form: OutputForm[T],
        *,
        advance: bool = True,
    ) -> dict[TopicPartition, T]:
        """Take up to ``max_records`` buffered records in ``form`` (lists of
        ``ConsumerRecord``, or ``pyarrow.RecordBatch``es), advancing positions.

        With ``advance`` False the records are handed out and stay buffered, positions
        unmoved: the next drain hands out the same records (kafka-python's
        ``update_offsets=False``). A response with no record to hand out (control batches,
        aborted data) is still passed, as kafka-python's does: nothing would ever move past it."""
        out: dict[TopicPartition, T] = {}
        one = max_records == 1 and form.one_at_a_time and advance
        self._serve_one(None)
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
                self.drop(tp)
                continue
            st = self._subs.state(tp)
            if st.held:
                continue
            taken: T | None = None
            while queue and budget != 0:
                buf = queue[0]
                if (
                    st.position is None
                    or buf.state is not st
                    or (buf.taken == 0 and buf.start > st.position)
                    or (buf.taken == 0 and buf.end <= st.position)
                ):
                    self.drop(tp)  # seeked away: everything buffered is stale
                    break
                size = len(buf.raw)
                took = self._take(buf, st, budget, form, advance)
                chunk, count, total = took
                if one and chunk is not None and buf.next_offset is None:
                    self._serve_one(buf)  # getone: the next records of this response
                if chunk is not None:
                    taken = chunk if taken is None else form.concat(taken, chunk)
                    records_taken += count
                    bytes_taken += size * count // total
                    if budget > 0:
                        budget -= count
                    if not advance:
                        break  # the position did not move: nothing after these is next
                if buf.next_offset is None:
                    break
                queue.popleft()
                self._on_drop_taken()
                if taken is not None:
                    # One fetched response per partition per poll, as aiokafka hands out: a
                    # smaller burst of objects is cheaper to allocate and free.
                    break
            if not queue:
                self._buffers.pop(tp, None)
            elif taken is not None and advance and self._one_tp != tp:
                # Partly taken: let other partitions go first next time (fairness). Not while
                # ``run`` serves the rest of the response: the next poll takes its last record
                # before any other partition's, so that one response is decoded at a time. (A
                # response left with one record while others are decoded keeps its records
                # alive until then: the allocator then takes fresh memory for every response
                # and gives it back when each is finished, a page fault per 4 KiB.)
                self._buffers[tp] = self._buffers.pop(tp)
            if taken is not None:
                out[tp] = taken
        if records_taken and advance and self._on_consumed is not None:
            # Records handed out without advancing are counted when they are taken for good.
            self._on_consumed(records_taken, bytes_taken)
        return out

    def take_one(self, partitions: set[TopicPartition] | None) -> Any:
        """The next record of ``run``, if it has one and it is of ``partitions`` (None: any);
        otherwise None, and ``drain`` decides (decoding, stale data, the position after a
        whole response, fairness between partitions)."""
        run = self.run
        if run is None or (partitions is not None and self._one_tp not in partitions):
            return None
        return run.take()

    def stop_runs(self) -> None:
        """Hand out nothing more through ``run`` (the consumer is stopping)."""
        self._serve_one(None)

    def _serve_one(self, buf: Buffered | None) -> None:
        """``run`` serves the rest of ``buf`` from now on (None: nothing)."""
        run = self.run
        self.run = None
        if run is not None:
            run.close()  # it leaves buf.taken right and counts what it handed out
        self._one_tp = None if buf is None else buf.tp
        if buf is not None:
            # What must not change is read now, not when the run is first asked for a record:
            # the run hands out records while the position is the one it left and the
            # subscription state's generation is where it was (assignment, pause, resume, seek,
            # reset and revocation move it); the response's last record is left to ``drain``.
            self.run = _native.RecordRun(
                buf, self._subs.generation, len(buf.raw), self._on_consumed
            )

    def drop(self, tp: TopicPartition) -> None:
        """Forget what was fetched for ``tp`` and tell the fetch loop."""
        self._buffers.pop(tp, None)
        if self._one_tp == tp:
            self._serve_one(None)
        self._on_drop(tp)

    def _decode(self, buf: Buffered, st: TopicPartitionState, form: OutputForm[Any]) -> None:
        assert st.position is not None
        common: dict[str, Any] = {
            "check_crcs": self._check_crcs,
            "read_committed": self._read_committed,
            "aborted_transactions": buf.aborted,
            "start_offset": st.position,
        }
        tp = buf.tp
        try:
            part, items = form.decode(buf.raw, tp, common, self._deserializers)
        except Errors.CorruptRecordException as exc:
            bad = getattr(exc, "offset", None)
            cut = None if bad is None else _native.batch_position(buf.raw, bad)
            if not cut or bad is None or bad <= st.position:
                # Nothing good before it: the application sees the error and the position
                # stays on the bad batch (it may seek past it).
                self.drop(tp)
                raise
            # Hand out the whole batches before the bad one first; the next fetch starts at
            # the bad batch and raises there.
            buf.raw = buf.raw[:cut]
            buf.end = bad
            self._decode(buf, st, form)
            return
        except BaseException:
            self.drop(tp)
            raise
        buf.form = form
        buf.items = items
        buf.taken = 0
        buf.start = st.position
        buf.next_offset = None
        buf.end = part.next_offset if part.next_offset is not None else buf.end

    def _take(
        self,
        buf: Buffered,
        st: TopicPartitionState,
        budget: int,
        form: OutputForm[T],
        advance: bool = True,
    ) -> tuple[T | None, int, int]:
        """Up to ``budget`` (-1: all) of ``buf``'s records in ``form``: (chunk or None, how many,
        how many records ``buf`` has in all). Without ``advance``, records are handed out
        (a list is a copy: the application may change it) and nothing moves."""
        if buf.form != form:
            self._decode(buf, st, form)
        items: T = buf.items
        total = form.count(items)
        n = total - buf.taken if budget < 0 else min(budget, total - buf.taken)
        start = buf.taken
        whole = not start and n == total and advance
        chunk = items if whole else form.chunk(items, start, n)
        last = form.last_offset(chunk)
        if n and not advance:
            return chunk, n, total
        buf.taken += n
        if buf.taken >= total:
            buf.next_offset = st.consumed_response(buf.end, buf.end_epoch, last)
        elif last is not None:
            st.consumed_through(last)
        return (chunk if n else None), n, total
