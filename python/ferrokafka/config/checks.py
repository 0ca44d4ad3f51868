"""The checks of option values: each raises ``ValueError`` naming the option, before anything
is connected or queued.

A check is a function ``(name, value) -> None``; ``checked()`` attaches one to a config field,
and the config runs it when it is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "Check",
    "callable_or_none",
    "checked",
    "flag",
    "non_negative",
    "one_of",
    "positive",
    "positive_int",
    "positive_or_none",
]

Check = Callable[[str, Any], object]
"""Raises ``ValueError`` naming the option (``name``) when ``value`` is not allowed."""


def checked(check: Check) -> dict[str, Check]:
    """A config field's metadata naming the check its value must pass:
    ``field(default=..., metadata=checked(positive))``."""
    return {"check": check}


def positive_int(name: str, value: Any, *, zero_ok: bool = False) -> int:
    """``value`` if it is an int above zero (or at least zero with ``zero_ok``); bools are
    refused, as they are ints to Python but never what an option of milliseconds or bytes
    means."""
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero_ok else 1):
        kind = "a non-negative" if zero_ok else "a positive"
        raise ValueError(f"{name} must be {kind} int, got {value!r}")
    return value


def flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False: a string such as "false" would otherwise be true."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def positive(name: str, value: Any) -> None:
    positive_int(name, value)


def non_negative(name: str, value: Any) -> None:
    positive_int(name, value, zero_ok=True)


def positive_or_none(name: str, value: Any) -> None:
    if value is not None:
        positive_int(name, value)


def callable_or_none(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise ValueError(f"{name} must be callable or None, got {value!r}")


def one_of(*choices: Any, note: str = "") -> Check:
    """A check that the value is one of ``choices``: "x must be 'a' or 'b' (note), got ..."."""
    named = [repr(c) for c in choices]
    listed = " or ".join(named) if len(named) < 3 else ", ".join(named[:-1]) + " or " + named[-1]
    suffix = f" ({note})" if note else ""

    def check(name: str, value: Any) -> None:
        # True == 1: a bool must not pass for an acks of 1.
        if isinstance(value, bool) or value not in choices:
            raise ValueError(f"{name} must be {listed}{suffix}, got {value!r}")

    return check
