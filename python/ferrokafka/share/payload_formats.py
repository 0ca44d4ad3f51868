"""The share consumer's ``getmany_arrow`` with key and value formats: what a poll took is
decoded before it is handed out, and nothing is acknowledged that was not handed out.

A malformed record in ``FAILFAST`` mode is treated as the Java share consumer treats a record
its deserializer refuses (``ShareCompletedFetch``): the records before it are handed out; when
it is the first record a partition would hand out, it is released (delivered again, to this
member or another, its delivery count one higher, until the group's delivery count limit
archives it) and the poll raises :class:`~ferrokafka.errors.PayloadFormatError` naming it.
Everything else the poll took stays acquired and is handed out by the next polls, in order.

A format that cannot have or use a record's writer schema
(:class:`~ferrokafka.errors.PayloadSchemaError`: the registry does not know the id, or does
not answer), and a poll cancelled while it waits for a registry, give every record the poll
took back, still acquired: the next poll tries again, and records whose locks run out
meanwhile go back to the group. Nothing is released or acknowledged for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import errors as Errors
from ..consumer.payload_formats import column_formats, malformed
from ..structs import TopicPartition

if TYPE_CHECKING:
    from ..formats import PayloadFormat
    from .fetcher import ShareFetcher, Taken

__all__ = ["hand_out_formatted"]

_RELEASED = " (the record was released: it is delivered again, its delivery count one higher)"


async def hand_out_formatted(
    fetcher: ShareFetcher,
    taken: dict[TopicPartition, Taken],
    key_format: PayloadFormat | None,
    value_format: PayloadFormat | None,
) -> dict[TopicPartition, Any]:
    formats = column_formats(key_format, value_format)
    try:
        for got in taken.values():
            for column, fmt in formats:
                await fmt.prepare(got.batch, column)
    except BaseException:
        fetcher.settle(taken, {})
        raise
    out: dict[TopicPartition, Any] = {}
    handed: dict[TopicPartition, int] = {}
    first: tuple[TopicPartition, Errors.PayloadFormatError] | None = None
    try:
        for tp, got in taken.items():
            decoded = got.batch
            for column, fmt in formats:
                decoded, failed = fmt.apply(decoded, column)
                if failed is not None and failed.row == 0:
                    if first is None:
                        offset = got.batch.column("offset")[0].as_py()
                        first = tp, malformed(tp, offset, column, fmt, failed.reason, _RELEASED)
                    break  # nothing of this partition is handed out: no other column to decode
            handed[tp] = decoded.num_rows
            if decoded.num_rows:
                out[tp] = decoded
    except BaseException:
        # A writer schema the format cannot use (PayloadSchemaError), or anything unforeseen:
        # everything goes back still acquired, and later polls can take again.
        fetcher.settle(taken, {})
        raise
    if first is not None:
        fetcher.settle(taken, {}, release=first[0])
        raise first[1]
    fetcher.settle(taken, handed)
    return out
