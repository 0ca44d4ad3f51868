"""Parsers for flag values: offsets (``earliest``, ``latest``, ``N``, ``-N``), points in time
(milliseconds since the epoch or ISO-8601) and counts. Each raises
``argparse.ArgumentTypeError`` naming what it expected, which argparse reports as a usage
error."""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from typing import Literal

__all__ = ["OffsetSpec", "non_negative", "parse_offset", "parse_timestamp", "positive"]

OffsetKind = Literal["earliest", "latest", "absolute", "from_end"]

_NAMED: dict[str, OffsetKind] = {
    "earliest": "earliest",
    "beginning": "earliest",
    "smallest": "earliest",
    "latest": "latest",
    "end": "latest",
    "largest": "latest",
}


@dataclass(frozen=True)
class OffsetSpec:
    """Where to start reading a partition: its first or next offset, an absolute offset, or
    ``value`` records before its end."""

    kind: OffsetKind
    value: int = 0

    def resolve(self, earliest: int, latest: int) -> int:
        """The offset within ``[earliest, latest]`` this spec means for one partition."""
        if self.kind == "earliest":
            return earliest
        if self.kind == "latest":
            return latest
        if self.kind == "from_end":
            return max(earliest, latest - self.value)
        return min(max(self.value, earliest), latest)


def parse_offset(text: str) -> OffsetSpec:
    """``earliest``/``beginning``, ``latest``/``end``, ``N`` (absolute) or ``-N`` (N records
    before the end)."""
    word = text.strip().lower()
    if word in _NAMED:
        return OffsetSpec(_NAMED[word])
    try:
        number = int(word)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected earliest, latest, an offset N or -N (N before the end)"
        ) from None
    if number < 0:
        return OffsetSpec("from_end", -number)
    return OffsetSpec("absolute", number)


def parse_timestamp(text: str) -> int:
    """Milliseconds since the epoch, or an ISO-8601 date/time (``2024-05-01``,
    ``2024-05-01T12:00:00Z``, ``2024-05-01 12:00:00+02:00``); without a zone it is local time,
    as in Kafka's own tools."""
    value = text.strip()
    if value.isdigit():
        return int(value)
    if value[-1:] in ("Z", "z"):
        # UTC's "Z": Python 3.10's fromisoformat takes only "+00:00".
        value = value[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected milliseconds since the epoch or an ISO-8601 time "
            "such as 2024-05-01T12:00:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.astimezone()  # a naive time is local time
    millis = int(when.timestamp() * 1000)
    if millis < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is before 1970")
    return millis


def positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer")
    return number


def non_negative(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= 0")
    return number
