"""The consumer's per-record path in the extension: ``RecordRun`` hands out the rest of one
fetched response while nothing changes, ``RecordStream`` is what ``async for`` iterates, and
each of its steps is a ``Step``: a coroutine that takes a record only when it runs."""

from __future__ import annotations

import asyncio
import gc
import inspect
import sys
import time
import weakref
from typing import Any

import pytest
import uvloop
from ferrokafka import _native
from ferrokafka.config import ConsumerConfig
from ferrokafka.consumer.fetch_buffer import Buffered, FetchBuffer
from ferrokafka.consumer.output_form import RECORDS
from ferrokafka.consumer.subscription_state import SubscriptionState
from ferrokafka.records import encode_batch
from ferrokafka.structs import TopicPartition

TP = TopicPartition("t", 0)


def setup(count: int = 10) -> tuple[SubscriptionState, FetchBuffer, list[tuple[int, int]]]:
    """A buffer holding one response of ``count`` records (offsets 0..count-1, 10-byte values
    of ``v``), its first record taken by a one-record drain, so that ``run`` has the rest."""
    subs = SubscriptionState()
    subs.assign_from_user([TP])
    subs.state(TP).seek(0)
    consumed: list[tuple[int, int]] = []
    buffer = FetchBuffer(
        subs,
        ConsumerConfig(),
        on_drop=lambda tp: None,
        on_consumed=lambda records, nbytes: consumed.append((records, nbytes)),
    )
    raw = encode_batch([(1000 + i, None, b"v" * 10, []) for i in range(count)], base_offset=0)
    buffer.add(Buffered(TP, subs.state(TP), 0, raw, count, -1, None))
    first = buffer.drain(None, 1, RECORDS)[TP]
    assert [r.offset for r in first] == [0]
    consumed.clear()
    return subs, buffer, consumed


def test_a_run_hands_out_all_but_the_last_record_moving_the_position() -> None:
    subs, buffer, consumed = setup(10)
    run = buffer.run
    assert run is not None and not run.ended
    got = []
    while (record := run.take()) is not None:
        got.append(record.offset)
        assert subs.state(TP).position == record.offset + 1
    # The last record is the full poll's: it moves the position past the whole response.
    assert got == list(range(1, 9)) and run.ended
    assert consumed and consumed[0][0] == 8 and len(consumed) == 1
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == [9]
    assert subs.state(TP).position == 10
    assert run.take() is None and len(consumed) == 2  # ended once, reported once


def test_a_run_moves_a_position_that_is_not_a_slot_through_setattr() -> None:
    """The run writes the position through the state's own attribute protocol when it is not
    a plain ``__slots__`` member: here a class whose ``__setattr__`` sees every write."""
    writes: list[int] = []

    class State:
        def __init__(self) -> None:
            self.position = 1

        def __setattr__(self, name: str, value: Any) -> None:
            if name == "position":
                writes.append(value)
            object.__setattr__(self, name, value)

    class Buf:
        def __init__(self) -> None:
            raw = encode_batch([(0, None, b"x", []) for _ in range(5)], base_offset=0)
            self.items = _native.decode_records(raw, "t", 0).records
            self.taken = 1
            self.state = State()

    buf = Buf()
    writes.clear()
    run = _native.RecordRun(buf, _native.Generation(), 100)
    assert [r.offset for r in iter(run.take, None)] == [1, 2, 3]
    assert writes == [2, 3, 4] and buf.state.position == 4
    buf.taken, buf.state.position = 1, 1
    run = _native.RecordRun(buf, _native.Generation(), 100)
    assert run.take().offset == 1
    object.__setattr__(buf.state, "position", 7)  # moved by someone else: nothing more
    assert run.take() is None and run.ended and buf.state.position == 7


def test_any_change_of_the_subscription_state_ends_the_run() -> None:
    for change in ("pause", "seek", "reset", "hold", "assign", "position"):
        subs, buffer, consumed = setup(10)
        run = buffer.run
        assert run is not None
        nbytes = len(_raw_of(buffer))
        assert run.take().offset == 1  # type: ignore[union-attr]
        if change == "pause":
            subs.pause(TP)
        elif change == "seek":
            subs.seek(TP, 2)  # the same position the run would hand out next: still a change
        elif change == "reset":
            subs.request_reset(TP, subs.state(TP).reset_strategy or _earliest())
        elif change == "hold":
            subs.hold(TP)
        elif change == "assign":
            subs.assign_from_user([TP, TopicPartition("t", 1)])
        else:
            subs.state(TP).seek(5)  # directly on the partition's state, as the fetcher does
        assert run.take() is None and run.ended, change
        assert consumed == [(1, nbytes // 10)], change


def _earliest() -> Any:
    from ferrokafka.consumer.subscription_state import OffsetResetStrategy

    return OffsetResetStrategy.EARLIEST


def _raw_of(buffer: FetchBuffer) -> bytes:
    return bytes(buffer._buffers[TP][0].raw)


def test_closing_a_run_writes_back_how_far_it_got() -> None:
    _, buffer, consumed = setup(10)
    run = buffer.run
    assert run is not None
    for _ in range(3):
        run.take()
    buffer.stop_runs()
    assert run.ended and buffer.run is None and consumed[0][0] == 3
    # The next poll goes on from there: nothing handed out twice, nothing skipped.
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == list(range(4, 10))


async def test_async_for_steps_are_ready_records_until_the_run_ends_then_the_slow_path() -> None:
    subs, buffer, _ = setup(5)
    owner = type("Owner", (), {})()
    owner._buffer = buffer
    slow_calls = 0

    async def slow() -> Any:
        nonlocal slow_calls
        slow_calls += 1
        raise StopAsyncIteration

    got = [r.offset async for r in _native.RecordStream(owner, slow, None)]
    assert got == [1, 2, 3] and slow_calls == 1 and subs.state(TP).position == 4


async def stopped() -> Any:
    raise StopAsyncIteration


async def test_a_step_takes_its_record_when_it_runs_not_when_it_is_made() -> None:
    _, buffer, _ = setup(6)
    stream = _native.RecordStream(type("Owner", (), {"_buffer": buffer})(), stopped, None)
    first, second = stream.__anext__(), stream.__anext__()
    # gather runs its arguments in order: the one it starts first takes the first record.
    assert [r.offset for r in await asyncio.gather(second, first)] == [1, 2]
    # Made and dropped, or cancelled before it ran: nothing taken.
    dropped = stream.__anext__()
    dropped.close()
    del dropped
    task = asyncio.ensure_future(stream.__anext__())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await anext(stream)).offset == 3


async def test_a_step_is_a_coroutine_to_asyncio() -> None:
    _, buffer, _ = setup(6)
    step = _native.Step(buffer, stopped, None)
    assert asyncio.iscoroutine(step)
    assert (await asyncio.create_task(step)).offset == 1  # type: ignore[arg-type]
    # wait_for with no time left cancels the task before it runs: the record stays.
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(_native.Step(buffer, stopped, None), 0)
    assert (await asyncio.wait_for(_native.Step(buffer, stopped, None), 5)).offset == 2


async def test_a_step_awaited_twice_raises() -> None:
    _, buffer, _ = setup(5)
    step = _native.Step(buffer, stopped, None)
    assert (await step).offset == 1
    with pytest.raises(RuntimeError, match="already awaited"):
        await step
    with pytest.raises(RuntimeError, match="already awaited"):
        next(iter(step))


async def test_without_a_record_ready_a_step_is_the_slow_coroutine_including_cancellation() -> None:
    gate = asyncio.Event()
    events: list[str] = []

    async def slow() -> str:
        try:
            await gate.wait()
            return "slow"
        finally:
            events.append("slow finished")

    # No buffer (the consumer has not started): straight to slow(), which waits.
    task = asyncio.ensure_future(_native.Step(None, slow, None))
    await asyncio.sleep(0)
    gate.set()
    assert await task == "slow" and events == ["slow finished"]
    # Cancelled while slow() waits: the cancellation goes into it and ends it.
    gate.clear()
    task = asyncio.ensure_future(_native.Step(None, slow, None))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == ["slow finished", "slow finished"]
    # A run with nothing left: the slow path too.
    _, buffer, _ = setup(2)  # one record drained, the last one is the full poll's
    gate.set()
    assert await _native.Step(buffer, slow, None) == "slow"


def test_a_step_resumed_from_inside_itself_raises_and_then_goes_on() -> None:
    # A coroutine that drives the step awaiting it: the step is running, so the inner resume
    # is refused with an exception (the step's state is never reached twice at once).
    refused: list[str] = []
    holder: list[Any] = []

    class Reenter:
        def __await__(self) -> Any:
            try:
                holder[0].send(None)
            except RuntimeError as exc:
                refused.append(str(exc))
            return "done"
            yield  # a generator, so that __await__ returns an iterator

    async def slow() -> str:
        return await Reenter()

    step = _native.Step(None, slow, None)
    holder.append(step)
    with pytest.raises(StopIteration) as stopped_with:
        step.send(None)
    assert stopped_with.value.value == "done"
    assert refused == ["coroutine already running"]


def test_getone_is_a_coroutine_function_as_aiokafkas() -> None:
    from ferrokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer()
    assert asyncio.iscoroutinefunction(consumer.getone)
    if hasattr(inspect, "markcoroutinefunction"):
        assert inspect.iscoroutinefunction(consumer.getone)


async def test_a_consumers_own_getone_steps_its_buffer_and_reads_as_the_method() -> None:
    from ferrokafka import AIOKafkaConsumer

    _, buffer, _ = setup(5)
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer()
    consumer._buffer = buffer
    getone = consumer.getone
    assert isinstance(getone, _native.GetOne)
    step = getone()
    assert isinstance(step, _native.Step)
    assert (await step).offset == 1
    # The class's method steps the same stream: the two never hand out one record twice.
    assert (await AIOKafkaConsumer.getone(consumer)).offset == 2
    assert (await consumer.getone()).offset == 3
    assert list(inspect.signature(getone).parameters) == ["partitions"]
    assert getone.__name__ == "getone" and getone.__doc__ == AIOKafkaConsumer.getone.__doc__
    # Partitions named: the class's method, which checks them (here: not started).
    from ferrokafka.errors import IllegalStateError

    with pytest.raises(IllegalStateError):
        await consumer.getone(TP)
    with pytest.raises(TypeError, match=r"getone\(\) got an unexpected keyword"):
        consumer.getone(partition=TP)  # type: ignore[call-arg]


async def test_a_consumers_getone_follows_its_class_when_patched_or_overridden() -> None:
    from unittest import mock

    from ferrokafka import AIOKafkaConsumer

    _, buffer, _ = setup(5)
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer()
    consumer._buffer = buffer

    async def patched(self: Any, *partitions: TopicPartition) -> Any:
        return ("patched", self, partitions)

    with mock.patch.object(AIOKafkaConsumer, "getone", patched):
        assert await consumer.getone() == ("patched", consumer, ())
        assert await consumer.getone(TP) == ("patched", consumer, (TP,))
    assert (await consumer.getone()).offset == 1  # nothing was taken while patched
    # A mock on the class is no descriptor: it is called without the consumer.
    with mock.patch.object(AIOKafkaConsumer, "getone", new_callable=mock.AsyncMock) as m:
        m.return_value = "mocked"
        assert await consumer.getone() == "mocked"
        m.assert_awaited_once_with()
    with mock.patch.object(consumer, "getone", new=mock.AsyncMock(return_value="mine")):
        assert await consumer.getone() == "mine"
    assert isinstance(consumer.getone, _native.GetOne)
    assert (await consumer.getone()).offset == 2

    class Mine(AIOKafkaConsumer[Any, Any]):
        async def getone(self, *partitions: TopicPartition) -> Any:
            return "overridden"

    mine = Mine()
    assert await mine.getone() == "overridden"


async def test_a_consumer_made_while_its_class_is_patched_calls_the_patch() -> None:
    """As telemetry's instrument() does: the class's getone wrapped before the consumer is
    made. The consumer's own getone stands in for the class's definition, not the wrapper."""
    from unittest import mock

    from ferrokafka import AIOKafkaConsumer

    _, buffer, _ = setup(5)

    async def wrapped(self: Any, *partitions: TopicPartition) -> Any:
        return "wrapped"

    with mock.patch.object(AIOKafkaConsumer, "getone", wrapped):
        consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer()
        consumer._buffer = buffer
        assert await consumer.getone() == "wrapped"
    assert (await consumer.getone()).offset == 1


def test_getones_stream_does_not_keep_a_dropped_consumer_alive() -> None:
    """The consumer holds the stream its getone() steps come from, and the stream holds the
    consumer weakly: a consumer nobody refers to is freed at once, not at a collection."""
    from ferrokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer("t", group_id="g")
    step = consumer.getone()
    step.close()
    ref = weakref.ref(consumer)
    gc.disable()
    try:
        del consumer, step
        assert ref() is None
    finally:
        gc.enable()


async def test_a_group_member_is_told_of_each_record_and_its_failure_comes_first() -> None:
    _, buffer, _ = setup(8)
    owner = type("Owner", (), {"_buffer": buffer})()
    events: list[str] = []

    class Member:
        fail: Exception | None = None

        def __init__(self) -> None:
            self.poll_clock = _native.PollClock(time.monotonic())

        def raise_if_failed(self) -> None:
            events.append("check")
            if self.fail is not None:
                raise self.fail

        def polled(self) -> None:
            events.append("polled")
            self.poll_clock.attention = self.fail is not None

    async def slow() -> Any:
        raise StopAsyncIteration

    member = Member()
    stream = _native.RecordStream(owner, slow, member)
    # Nothing asked of the member: each record moves its poll clock, no Python call.
    before = member.poll_clock.last
    await asyncio.sleep(0.002)
    assert (await anext(stream)).offset == 1
    assert events == [] and member.poll_clock.last > before
    assert abs(member.poll_clock.last - time.monotonic()) < 0.5  # time.monotonic()'s scale
    # The member asks (a failure to raise, a rejoin after a poll timeout): its own calls.
    member.poll_clock.attention = True
    assert (await anext(stream)).offset == 2
    assert events == ["check", "polled"] and not member.poll_clock.attention
    member.fail = RuntimeError("fenced")
    member.poll_clock.attention = True
    with pytest.raises(RuntimeError, match="fenced"):
        await anext(stream)
    member.fail = None
    # The failed step took nothing: the next one hands out the record after the last one.
    assert (await anext(stream)).offset == 3
    assert events == ["check", "polled", "check", "check", "polled"]


async def test_a_member_whose_check_ends_the_run_sends_the_step_down_the_slow_path() -> None:
    subs, buffer, _ = setup(8)
    owner = type("Owner", (), {"_buffer": buffer})()
    slow_calls: list[str] = []

    class Member:
        def __init__(self) -> None:
            self.poll_clock = _native.PollClock(time.monotonic())

        def raise_if_failed(self) -> None:
            # What a rebalance does meanwhile: the partition is being revoked.
            subs.hold(TP)

        def polled(self) -> None:
            pass

    async def slow() -> Any:
        slow_calls.append("slow")
        raise StopAsyncIteration

    member = Member()
    stream = _native.RecordStream(owner, slow, member)
    assert (await anext(stream)).offset == 1
    member.poll_clock.attention = True
    with pytest.raises(StopAsyncIteration):
        await anext(stream)  # the run ended while the member was asked: nothing from it
    assert slow_calls == ["slow"] and subs.state(TP).position == 2


async def test_a_stream_follows_the_buffer_to_its_next_run() -> None:
    subs, buffer, _ = setup(4)
    owner = type("Owner", (), {"_buffer": buffer})()

    async def slow() -> Any:
        for records in buffer.drain(None, 1, RECORDS).values():
            return records[0]
        raise StopAsyncIteration

    raw = encode_batch([(1000 + i, None, b"w", []) for i in range(4, 8)], base_offset=4)
    buffer.add(Buffered(TP, subs.state(TP), 4, raw, 8, -1, None))
    stream = _native.RecordStream(owner, slow, None)
    got = []
    async for record in stream:
        got.append((record.offset, record.value))
    # The first response's run, its last record by the drain, which starts the second's run.
    assert got == [(1, b"v" * 10), (2, b"v" * 10), (3, b"v" * 10)] + [
        (i, b"w") for i in range(4, 8)
    ]
    assert subs.state(TP).position == 8


def test_steps_work_under_uvloop() -> None:
    async def main() -> list[int]:
        _, buffer, _ = setup(4)
        owner = type("Owner", (), {"_buffer": buffer})()

        async def slow() -> Any:
            raise StopAsyncIteration

        return [r.offset async for r in _native.RecordStream(owner, slow, None)]

    assert uvloop.run(main()) == [1, 2]


def test_a_stream_before_the_consumer_has_a_buffer_takes_the_slow_path() -> None:
    owner = type("Owner", (), {"_buffer": None})()

    async def slow() -> str:
        return "slow"

    async def main() -> Any:
        return await _native.RecordStream(owner, slow, None).__anext__()

    assert asyncio.run(main()) == "slow"


def test_runs_and_streams_are_collected_with_their_cycles() -> None:
    _, buffer, _ = setup(4)
    owner = type("Owner", (), {"_buffer": buffer})()

    async def slow() -> Any:
        raise StopAsyncIteration

    stream = _native.RecordStream(owner, slow, None)
    owner.stream = stream  # a cycle through the stream
    ref = weakref.ref(owner)
    del owner, stream, buffer
    gc.collect()
    assert ref() is None


async def test_steps_free_what_they_replace() -> None:
    # Each record handed out replaces the position object the run held; a step runs outside
    # PyO3's own entry points (the interpreter calls its am_send), where a reference dropped
    # without telling PyO3 it holds the GIL would be queued, never freed: a leak per record.
    _, buffer, _ = setup(20_001)
    stream = _native.RecordStream(type("Owner", (), {"_buffer": buffer})(), stopped, None)
    await anext(stream)
    gc.collect()
    before = sys.getallocatedblocks()
    count = 0
    async for _ in stream:
        count += 1
    gc.collect()
    assert count == 19_998
    assert sys.getallocatedblocks() - before < 2_000


async def test_throw_reaches_the_slow_coroutine_in_the_form_it_was_given() -> None:
    seen: list[BaseException] = []
    gate = asyncio.Event()

    async def slow() -> str:
        try:
            await gate.wait()
        except ValueError as exc:
            seen.append(exc)
            return "handled"
        return "not thrown"

    step = _native.Step(None, slow, None)
    assert isinstance(step.send(None), asyncio.Future)  # waiting inside slow()
    # The one-argument form, as asyncio's tasks use it (the three-argument one is deprecated
    # from Python 3.12, and passing it on would warn).
    with pytest.raises(StopIteration) as stop:
        step.throw(ValueError("into slow"))
    assert stop.value.value == "handled" and str(seen[0]) == "into slow"
    # Before it runs, a thrown exception ends the step there, in either form.
    with pytest.raises(KeyError):
        _native.Step(None, slow, None).throw(KeyError("early"))
    with pytest.raises(KeyError, match="old form"):
        _native.Step(None, slow, None).throw(KeyError, "old form", None)
    with pytest.raises(TypeError):
        _native.Step(None, slow, None).throw()


async def test_a_stream_hands_out_a_step_again_only_when_nothing_else_holds_it() -> None:
    _, buffer, _ = setup(10)
    stream = _native.RecordStream(type("Owner", (), {"_buffer": buffer})(), stopped, None)
    step = stream.__anext__()
    assert (await step).offset == 1
    again = stream.__anext__()
    assert again is not step, "a step someone holds is not handed out again"
    assert (await again).offset == 2
    with pytest.raises(RuntimeError, match="already awaited"):
        await step
    kept = id(again)
    del step, again
    # Held by the stream alone: made ready again, a fresh coroutine to asyncio.
    reused = stream.__anext__()
    assert id(reused) == kept
    assert (await asyncio.create_task(reused)).offset == 3  # type: ignore[arg-type]
    assert [r.offset async for r in stream] == [4, 5, 6, 7, 8]


async def test_a_step_dropped_while_it_ran_the_slow_path_is_not_handed_out_again() -> None:
    events: list[str] = []
    gate = asyncio.Event()

    async def slow() -> str:
        try:
            await gate.wait()
            return "slow"
        finally:
            events.append("slow ended")

    stream = _native.RecordStream(type("Owner", (), {"_buffer": None})(), slow, None)
    step = stream.__anext__()
    step.send(None)  # into slow(), which waits
    del step
    assert events == []
    fresh = stream.__anext__()  # the abandoned step, and its coroutine, are let go
    assert events == ["slow ended"]
    gate.set()
    assert await fresh == "slow"
