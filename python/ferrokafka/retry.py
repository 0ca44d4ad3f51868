"""Retrying a request while its errors are retriable, for at most a deadline: the one loop the
admin client and the transaction manager share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from . import errors as Errors

__all__ = ["retrying"]

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
