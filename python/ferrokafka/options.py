"""Checks of constructor options, shared by the clients: a bad value raises ``ValueError``
naming the option, at construction, before anything is connected."""

from __future__ import annotations

from typing import Any


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
