"""Waits that keep a cancellation, on every supported Python.

``asyncio.wait_for`` on Python 3.10 and 3.11 loses a cancellation when the awaited thing
completes in the same loop tick as the cancel: it returns the result, and the task that was
being cancelled carries on as if nothing had happened. A background loop written as "wait for
the wake-up event or a timeout, then go round again" then never ends, and a ``close()`` that
waits for it hangs. ``asyncio.wait`` has no such race (a cancellation always raises), so every
timed wait in ferrokafka goes through it, and every wait for cancelled tasks is bounded.

``SharedCall`` lets concurrent callers of one lookup (metadata, a group's coordinator) share a
single request instead of sending one each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Generic, TypeVar

__all__ = ["Flag", "SharedCall", "Signal", "finish_tasks", "wait_any", "wait_event", "wait_for"]

log = logging.getLogger(__name__)

T = TypeVar("T")

TASK_EXIT_GRACE = 5.0
"""Seconds a cancelled background task may take to end before ``close()`` stops waiting for
it: a task still running then is stuck (e.g. in a user callback that swallowed the
cancellation), and a close must not hang on it."""


async def wait_for(
    aw: Awaitable[T],
    timeout: float | None,
    *,
    discard: Callable[[T], Any] | None = None,
) -> T:
    """``asyncio.wait_for`` that never loses a cancellation of the caller.

    On a timeout (``asyncio.TimeoutError``) or a cancellation, the awaited task is cancelled;
    if it completes anyway (it finished in the same tick), ``discard`` gets its result, so a
    resource it opened (a transport) is not leaked."""
    inner = asyncio.ensure_future(aw)
    try:
        done, _ = await asyncio.wait({inner}, timeout=timeout)
    except BaseException:
        _abandon(inner, discard)
        raise
    if not done:
        _abandon(inner, discard)
        raise asyncio.TimeoutError()
    return inner.result()


def _abandon(inner: asyncio.Future[T], discard: Callable[[T], Any] | None) -> None:
    inner.cancel()

    def settled(fut: asyncio.Future[T]) -> None:
        if fut.cancelled():
            return
        if fut.exception() is None and discard is not None:
            discard(fut.result())

    inner.add_done_callback(settled)


async def wait_event(event: Flag, timeout: float | None) -> bool:
    """Wait until ``event`` is set or ``timeout`` seconds pass; True if it was set. A
    cancellation of the caller always raises ``CancelledError``, even when the event was set
    in the same tick."""
    if event.is_set():
        return True
    if isinstance(event, Signal):
        await _wait_signals([event], timeout)
        return event.is_set()
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()
    return event.is_set()


async def wait_any(events: Iterable[Flag], timeout: float | None) -> None:
    """Wait until any of ``events`` is set, or ``timeout`` seconds pass."""
    events = list(events)
    if any(e.is_set() for e in events):
        return
    signals = [e for e in events if isinstance(e, Signal)]
    if len(signals) == len(events):
        await _wait_signals(signals, timeout)
        return
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


class Signal:
    """A flag to wait for, as ``asyncio.Event`` (``set``, ``clear``, ``is_set``, ``wait``),
    that ``wait_event`` and ``wait_any`` wait on with one future and no task.

    Waiting on ``asyncio.Event``s with a timeout, or on several at once, takes a task per
    event (its ``wait()``) under ``asyncio.wait``: a wake-up then runs that task, then
    ``asyncio.wait``'s callback, then the waiter (three turns of the loop), and the other
    tasks are cancelled and run once more. A consumer waits like this for every fetch response
    it hands out, so at 1,000 records/s that was on every record's way to the application.
    Here ``set()`` resolves the waiter's future itself: the waiter runs on the next turn."""

    __slots__ = ("_flag", "_waiters")

    def __init__(self) -> None:
        self._flag = False
        self._waiters: list[asyncio.Future[None]] = []

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        if self._flag:
            return
        self._flag = True
        waiters = self._waiters
        if waiters:
            self._waiters = []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    def clear(self) -> None:
        self._flag = False

    async def wait(self) -> bool:
        if not self._flag:
            await _wait_signals([self], None)
        return True


Flag = asyncio.Event | Signal
"""What ``wait_event`` and ``wait_any`` wait on."""


async def _wait_signals(signals: list[Signal], timeout: float | None) -> None:
    """Until one of ``signals`` is set or ``timeout`` passes. A cancellation of the caller
    always raises (the caller's task awaits a plain future)."""
    if timeout is not None and timeout <= 0:
        return
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()
    for signal in signals:
        signal._waiters.append(fut)
    timer = None if timeout is None else loop.call_later(timeout, _expire, fut)
    try:
        await fut
    finally:
        if timer is not None:
            timer.cancel()
        for signal in signals:
            if fut in signal._waiters:
                signal._waiters.remove(fut)


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def finish_tasks(
    tasks: Iterable[asyncio.Task[Any]], what: str, grace: float = TASK_EXIT_GRACE
) -> None:
    """Cancel ``tasks`` and wait for them to end, at most ``grace`` seconds; a task still
    running then is logged (naming ``what`` it belongs to) and left behind. Their own errors
    are not raised: whatever needed to know has been told by the task itself."""
    tasks = list(tasks)  # walked twice below
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        _, stuck = await asyncio.wait(pending, timeout=grace)
        for task in stuck:
            log.warning(
                "%s: task %s did not end within %.1f s of being cancelled; not waiting for it",
                what,
                task.get_name(),
                grace,
            )
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the task reported it already


class SharedCall(Generic[T]):
    """``call``, run once for all concurrent callers: a caller arriving while a run is in flight
    gets that run's result or error instead of starting another run.

    The run is a task of its own, not part of the caller that started it: a caller that is
    cancelled stops waiting, and that is all. Run inside its first caller, a cancellation of
    that caller (a ``wait_for`` around a send in a request handler) cancelled the run, and so
    every other waiter with it, background tasks included (the heartbeat, the producer's
    requests), which then ended on a cancellation that was never theirs. The run goes on for
    the others, or for its effects (metadata installed, a coordinator found) when none is
    left; its error is retrieved, so none is reported as never retrieved.

    ``stop()`` cancels a run in flight (its owner is closing); its waiters then raise
    ``stopped()``, not a ``CancelledError`` they did not ask for."""

    __slots__ = ("_call", "_running", "_stopped")

    def __init__(
        self, call: Callable[[], Awaitable[T]], *, stopped: Callable[[], BaseException]
    ) -> None:
        self._call = call
        self._stopped = stopped
        self._running: asyncio.Task[T] | None = None

    async def __call__(self) -> T:
        run = self._running
        if run is None:
            run = self._running = asyncio.ensure_future(self._call())
            run.add_done_callback(self._finished)
        # asyncio.wait, unlike awaiting the task, leaves it running when this caller is
        # cancelled (and always raises that cancellation, see wait_for).
        await asyncio.wait({run})
        if run.cancelled():
            raise self._stopped()
        return run.result()

    def _finished(self, run: asyncio.Future[T]) -> None:
        if self._running is run:
            self._running = None
        if not run.cancelled():
            run.exception()  # retrieved: the waiters, if any, raise it themselves

    async def stop(self) -> None:
        """Cancel the run in flight, if any, and wait (boundedly) until it has ended."""
        run = self._running
        if run is not None:
            await finish_tasks([run], "shared call")
