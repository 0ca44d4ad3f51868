"""``RecordFuture``, what ``send()`` returns: an asyncio-compatible future resolved through its
batch (``BatchRecords``). Everything asyncio does with an ``asyncio.Future`` (await, callbacks,
cancellation, gather/wait/wait_for/shield) must work the same, under asyncio and uvloop."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import time
import traceback
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.partitioner import partition_for_key
from ferrokafka.records import decode_records
from ferrokafka.structs import RecordMetadata, TopicPartition

TP = TopicPartition("t", 3)


def batch(size: int = 16384) -> _native.BatchRecords:
    records = _native.BatchRecords(size)
    records.set_loop(asyncio.get_running_loop())
    return records


def send(records: _native.BatchRecords, value: bytes = b"v") -> _native.RecordFuture:
    future = records.append_value(value)
    assert future is not None
    return future


async def test_await_gives_the_records_metadata_from_its_batch() -> None:
    records = batch()
    before = int(time.time() * 1000)
    futures = [send(records, b"x" * i) for i in range(3)]
    ts = records.add(1234, b"k", b"v", [("h", b"1")])
    assert ts == 1234
    futures.append(records.last_future(ts))
    assert not any(f.done() for f in futures)
    with pytest.raises(asyncio.InvalidStateError):
        futures[0].result()
    records.resolve(TP, 100, -1, 7)
    got = [await f for f in futures]
    assert [md.offset for md in got] == [100, 101, 102, 103]
    assert all(type(md) is RecordMetadata for md in got)
    assert got[3] == RecordMetadata("t", 3, TP, 103, 1234, 0, 7)
    assert before <= got[0].timestamp <= int(time.time() * 1000)
    assert futures[1].exception() is None and futures[1].result() == got[1]


async def test_the_metadata_is_a_plain_record_metadata_the_collector_need_not_track() -> None:
    # Built in the extension without RecordMetadata's constructor: it must be exactly what the
    # constructor gives, and (holding only strings, ints and a TopicPartition) untracked, so
    # that thousands held by a gather cost the garbage collector nothing.
    records = batch()
    futures = [send(records) for _ in range(2)]
    records.resolve(TP, 5, 1700000000000, 2)
    got = [f.result() for f in futures]
    assert got[1] == RecordMetadata("t", 3, TP, 6, 1700000000000, 1, 2)
    assert type(got[1]) is RecordMetadata and len(got[1]) == 7
    assert got[1]._replace(offset=9).offset == 9 and got[1]._asdict()["topic_partition"] == TP
    assert hash(got[1]) == hash(RecordMetadata("t", 3, TP, 6, 1700000000000, 1, 2))
    assert not any(gc.is_tracked(md) for md in got)
    # Something that could be in a cycle keeps it tracked, as the collector would.
    odd = _native.BatchRecords(16384)
    odd.set_loop(asyncio.get_running_loop())
    future = send(odd)
    odd.resolve(TopicPartition("t", [3]), 5, -1, None)  # type: ignore[arg-type]
    assert gc.is_tracked(future.result())
    del got
    gc.collect()


async def test_log_append_time_and_unknown_offsets() -> None:
    records = batch()
    f = send(records)
    records.resolve(TP, -1, 5555, None)
    assert await f == RecordMetadata("t", 3, TP, -1, 5555, 1, None)


async def test_acks_zero_resolves_with_none() -> None:
    records = batch()
    f = send(records)
    records.resolve_noack()
    assert f.done() and await f is None


async def test_callbacks_run_on_a_later_loop_turn_in_order_with_the_future() -> None:
    records = batch()
    a, b = send(records), send(records)
    seen: list[tuple[str, Any]] = []
    a.add_done_callback(lambda f: seen.append(("a1", f)))
    b.add_done_callback(lambda f: seen.append(("b", f)))
    a.add_done_callback(lambda f: seen.append(("a2", f)))
    records.resolve(TP, 0, -1, None)
    assert seen == []  # never synchronously, as asyncio.Future
    await asyncio.sleep(0)
    assert seen == [("a1", a), ("a2", a), ("b", b)]
    # On a done future: scheduled with call_soon, still not synchronously.
    a.add_done_callback(lambda f: seen.append(("late", f)))
    assert len(seen) == 3
    await asyncio.sleep(0)
    assert seen[-1] == ("late", a)


async def test_callbacks_added_after_the_batch_settled_run_once_each_on_a_later_turn() -> None:
    """Late callbacks (gather over futures whose batch came back already) are run from one
    loop callback per batch: not synchronously, each once, in the order added, each in its
    context, and a callback added by a callback runs too."""
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outside")
    records = batch()
    futures = [send(records) for _ in range(5)]
    records.resolve(TP, 7, -1, None)
    await asyncio.sleep(0)
    seen: list[tuple[int, str]] = []
    ctx = contextvars.copy_context()
    ctx.run(var.set, "inside")
    for i, f in enumerate(futures):
        f.add_done_callback(lambda f, i=i: seen.append((i, var.get())), context=ctx)
    futures[0].add_done_callback(
        lambda f: f.add_done_callback(lambda _: seen.append((99, var.get())))
    )
    assert seen == []
    await asyncio.sleep(0)
    assert seen == [(i, "inside") for i in range(5)]
    await asyncio.sleep(0)
    assert seen[5:] == [(99, "outside")]
    await asyncio.sleep(0)
    assert len(seen) == 6
    assert [f.result().offset for f in futures] == [7, 8, 9, 10, 11]
    assert await asyncio.gather(*futures) == [f.result() for f in futures]


async def test_remove_done_callback_counts_and_removes_every_registration() -> None:
    records = batch()
    f = send(records)
    calls: list[int] = []

    def cb(_: Any) -> None:
        calls.append(1)

    f.add_done_callback(cb)
    f.add_done_callback(cb)
    assert f.remove_done_callback(cb) == 2
    assert f.remove_done_callback(cb) == 0
    records.resolve(TP, 0, -1, None)
    await asyncio.sleep(0)
    assert calls == []


async def test_callbacks_run_in_their_context() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outside")
    records = batch()
    f = send(records)
    ctx = contextvars.copy_context()
    ctx.run(var.set, "inside")
    seen: list[str] = []
    f.add_done_callback(lambda _: seen.append(var.get()), context=ctx)
    records.resolve(TP, 0, -1, None)
    await asyncio.sleep(0)
    assert seen == ["inside"]


async def test_a_failing_callback_goes_to_the_exception_handler_and_the_rest_still_run() -> None:
    loop = asyncio.get_running_loop()
    handled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: handled.append(context))
    records = batch()
    f, g = send(records), send(records)
    ran: list[str] = []

    def boom(_: Any) -> None:
        raise ZeroDivisionError("in a callback")

    f.add_done_callback(boom)
    f.add_done_callback(lambda _: ran.append("f"))
    g.add_done_callback(lambda _: ran.append("g"))
    records.resolve(TP, 0, -1, None)
    await asyncio.sleep(0)
    assert ran == ["f", "g"]
    assert len(handled) == 1
    assert isinstance(handled[0]["exception"], ZeroDivisionError)
    assert handled[0]["future"] is f
    assert "boom" in handled[0]["message"]


async def test_a_failed_batch_gives_each_future_its_own_copy_of_the_error() -> None:
    records = batch()
    f, g = send(records), send(records)
    error = Errors.NotLeaderForPartitionError("t[3]: not the leader")
    records.fail(error)
    assert f.done() and not f.cancelled()
    ef, eg = f.exception(), g.exception()
    assert isinstance(ef, Errors.NotLeaderForPartitionError) and str(ef) == str(error)
    assert ef is f.exception() and ef is not eg
    depths = []
    for _ in range(3):
        try:
            f.result()
        except Errors.NotLeaderForPartitionError as exc:
            assert type(exc) is type(ef) and exc.args == ef.args
            depths.append(len(traceback.extract_tb(exc.__traceback__)))
    assert depths[0] == depths[1] == depths[2]  # a fresh copy each time: no traceback piles up
    with pytest.raises(Errors.NotLeaderForPartitionError):
        await g
    # Settled once: a later outcome changes nothing.
    records.resolve(TP, 0, -1, None)
    assert g.exception() is eg


async def test_python_code_run_by_a_future_may_call_the_future_back() -> None:
    # Copying the batch's error and comparing callbacks run Python code; the future must
    # answer calls from it (nothing of it is held meanwhile), and the outcome is unchanged.
    records = batch()
    f = send(records)
    seen: list[object] = []

    class Reentrant(Errors.KafkaError):
        def __copy__(self) -> Reentrant:
            seen.append((f.done(), f.cancelled(), f.get_loop() is asyncio.get_running_loop()))
            return Reentrant(*self.args)

    class Key:
        def __eq__(self, other: object) -> bool:
            f.add_done_callback(kept)  # registered while remove_done_callback compares
            return other is self

        __hash__ = object.__hash__

    def kept(_: Any) -> None:
        seen.append("kept ran")

    key = Key()
    f.add_done_callback(key)  # type: ignore[arg-type]
    assert f.remove_done_callback(key) == 1  # type: ignore[arg-type]
    records.fail(Reentrant("t[3]: failed"))
    error = f.exception()
    assert isinstance(error, Reentrant) and f.exception() is error
    assert seen == [(True, False, True)]
    await asyncio.sleep(0)
    assert seen == [(True, False, True), "kept ran"]


async def test_cancel_runs_callbacks_and_the_batch_outcome_no_longer_applies() -> None:
    records = batch()
    f, g = send(records), send(records)
    seen: list[bool] = []
    f.add_done_callback(lambda fut: seen.append(fut.cancelled()))
    assert f.cancel("stop") is True
    assert f.done() and f.cancelled()
    await asyncio.sleep(0)
    assert seen == [True]
    with pytest.raises(asyncio.CancelledError, match="stop"):
        f.result()
    with pytest.raises(asyncio.CancelledError):
        f.exception()
    records.resolve(TP, 10, -1, None)
    assert f.cancelled() and g.cancel() is False
    assert (await g).offset == 11
    await asyncio.sleep(0)
    assert seen == [True]


async def test_asyncio_sees_a_future() -> None:
    records = batch()
    futures = [send(records) for _ in range(4)]
    assert asyncio.isfuture(futures[0])
    assert asyncio.ensure_future(futures[0]) is futures[0]
    assert futures[0].get_loop() is asyncio.get_running_loop()

    async def resolve_soon() -> None:
        await asyncio.sleep(0.01)
        records.resolve(TP, 50, -1, None)

    task = asyncio.create_task(resolve_soon())
    gathered = await asyncio.gather(*futures[:2])
    assert [md.offset for md in gathered] == [50, 51]
    done, pending = await asyncio.wait(futures[2:], timeout=1)
    assert done == set(futures[2:]) and not pending
    assert (await asyncio.wait_for(futures[2], 1)).offset == 52
    assert (await asyncio.shield(futures[3])).offset == 53
    await task


async def test_gather_with_a_cancelled_future() -> None:
    records = batch()
    f, g = send(records), send(records)
    f.cancel("enough")
    records.resolve(TP, 0, -1, None)
    got = await asyncio.gather(f, g, return_exceptions=True)
    assert isinstance(got[0], asyncio.CancelledError) and got[0].args == ("enough",)
    assert got[1].offset == 1
    h = send(batch())
    h.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.gather(h)


async def test_wait_for_timing_out_cancels_the_future() -> None:
    records = batch()
    f = send(records)
    with pytest.raises(asyncio.TimeoutError):  # not the builtin TimeoutError before 3.11
        await asyncio.wait_for(f, 0.01)
    assert f.cancelled()


async def test_a_task_awaiting_it_can_be_cancelled() -> None:
    records = batch()
    f = send(records)

    async def wait() -> RecordMetadata:
        return await f

    task = asyncio.create_task(wait())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Cancelling the task that awaited it cancels the future, as with asyncio.Future.
    assert f.cancelled()


def test_works_under_uvloop() -> None:
    async def main() -> list[int]:
        records = batch()
        futures = [send(records) for _ in range(3)]
        asyncio.get_running_loop().call_later(0.01, records.resolve, TP, 7, -1, None)
        return [md.offset for md in await asyncio.gather(*futures)]

    assert uvloop.run(main()) == [7, 8, 9]


async def test_batch_size_first_record_always_fits_then_full_closes() -> None:
    records = batch(200)
    assert records.append_value(b"x" * 1000) is not None  # the first, however large
    assert records.append_value(b"x") is None
    assert records.closed
    records = batch(200)
    n = 0
    while records.append_value(b"y" * 20) is not None:
        n += 1
        assert records.size <= 200
    assert n == records.record_count and n > 1 and records.closed


async def test_encode_decodes_to_the_appended_records() -> None:
    records = batch()
    send(records, b"one")
    records.add(42, b"key", None, [("h", None), ("i", b"2")])
    raw = records.encode(
        compression="lz4", transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1
    )
    got = decode_records(raw, "t", 0).records
    assert [(r.offset, r.key, r.value) for r in got] == [(0, None, b"one"), (1, b"key", None)]
    assert got[1].timestamp == 42 and list(got[1].headers) == [("h", None), ("i", b"2")]
    with pytest.raises(ValueError, match="brotli"):
        records.encode(
            compression="brotli",
            transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
        )


async def test_futures_without_a_loop_are_refused() -> None:
    records = _native.BatchRecords(100)
    with pytest.raises(RuntimeError, match="event loop"):
        records.append_value(b"v")


async def test_a_callback_referring_to_its_future_is_freed_once_the_batch_settles() -> None:
    """Futures are not tracked by the cycle collector (it costs more than the rest of send());
    the cycles they can be in (through their callbacks, and their batch's list of futures with
    callbacks) are broken when the batch settles."""

    class Holder:
        future: _native.RecordFuture

        def callback(self, _: Any) -> None:
            pass

    records = batch()
    holder = Holder()
    holder.future = send(records)
    holder.future.add_done_callback(holder.callback)
    assert not gc.is_tracked(holder.future)
    ref = weakref.ref(holder)
    del holder
    records.resolve(TP, 0, -1, None)
    await asyncio.sleep(0)
    assert ref() is None  # by reference counting alone


async def test_a_raised_error_does_not_keep_the_frame_that_caught_it() -> None:
    records = batch()
    f = send(records)
    records.fail(Errors.KafkaTimeoutError("t[3]: too slow"))

    class Marker:
        pass

    def catch() -> weakref.ref[Marker]:
        marker = Marker()
        future = f  # the frame refers to the future and the future to nothing of the frame
        try:
            future.result()
        except Errors.KafkaTimeoutError:
            pass
        return weakref.ref(marker)

    assert catch()() is None  # freed without a collection
    assert f.exception().__traceback__ is None  # type: ignore[union-attr]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_many_records_resolve_and_every_callback_runs_once(
    run: Callable[[Coroutine[Any, Any, int]], int],
) -> None:
    async def main() -> int:
        count = 0

        def cb(f: _native.RecordFuture) -> None:
            nonlocal count
            assert f.exception() is None
            count += 1

        batches = [batch() for _ in range(10)]
        for records in batches:
            for _ in range(100):
                send(records).add_done_callback(cb)
        for i, records in enumerate(batches):
            records.resolve(TP, i * 100, -1, None)
        await asyncio.sleep(0)
        return count

    assert run(main()) == 1000


# The largest value a record of no key may have in a request of at most 300 bytes: the
# batch header, then the record's own framing (its length, attributes, deltas, the key's and
# value's lengths, the header count) as bounded by record_size_bound.
LIMIT = 300


def largest_value(key: bytes | None) -> int:
    size = 0
    while _native.BATCH_HEADER_LEN + _native.record_size_bound(key, b"x" * (size + 1), []) <= LIMIT:
        size += 1
    return size


async def test_sticky_sends_take_only_what_they_may() -> None:
    records = batch(600)
    table = _native.OpenBatches(LIMIT)
    send = table.send
    assert send("t", b"v") is None  # no table for the topic
    table.opened("t", 1, records)
    assert send("t", b"v") is None  # no sticky partition
    table.stick("t", 1)
    assert send("t", b"v") is None  # no partition count seen
    table.partition_count("t", 2)
    assert send("t", b"v") is not None
    assert send("u", b"v") is None  # another topic
    assert send("t", bytearray(b"v")) is None  # only bytes
    assert send("t", None) is None
    largest = largest_value(None)
    assert send("t", b"x" * (largest + 1)) is None  # the full path refuses it
    assert send("t", b"x" * largest) is not None
    while send("t", b"y" * 50) is not None:
        pass
    assert records.closed
    assert send("t", b"v") is None  # full
    table.stick("t", 0)
    assert send("t", b"v") is None  # no open batch there
    fresh = batch(600)
    table.opened("t", 0, fresh)
    assert send("t", b"v") is not None and fresh.record_count == 1
    table.metadata_changed()
    assert send("t", b"v") is None
    table.partition_count("t", 2)
    table.close()
    assert send("t", b"v") is None


async def test_keyed_sends_go_to_the_keys_partition_and_take_only_what_they_may() -> None:
    partitions = [batch(400), None, batch(400)]
    table = _native.OpenBatches(LIMIT)
    for p, records in enumerate(partitions):
        if records is not None:
            table.opened("t", p, records)
    send_keyed = table.send_keyed
    to = {key: partition_for_key(key, 3) for key in (b"a", b"b", b"c", b"d", b"e", b"f")}
    open_keys = [k for k, p in to.items() if p != 1]
    closed_key = next(k for k, p in to.items() if p == 1)
    assert send_keyed("t", open_keys[0], b"v") is None  # no partition count seen
    table.partition_count("t", 3)
    for key in open_keys:
        assert send_keyed("t", key, b"v") is not None
    assert send_keyed("t", closed_key, b"v") is None  # no open batch for that partition
    assert send_keyed("u", open_keys[0], b"v") is None  # no table for the topic
    assert send_keyed("t", bytearray(open_keys[0]), b"v") is None  # only bytes keys
    assert send_keyed("t", open_keys[0], "v") is None  # only bytes (or None) values
    largest = largest_value(open_keys[0])
    assert send_keyed("t", open_keys[0], b"x" * (largest + 1)) is None  # too large
    tombstone = send_keyed("t", open_keys[0], None)
    assert tombstone is not None  # a keyed record may have no value
    # Each record is in the batch of its key's partition, with its key.
    for p, records in enumerate(partitions):
        if records is None:
            continue
        records.close()
        encoded = records.encode(
            compression="none",
            transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
        )
        got = [(r.key, r.value) for r in decode_records(encoded, "t", p).records]
        want = [(k, b"v") for k in open_keys if to[k] == p]
        if to[open_keys[0]] == p:
            want.append((open_keys[0], None))
        assert got == want
