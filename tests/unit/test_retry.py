"""The shared loops. ``retrying``: retriable errors are retried until the deadline, others raised
at once; at the deadline the last error (or what ``timed_out`` makes of it) is raised.
``polling``: a step runs until it reports done; at the deadline ``timed_out()`` is raised."""

from __future__ import annotations

import pytest
from ferrokafka import errors as Errors
from ferrokafka.retry import polling, retrying


async def test_retriable_errors_are_retried_until_success() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise Errors.NotCoordinatorError("moved")
        return "done"

    assert await retrying(attempt, timeout=5, backoff=0.001) == "done"
    assert calls == 3


async def test_other_errors_are_raised_at_once() -> None:
    calls = 0

    async def attempt() -> None:
        nonlocal calls
        calls += 1
        raise Errors.TopicAuthorizationFailedError("no")

    with pytest.raises(Errors.TopicAuthorizationFailedError):
        await retrying(attempt, timeout=5, backoff=0.001)
    assert calls == 1


async def test_at_the_deadline_the_error_or_its_replacement_is_raised() -> None:
    async def attempt() -> None:
        raise Errors.RequestTimedOutError("slow")

    with pytest.raises(Errors.RequestTimedOutError):
        await retrying(attempt, timeout=0.05, backoff=0.01)
    with pytest.raises(Errors.KafkaTimeoutError) as info:
        await retrying(
            attempt,
            timeout=0.05,
            backoff=0.01,
            timed_out=lambda exc: Errors.KafkaTimeoutError(f"gave up: {exc}"),
        )
    assert isinstance(info.value.__cause__, Errors.RequestTimedOutError)
    # A custom rule: nothing is retriable.
    with pytest.raises(Errors.RequestTimedOutError):
        await retrying(attempt, timeout=5, backoff=0.01, retriable=lambda exc: False)


async def test_polling_runs_the_step_until_it_is_done() -> None:
    calls = 0

    async def step() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    await polling(step, timeout=5, interval=0.001, timed_out=lambda: AssertionError("late"))
    assert calls == 3


async def test_polling_raises_timed_out_at_the_deadline_and_step_errors_at_once() -> None:
    calls = 0

    async def never() -> bool:
        nonlocal calls
        calls += 1
        return False

    with pytest.raises(Errors.KafkaTimeoutError) as info:
        await polling(
            never,
            timeout=0.05,
            interval=0.01,
            timed_out=lambda: Errors.KafkaTimeoutError(f"after {calls} steps"),
        )
    # The error is made at the deadline, from what the steps left.
    assert calls >= 2 and f"after {calls} steps" in str(info.value)

    async def failing() -> bool:
        raise Errors.TopicAuthorizationFailedError("no")

    with pytest.raises(Errors.TopicAuthorizationFailedError):
        await polling(failing, timeout=5, interval=0.001, timed_out=lambda: AssertionError())
