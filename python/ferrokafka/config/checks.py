"""Every check of a value the application passes in: each raises ``ValueError`` naming the
option or argument, before anything is connected, sent or queued.

Options: a check is a function ``(name, value) -> None``; ``checked()`` attaches one to a config
field, and the config runs it when it is built. Method arguments the clients share (a timestamp,
``getmany``'s ``max_records``, an offsets dict to commit) are checked by the functions at the
end, which return the value in the form the client uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..structs import OffsetAndMetadata, TopicPartition

__all__ = [
    "Check",
    "callable_or_none",
    "checked",
    "commit_offsets",
    "epoch_ms",
    "flag",
    "max_records_value",
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


# -- method arguments ---------------------------------------------------------------------------


def epoch_ms(name: str, value: Any) -> int:
    """``value`` as whole epoch milliseconds: an int or a float (``time.time() * 1000`` is
    one) from 0 to 2**63 - 1; the Java client refuses negative timestamps too."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < 2**63
    if not ok:
        raise ValueError(f"{name} must be epoch milliseconds (0 to 2**63 - 1), got {value!r}")
    return int(value)


def max_records_value(value: Any) -> int | None:
    """``getmany``'s ``max_records``: None or an int of at least 1. The message starts with
    aiokafka's words, which code may match on."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(
            f"`max_records` must be a positive Integer (an int of at least 1, or None), "
            f"got {value!r}"
        )
    return value


def commit_offsets(caller: str, offsets: Any) -> dict[TopicPartition, OffsetAndMetadata]:
    """An offsets argument (``{TopicPartition: offset}``, each offset an int, ``(int, str)``
    or ``OffsetAndMetadata``, the next offset to read) as ``OffsetAndMetadata`` values;
    ``ValueError`` naming ``caller`` and the partition for anything else."""
    if not isinstance(offsets, dict):
        raise ValueError(f"{caller}: offsets must be a dict, got {offsets!r}")
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, value in offsets.items():
        if not isinstance(tp, TopicPartition):
            raise ValueError(f"{caller} keys must be TopicPartition, got {tp!r}")
        if isinstance(value, OffsetAndMetadata):
            om = value
        elif isinstance(value, int) and not isinstance(value, bool):
            om = OffsetAndMetadata(value, "")
        elif (
            isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[0], int)
            and isinstance(value[1], str)
        ):
            om = OffsetAndMetadata(value[0], value[1])
        else:
            raise ValueError(
                f"{caller} offset for {tp} must be an int, (int, str) or "
                f"OffsetAndMetadata, got {value!r}"
            )
        if om.offset < 0:
            raise ValueError(f"{caller} offset for {tp} must be >= 0, got {om.offset}")
        out[tp] = om
    return out
