"""Checks of options and arguments, shared by the clients: a bad value raises ``ValueError``
naming the option, before anything is connected or queued."""

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


def epoch_ms(name: str, value: Any) -> int:
    """``value`` as whole epoch milliseconds: an int or a float (``time.time() * 1000`` is
    one) from 0 to 2**63 - 1; the Java client refuses negative timestamps too."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < 2**63
    if not ok:
        raise ValueError(f"{name} must be epoch milliseconds (0 to 2**63 - 1), got {value!r}")
    return int(value)


def flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False: a string such as "false" would otherwise be true."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value
