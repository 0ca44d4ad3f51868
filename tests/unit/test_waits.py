"""Waits that keep a cancellation: the race that made ``stop()`` hang on Python 3.10 and 3.11
(an event set, or an awaited future completed, in the same loop tick as the cancel)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from ferrokafka.waits import SharedCall, Signal, finish_tasks, wait_any, wait_event, wait_for


def _old_wait(event: asyncio.Event) -> Awaitable[Any]:
    return asyncio.wait_for(event.wait(), 10)


def _new_wait(event: asyncio.Event) -> Awaitable[Any]:
    return wait_event(event, 10)


async def _background_loop_ends_on_cancel(
    wait: Callable[[Any], Awaitable[Any]], event: Any = None
) -> bool:
    """A background loop as the group and fetcher tasks have ("wait for a wake-up or a timeout,
    then go round again"), woken and cancelled in one tick: does the cancel end it?"""
    event = asyncio.Event() if event is None else event

    async def routine() -> None:
        while True:
            event.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await wait(event)

    task = asyncio.create_task(routine())
    await asyncio.sleep(0.01)  # the routine is waiting
    event.set()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=1.0)
    if not done:
        task.cancel()  # a second cancel, which the routine does not lose
        await asyncio.gather(task, return_exceptions=True)
        return False
    return task.cancelled()


async def test_wait_event_never_loses_a_cancellation_that_meets_a_wakeup() -> None:
    assert await _background_loop_ends_on_cancel(_new_wait)


async def test_waits_on_signals_never_lose_a_cancellation_that_meets_a_wakeup() -> None:
    assert await _background_loop_ends_on_cancel(lambda e: wait_event(e, 10), Signal())
    other = Signal()
    assert await _background_loop_ends_on_cancel(lambda e: wait_any([other, e], 10), Signal())
    assert not other._waiters  # the cancelled wait left nothing behind


async def test_a_signal_wakes_its_waiter_on_the_next_turn_of_the_loop() -> None:
    async def turns_to_wake(flags: list[Any]) -> int:
        waiter = asyncio.create_task(wait_any(flags, 10))
        await asyncio.sleep(0)  # it waits
        flags[-1].set()
        turns = 0
        while not waiter.done():
            await asyncio.sleep(0)
            turns += 1
        return turns

    assert await turns_to_wake([Signal(), Signal(), Signal()]) == 1
    # asyncio.Events go through a task each and asyncio.wait's callback.
    assert await turns_to_wake([asyncio.Event(), asyncio.Event(), asyncio.Event()]) >= 2


async def test_wait_any_on_signals_times_out_and_leaves_no_waiter() -> None:
    a, b = Signal(), Signal()
    await wait_any([a, b], 0.01)
    assert not a.is_set() and not b.is_set() and not a._waiters and not b._waiters
    b.set()
    await asyncio.wait_for(wait_any([a, b], None), 1)  # already set: returns at once
    b.clear()
    waiter = asyncio.create_task(wait_any([a, b], None))
    await asyncio.sleep(0)
    a.set()
    await asyncio.wait_for(waiter, 1)
    assert not a._waiters and not b._waiters
    assert await wait_event(a, 0.01) is True and await a.wait() is True
    a.clear()
    assert await wait_event(a, 0.01) is False
    # A mix of kinds is waited on the general way.
    event = asyncio.Event()
    mixed = asyncio.create_task(wait_any([a, event], None))
    await asyncio.sleep(0)
    event.set()
    await asyncio.wait_for(mixed, 1)


async def test_the_race_is_real_on_this_python() -> None:
    # What the old code did: on 3.10 and 3.11 the cancellation is lost and the loop goes on.
    ended = await _background_loop_ends_on_cancel(_old_wait)
    assert ended is (sys.version_info >= (3, 12))


async def test_wait_event_times_out_and_reports_a_set_event() -> None:
    event = asyncio.Event()
    assert await wait_event(event, 0.01) is False
    event.set()
    assert await wait_event(event, 0.01) is True


async def test_wait_for_keeps_a_cancellation_and_discards_what_completed_with_it() -> None:
    inner: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    discarded: list[str] = []
    task = asyncio.create_task(wait_for(inner, 10, discard=discarded.append))
    await asyncio.sleep(0.01)
    inner.set_result("a transport")  # completes in the tick the caller is cancelled
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    assert discarded == ["a transport"]  # closed by the caller's discard, not leaked


async def test_wait_for_times_out_and_cancels_what_it_waited_for() -> None:
    inner: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with pytest.raises(asyncio.TimeoutError):
        await wait_for(inner, 0.01)
    await asyncio.sleep(0)
    assert inner.cancelled()
    assert await wait_for(asyncio.sleep(0, "done"), 1) == "done"


async def test_finish_tasks_gives_up_on_a_task_that_ignores_its_cancellation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = asyncio.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                continue  # swallowed, as a careless user callback might

    async def failing() -> None:
        raise RuntimeError("reported by the task itself")

    tasks = [asyncio.create_task(stubborn(), name="stubborn"), asyncio.create_task(failing())]
    await asyncio.sleep(0.01)
    with caplog.at_level(logging.WARNING, logger="ferrokafka.waits"):
        done, _ = await asyncio.wait(
            {asyncio.ensure_future(finish_tasks(tasks, "test", 0.2))}, timeout=2
        )
    assert done, "finish_tasks waited past its grace period"
    assert "stubborn did not end within 0.2 s" in caplog.text
    release.set()
    tasks[0].cancel()
    await asyncio.gather(tasks[0], return_exceptions=True)


async def test_shared_call_runs_once_for_concurrent_callers_and_again_after() -> None:
    runs = 0
    release = asyncio.Event()

    async def lookup() -> int:
        nonlocal runs
        runs += 1
        await release.wait()
        return runs

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("stopped"))
    callers = [asyncio.create_task(shared()) for _ in range(3)]
    await asyncio.sleep(0.01)
    release.set()
    assert await asyncio.gather(*callers) == [1, 1, 1]
    assert await shared() == 2  # nothing in flight: a new run


async def test_shared_call_gives_every_caller_the_error_of_the_run() -> None:
    release = asyncio.Event()

    async def lookup() -> int:
        await release.wait()
        raise ValueError("no coordinator")

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("stopped"))
    callers = [asyncio.create_task(shared()) for _ in range(2)]
    await asyncio.sleep(0.01)
    release.set()
    results = await asyncio.gather(*callers, return_exceptions=True)
    assert [type(r) for r in results] == [ValueError, ValueError]


async def test_shared_call_run_survives_a_waiter_giving_up() -> None:
    release = asyncio.Event()

    async def lookup() -> str:
        await release.wait()
        return "found"

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("stopped"))
    starter = asyncio.create_task(shared())
    await asyncio.sleep(0.01)
    waiter = asyncio.create_task(shared())
    await asyncio.sleep(0.01)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    release.set()
    assert await starter == "found"


async def test_shared_call_goes_on_for_the_others_when_its_starter_is_cancelled() -> None:
    """The run is no part of the caller that started it: cancelling that caller cancels its
    wait, and only that (it used to cancel the run, and every other waiter with it)."""
    release = asyncio.Event()

    async def lookup() -> str:
        await release.wait()
        return "found"

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("stopped"))
    starter = asyncio.create_task(shared())
    await asyncio.sleep(0.01)
    waiter = asyncio.create_task(shared())
    await asyncio.sleep(0.01)
    starter.cancel()
    await asyncio.gather(starter, return_exceptions=True)
    assert starter.cancelled()
    release.set()
    assert await asyncio.wait_for(waiter, 1) == "found"


async def test_a_shared_run_left_by_every_caller_ends_and_its_error_is_retrieved() -> None:
    # An error nobody waits for any more is not reported as never retrieved (the test
    # fixtures fail a test whose loop logged one).
    release = asyncio.Event()
    ended = asyncio.Event()

    async def lookup() -> str:
        try:
            await release.wait()
            raise ValueError("no coordinator")
        finally:
            ended.set()

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("stopped"))
    caller = asyncio.create_task(shared())
    await asyncio.sleep(0.01)
    caller.cancel()
    await asyncio.gather(caller, return_exceptions=True)
    release.set()
    await asyncio.wait_for(ended.wait(), 1)
    await asyncio.sleep(0)
    with pytest.raises(ValueError):
        await shared()  # a new run


async def test_stopping_a_shared_call_fails_its_waiters_with_the_owners_error() -> None:
    async def lookup() -> str:
        await asyncio.sleep(10)
        return "never"

    shared = SharedCall(lookup, stopped=lambda: RuntimeError("the client is closed"))
    waiters = [asyncio.create_task(shared()) for _ in range(2)]
    await asyncio.sleep(0.01)
    await asyncio.wait_for(shared.stop(), 1)
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert [str(r) for r in results] == ["the client is closed"] * 2
