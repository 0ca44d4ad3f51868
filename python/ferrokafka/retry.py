"""The loops that wait on the cluster for at most a deadline: :func:`retrying` runs a request
again while its errors are retriable (the admin client, the transaction manager, the offsets
coordinator); :func:`polling` repeats a step that makes progress until it reports done
(ListOffsets across partition leaders, the broker harness's readiness)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from . import errors as Errors

__all__ = ["polling", "retrying"]

T = TypeVar("T")


def _retriable(exc: Errors.KafkaError) -> bool:
    return exc.retriable


async def retrying(
    attempt: Callable[[], Awaitable[T]],
    *,
    timeout: float,
    backoff: float,
    retriable: Callable[[Errors.KafkaError], bool] = _retriable,
    timed_out: Callable[[Errors.KafkaError], BaseException] | None = None,
) -> T:
    """Run ``attempt`` until it succeeds. A Kafka error that ``retriable`` accepts is retried
    after ``backoff`` seconds while ``timeout`` seconds have not passed; then it is raised, or
    ``timed_out(error)`` is (chained to it). Any other error is raised at once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await attempt()
        except Errors.KafkaError as exc:
            if not retriable(exc):
                raise
            if time.monotonic() + backoff >= deadline:
                if timed_out is None:
                    raise
                raise timed_out(exc) from exc
        await asyncio.sleep(backoff)


async def polling(
    step: Callable[[], Awaitable[bool]],
    *,
    timeout: float,
    interval: float,
    timed_out: Callable[[], BaseException],
) -> None:
    """Run ``step`` until it returns True. After each False, raise ``timed_out()`` once
    ``timeout`` seconds have passed, else wait ``interval`` seconds and run it again. What
    ``step`` raises is raised at once: it catches what it means to outlast."""
    deadline = time.monotonic() + timeout
    while not await step():
        if time.monotonic() >= deadline:
            raise timed_out()
        await asyncio.sleep(interval)
