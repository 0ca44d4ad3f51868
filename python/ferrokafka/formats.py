"""Payload formats for the Arrow paths: a record's value (or key) decoded in Rust, in one pass
over the batch's column, into a struct column of a schema you give.

``JsonFormat(schema)`` reads JSON by the rules of Spark's ``from_json``: fields the schema
does not name are ignored and absent ones are null; a value that does not fit its field's type
makes that field null and the record *malformed*, the other fields keep their values; a
payload that is not a JSON object is malformed with every field null; a null or empty payload
is a null struct. ``mode`` says what a malformed record does:

* ``"PERMISSIVE"`` (the default): it stays, and ``corrupt_column`` (``_corrupt_record``, as
  Spark names it; None for none) holds its raw payload as text; null for the others;
* ``"FAILFAST"``: the read raises :class:`~ferrokafka.errors.PayloadFormatError` naming its
  topic, partition and offset. ``getmany_arrow`` first hands out the records before it and
  raises when the malformed one comes next; the position stays at it until you seek past it.

Pass a format as ``getmany_arrow(value_format=...)`` (or ``key_format=``) or to
:func:`ferrokafka.arrow.read` and :func:`~ferrokafka.arrow.read_async`; to
``send_arrow(value_format=...)`` it writes a struct column as JSON, as Spark's ``to_json``
does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _native
from .ddl import schema_from_ddl

__all__ = [
    "JsonFormat",
    "Malformed",
    "PayloadFormat",
    "check_formats",
    "encoded_batches",
    "formatted_schema",
]

_MODES = ("PERMISSIVE", "FAILFAST")


@dataclass(frozen=True)
class Malformed:
    """The first malformed record of a column read in ``FAILFAST`` mode."""

    row: int
    reason: str


class PayloadFormat:
    """A format a key or value column is decoded from (see :class:`JsonFormat`)."""

    mode: str
    corrupt_column: str | None

    def decode(self, payloads: Any) -> tuple[Any, list[tuple[int, str]]]:
        """``payloads`` (a binary or string ``pyarrow.Array``) as a struct array, and the
        malformed rows with why; in ``FAILFAST`` mode the array stops before the first
        malformed row, which is the one listed."""
        raise NotImplementedError

    def encode(self, values: Any) -> Any:
        """``values`` (a struct ``pyarrow.Array``) as payloads: a binary ``pyarrow.Array``, a
        null row a null payload."""
        raise NotImplementedError

    def encoded(self, batch: Any, column: str) -> Any:
        """``batch`` with its struct ``column`` encoded in place (for ``send_arrow``)."""
        index = batch.schema.get_field_index(column)
        if index < 0:
            return batch
        return batch.set_column(index, column, self.encode(batch.column(index)))

    def apply(self, batch: Any, column: str) -> tuple[Any, Malformed | None]:
        """``batch`` with ``column`` decoded in place (and the corrupt-record column added in
        ``PERMISSIVE`` mode); in ``FAILFAST`` mode cut before the first malformed row, which
        is returned too."""
        import pyarrow as pa

        index = batch.schema.get_field_index(column)
        values, bad = self.decode(batch.column(index))
        failed = None
        if self.mode == "FAILFAST" and bad:
            failed = Malformed(*bad[0])
            batch = batch.slice(0, failed.row)
        out = batch.set_column(index, column, values)
        if self.mode == "PERMISSIVE" and self.corrupt_column is not None:
            if not bad:  # the usual batch: no Python object per row
                corrupt = pa.nulls(batch.num_rows, pa.string())
            else:
                raw: list[str | None] = [None] * batch.num_rows
                source = batch.column(index)
                for row, _ in bad:
                    payload = source[row].as_py()
                    if isinstance(payload, bytes):
                        payload = payload.decode("utf-8", "replace")
                    raw[row] = payload
                corrupt = pa.array(raw, pa.string())
            out = out.append_column(self.corrupt_column, corrupt)
        return out, failed


class JsonFormat(PayloadFormat):
    """JSON payloads into a struct column of ``schema``: a ``pyarrow.Schema`` or struct type
    (or anything with ``__arrow_c_schema__``), or Spark DDL (``"id BIGINT, tags
    ARRAY<STRING>"``, see :mod:`ferrokafka.ddl`). Booleans, integers, floating point, strings,
    binary (base64 text), dates, timestamps (microseconds; text, or integer seconds),
    decimals, structs, lists and maps with string keys. Every field of the result is
    nullable."""

    def __init__(
        self,
        schema: Any,
        *,
        mode: str = "PERMISSIVE",
        corrupt_column: str | None = "_corrupt_record",
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self._described = schema if isinstance(schema, str) else None
        self.schema = schema_from_ddl(schema) if isinstance(schema, str) else schema
        self.mode = mode
        self.corrupt_column = corrupt_column
        # A type JSON is not read into, or not a schema at all, fails here, not at the first
        # record.
        self.decode(_empty_payloads())

    def decode(self, payloads: Any) -> tuple[Any, list[tuple[int, str]]]:
        import pyarrow as pa

        batch = pa.record_batch([payloads], names=["payload"])
        columns, bad = _native.decode_json(batch, self.schema, fail_fast=self.mode == "FAILFAST")
        return pa.record_batch(columns).column(0), bad

    def encode(self, values: Any) -> Any:
        """As Spark's ``to_json`` writes a struct: null fields left out, binary as base64,
        dates as ``yyyy-mm-dd``, timestamps as ``yyyy-mm-ddThh:mm:ss.SSSZ`` (UTC), NaN and
        the infinities as strings, decimals as plain digits."""
        import pyarrow as pa

        if not pa.types.is_struct(values.type):
            raise TypeError(f"expected a struct column to write as JSON, got {values.type}")
        batch = pa.record_batch([values], names=["value"])
        return pa.record_batch(_native.encode_json(batch)).column(0)

    def __repr__(self) -> str:
        described = self._described
        if described is None:
            fields = getattr(self.schema, "names", None)
            described = f"<{len(fields)} fields: {', '.join(fields)}>" if fields else "<schema>"
        return f"JsonFormat({described!r}, mode={self.mode!r})"


def _empty_payloads() -> Any:
    import pyarrow as pa

    return pa.array([], pa.binary())


def check_formats(key_format: PayloadFormat | None, value_format: PayloadFormat | None) -> None:
    """TypeError for a format that is not one; ValueError when both would add a corrupt-record
    column of the same name."""
    for name, fmt in (("key_format", key_format), ("value_format", value_format)):
        if fmt is not None and not isinstance(fmt, PayloadFormat):
            raise TypeError(f"{name} must be a PayloadFormat (e.g. JsonFormat), got {fmt!r}")
    corrupt = [
        f.corrupt_column
        for f in (key_format, value_format)
        if f is not None and f.mode == "PERMISSIVE" and f.corrupt_column is not None
    ]
    if len(corrupt) == 2 and corrupt[0] == corrupt[1]:
        raise ValueError(
            f"key_format and value_format both keep malformed records in {corrupt[0]!r}: give "
            "one of them another corrupt_column"
        )


def formatted_schema(
    schema: Any, key_format: PayloadFormat | None, value_format: PayloadFormat | None
) -> Any:
    """``schema`` (Spark's Kafka schema) as the formats make it: the decoded columns' types,
    and corrupt-record columns at the end, key's first."""
    import pyarrow as pa

    batch = pa.RecordBatch.from_pylist([], schema=schema)
    for column, fmt in (("key", key_format), ("value", value_format)):
        if fmt is not None:
            batch, _ = fmt.apply(batch, column)
    return batch.schema


def encoded_batches(
    data: Any, key_format: PayloadFormat | None, value_format: PayloadFormat | None
) -> Any:
    """Arrow ``data`` (anything with ``__arrow_c_array__`` or ``__arrow_c_stream__``) as a
    ``pyarrow.Table`` with its struct ``key``/``value`` columns written by the formats."""
    import pyarrow as pa

    for name, fmt in (("key_format", key_format), ("value_format", value_format)):
        if fmt is not None and not isinstance(fmt, PayloadFormat):
            raise TypeError(f"{name} must be a PayloadFormat (e.g. JsonFormat), got {fmt!r}")
    table = pa.table(data)
    batches = []
    for batch in table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]:
        for column, fmt in (("key", key_format), ("value", value_format)):
            if fmt is not None:
                batch = fmt.encoded(batch, column)
        batches.append(batch)
    return pa.Table.from_batches(batches)
