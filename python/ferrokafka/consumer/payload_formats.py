"""``getmany_arrow``'s key and value formats applied to the batches a poll took, so that a
malformed record in ``FAILFAST`` mode loses nothing: the records before it are handed out and
the position is left at it; when it is the first record a partition would hand out, the poll
raises and every batch it took is given back (positions moved back to their first rows), as
they are when a format cannot have or use a record's writer schema
(:class:`~ferrokafka.errors.PayloadSchemaError`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import errors as Errors
from ..structs import TopicPartition

if TYPE_CHECKING:
    from ..formats import PayloadFormat

__all__ = ["column_formats", "decode_payloads", "malformed", "prepare_payloads"]


def column_formats(
    key_format: PayloadFormat | None, value_format: PayloadFormat | None
) -> list[tuple[str, PayloadFormat]]:
    """``(column, format)`` of the formats given, the key's first."""
    return [(c, f) for c, f in (("key", key_format), ("value", value_format)) if f is not None]


def malformed(
    tp: TopicPartition, offset: int, column: str, fmt: PayloadFormat, reason: str, then: str = ""
) -> Errors.PayloadFormatError:
    """The error of a record whose ``column`` does not read as ``fmt`` in FAILFAST mode."""
    return Errors.PayloadFormatError(
        f"{tp.topic}[{tp.partition}] offset {offset}: the record's {column} does not read as "
        f"{fmt!r}: {reason}{then}",
        tp.topic,
        tp.partition,
        offset,
    )


def _give_back(consumer: Any, got: dict[TopicPartition, Any]) -> None:
    for tp, batch in got.items():
        if batch.num_rows:
            consumer.seek(tp, batch.column("offset")[0].as_py())


async def prepare_payloads(
    consumer: Any,
    got: dict[TopicPartition, Any],
    key_format: PayloadFormat | None,
    value_format: PayloadFormat | None,
) -> None:
    """Get what the formats need beyond the bytes (a registry's writer schemas). The batches
    are already taken from the consumer: if this fails or is cancelled while it waits for a
    registry, they are given back, so that nothing taken is lost."""
    try:
        for batch in got.values():
            for column, fmt in column_formats(key_format, value_format):
                if batch.num_rows:
                    await fmt.prepare(batch, column)
    except BaseException:
        _give_back(consumer, got)
        raise


def decode_payloads(
    consumer: Any,
    got: dict[TopicPartition, Any],
    key_format: PayloadFormat | None,
    value_format: PayloadFormat | None,
) -> dict[TopicPartition, Any]:
    formats = column_formats(key_format, value_format)
    if not formats:
        return got
    out: dict[TopicPartition, Any] = {}
    first: Errors.PayloadFormatError | None = None
    cut: dict[TopicPartition, int] = {}
    for tp, batch in got.items():
        if not batch.num_rows:
            continue
        offsets = batch.column("offset")
        decoded = batch
        for column, fmt in formats:
            try:
                decoded, failed = fmt.apply(decoded, column)
            except Errors.PayloadSchemaError:
                _give_back(consumer, got)
                raise
            if failed is None:
                continue
            offset = offsets[failed.row].as_py()
            cut[tp] = offset
            if failed.row == 0 and first is None:
                first = malformed(tp, offset, column, fmt, failed.reason)
        if decoded.num_rows:
            out[tp] = decoded
    if first is not None:
        _give_back(consumer, got)
        raise first
    for tp, offset in cut.items():
        consumer.seek(tp, offset)
    return out
