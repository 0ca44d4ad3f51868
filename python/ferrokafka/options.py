"""Checks of method arguments shared by the clients: a bad value raises ``ValueError`` naming
the argument, before anything is sent or queued. (The clients' options are checked by their
configs, ``ferrokafka.config``.)"""

from __future__ import annotations

from typing import Any

from .structs import OffsetAndMetadata, TopicPartition


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
