"""A producer's own ``send``: the extension's ``SendMethod`` makes ``send(topic, value,
key=key)`` a ``SendStep``, a coroutine whose record joins its open batch when it first runs.
It must behave as the class's ``async def send``: lazy, in the order awaited, cancellable,
following a patched or overridden class, and introspected as a coroutine function."""

from __future__ import annotations

import asyncio
import gc
import inspect
import weakref
from typing import Any
from unittest import mock

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.producer import AIOKafkaProducer

from .test_producer_unit import TOPIC, ScriptedBroker


async def started(fake: ScriptedBroker, **options: Any) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(bootstrap_servers=fake.bootstrap, linger_ms=50, **options)
    await producer.start()
    await producer.send_and_wait(TOPIC, b"first")  # an open batch for what follows to join
    return producer


def test_send_is_the_extensions_and_reads_as_the_method() -> None:
    producer = AIOKafkaProducer()
    send = producer.send
    assert isinstance(send, _native.SendMethod)
    assert asyncio.iscoroutinefunction(send)
    if hasattr(inspect, "markcoroutinefunction"):
        assert inspect.iscoroutinefunction(send)
    assert list(inspect.signature(send).parameters) == [
        "topic",
        "value",
        "key",
        "partition",
        "timestamp_ms",
        "headers",
    ]
    assert send.__name__ == "send" and send.__doc__ == AIOKafkaProducer.send.__doc__
    step = send(TOPIC, b"v", key=b"k")
    assert isinstance(step, _native.SendStep)
    step.close()  # never run: nothing was sent, and no warning is owed
    # Partition, timestamp and headers given as None (send_and_wait passes all six) are
    # the shortcut's too; given otherwise, or an unknown keyword, the class's coroutine.
    for taken in (
        send(TOPIC, b"v", None, None, None, None),
        send(TOPIC, value=b"v", partition=None, headers=None),
        send(TOPIC),
    ):
        assert isinstance(taken, _native.SendStep)
        taken.close()
    for other in (
        send(TOPIC, b"v", None, 0),
        send(TOPIC, b"v", timestamp_ms=1),
        send(TOPIC, b"v", headers=[]),
    ):
        assert inspect.iscoroutine(other) and not isinstance(other, _native.SendStep)
        other.close()
    with pytest.raises(TypeError, match="colour"):  # at the call, as an async def's
        send(TOPIC, b"v", colour="red")


def test_without_the_shortcuts_send_is_the_class_method() -> None:
    for options in ({"value_serializer": bytes}, {"transactional_id": "t"}):
        producer = AIOKafkaProducer(**options)
        assert "send" not in producer.__dict__
        assert inspect.ismethod(producer.send)


async def test_a_send_runs_when_awaited_in_the_order_awaited() -> None:
    fake = await ScriptedBroker([]).start()
    try:
        producer = await started(fake)
        a = producer.send(TOPIC, b"a")
        b = producer.send(TOPIC, value=b"b", key=None)
        never = producer.send(TOPIC, b"never")
        future_b = await b
        future_a = await a
        never.close()
        with pytest.raises(RuntimeError, match="already awaited"):
            await b
        meta_a, meta_b = await future_a, await future_b
        assert meta_b.offset < meta_a.offset
        await producer.stop()
        assert sum(fake.offsets.values()) == 3  # first, b, a: never is not sent
    finally:
        await fake.stop()


async def test_the_call_forms_the_shortcut_does_not_take_are_the_class_methods() -> None:
    fake = await ScriptedBroker([], partitions=2).start()
    try:
        producer = await started(fake)
        pinned = await (await producer.send(TOPIC, b"v", partition=1))
        assert pinned.partition == 1
        unpacked = await (await producer.send(*(TOPIC, b"v"), **{"key": b"k"}))
        assert unpacked.offset >= 0
        with pytest.raises(TypeError):
            await producer.send(TOPIC, b"v", value=b"w")  # type: ignore[misc]
        with pytest.raises(ValueError, match="key or value"):
            await producer.send(TOPIC)
        with pytest.raises(TypeError):
            await producer.send(TOPIC, b"v", colour="red")  # type: ignore[call-arg]
        await producer.stop()
    finally:
        await fake.stop()


async def test_a_send_cancelled_while_it_waits_costs_only_itself() -> None:
    fake = await ScriptedBroker([]).start()
    try:
        producer = await started(fake, request_timeout_ms=30_000)
        # A topic the broker does not know: the whole send waits for its metadata.
        waiting = asyncio.ensure_future(producer.send("elsewhere", b"v"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        # Cancelled before it first ran (the task's first step throws into it): nothing sent.
        early = asyncio.ensure_future(producer.send(TOPIC, b"never ran"))
        early.cancel()
        with pytest.raises(asyncio.CancelledError):
            await early
        meta = await (await producer.send(TOPIC, b"after"))
        assert meta.topic == TOPIC
        await producer.stop()
        assert sum(fake.offsets.values()) == 2  # first and after
    finally:
        await fake.stop()


async def test_send_follows_its_class_when_patched_or_overridden() -> None:
    fake = await ScriptedBroker([]).start()
    try:
        producer = await started(fake)
        with mock.patch.object(AIOKafkaProducer, "send", new_callable=mock.AsyncMock) as m:
            m.return_value = "mocked"
            assert await producer.send(TOPIC, b"v") == "mocked"
            assert await producer.send(TOPIC, b"v", key=b"k") == "mocked"
        # The mock saw each call as it was made (a mock on a class is not bound).
        assert m.await_args_list == [mock.call(TOPIC, b"v"), mock.call(TOPIC, b"v", key=b"k")]
        assert isinstance(producer.send, _native.SendMethod)
        assert (await (await producer.send(TOPIC, b"again"))).topic == TOPIC
        await producer.stop()

        class Mine(AIOKafkaProducer):
            async def send(self, *args: Any, **kwargs: Any) -> Any:
                return ("overridden", args, kwargs)

        mine = Mine()
        assert await mine.send(TOPIC, b"v", key=b"k") == (
            "overridden",
            (TOPIC, b"v"),
            {"key": b"k"},
        )
    finally:
        await fake.stop()


async def test_a_producer_made_while_its_class_is_patched_calls_the_patch() -> None:
    """As telemetry's instrument() does: the class's send wrapped before the producer is
    made. The producer's own send stands in for the class's definition, not the wrapper."""

    async def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        return ("wrapped", args, kwargs)

    with mock.patch.object(AIOKafkaProducer, "send", wrapped):
        producer = AIOKafkaProducer()
        assert await producer.send(TOPIC, b"v") == ("wrapped", (TOPIC, b"v"), {})
    assert isinstance(producer.send(TOPIC, b"v"), _native.SendStep)


async def test_a_closed_producer_refuses_through_the_whole_send() -> None:
    fake = await ScriptedBroker([]).start()
    try:
        producer = await started(fake)
        await producer.stop()
        with pytest.raises(Errors.ProducerClosed):
            await producer.send(TOPIC, b"late")
    finally:
        await fake.stop()


def test_a_producers_own_send_does_not_keep_it_alive() -> None:
    producer = AIOKafkaProducer()
    step = producer.send(TOPIC, b"v")
    step.close()
    ref = weakref.ref(producer)
    gc.disable()
    try:
        del producer, step
        assert ref() is None
    finally:
        gc.enable()
