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

``AvroFormat(schema)`` reads Avro binary datums, and ``AvroFormat(confluent=True, ...)``
Confluent's framing of them (a schema id before each), into the column types Spark's
``from_avro`` gives; a record that does not decode is a row of null fields, as ``from_avro``
gives it (PERMISSIVE, its raw bytes in the corrupt-record column, which is binary here), or
fails the read (FAILFAST).

Pass a format as ``getmany_arrow(value_format=...)`` (or ``key_format=``) or to
:func:`ferrokafka.arrow.read` and :func:`~ferrokafka.arrow.read_async`; to
``send_arrow(value_format=...)`` it writes a struct column as JSON, as Spark's ``to_json``
does, or as Avro.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import _native
from .ddl import schema_from_ddl
from .errors import PayloadSchemaError
from .schema_registry import SchemaNotFound, SchemaRegistry, SchemaRegistryUnavailable

__all__ = [
    "AvroFormat",
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
    #: The corrupt-record column's type: text for a text format, the raw bytes otherwise.
    corrupt_binary = False

    async def prepare(self, batch: Any, column: str) -> None:
        """Get what decoding ``batch``'s ``column`` needs beyond the bytes (the writer schemas
        of a registry); the reads await this before :meth:`apply`."""

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
            kind = pa.binary() if self.corrupt_binary else pa.string()
            if not bad:  # the usual batch: no Python object per row
                corrupt = pa.nulls(batch.num_rows, kind)
            else:
                raw: list[str | bytes | None] = [None] * batch.num_rows
                source = batch.column(index)
                for row, _ in bad:
                    payload = source[row].as_py()
                    if isinstance(payload, bytes) and not self.corrupt_binary:
                        payload = payload.decode("utf-8", "replace")
                    raw[row] = payload
                corrupt = pa.array(raw, kind)
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


class _SchemaProblem(Exception):
    """A writer schema that cannot be had or used, at a row; ``AvroFormat.apply`` names the
    record."""

    def __init__(self, message: str, row: int, schema_id: int) -> None:
        super().__init__(message)
        self.row = row
        self.schema_id = schema_id


def _schema_text(schema: Any, name: str) -> str:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        return json.dumps(schema)
    raise TypeError(f"{name} must be Avro schema JSON text (or a dict of it), got {schema!r}")


class AvroFormat(PayloadFormat):
    """Avro payloads into a struct column, with the types Spark's ``from_avro`` gives: records
    → struct, arrays → list, maps → map<string, _>, a union of null and one type → that type,
    unions of int|long → int64 and float|double → float64, other unions → struct of
    ``member0``, ``member1``, ... (the branch written set, the others null), enums → string,
    fixed → binary, decimal → decimal128, date → date32, timestamp-millis/micros →
    timestamp[us, UTC], local-timestamp-millis/micros → timestamp[us], uuid → string. Every
    field of the result is nullable. The schema's top level must be a record.

    * ``AvroFormat(schema)``: each payload is one Avro binary datum written with ``schema``
      (Avro schema JSON text, or a dict of it), as Spark's ``from_avro``/``to_avro`` read and
      write them.
    * ``AvroFormat(confluent=True, schemas={id: schema}, registry_url=...)``: Confluent's
      framing, a magic byte 0 and the writer schema's 4-byte big-endian id before each datum.
      A schema is taken from ``schemas``, else fetched once per id from the Schema Registry
      at ``registry_url`` (``http(s)://[user:password@]host:port``; see
      :mod:`ferrokafka.schema_registry`). An id neither has is
      :class:`~ferrokafka.errors.PayloadSchemaError` naming the record and the id, in any mode.

    ``reader_schema``: resolve each writer schema to this one by Avro's rules (added fields
    take their defaults, removed ones are dropped, int → long → float → double and string ↔
    bytes promoted); the column has its type. Without it the column has the writer schema's
    type, and with Confluent framing every id of a batch must give the same type, or the read
    fails with ``PayloadSchemaError`` naming the later id.

    A record that does not decode (cut short, a length or union index past its bounds, an
    unframed payload) is a row of null fields, as Spark's ``from_avro`` gives in PERMISSIVE
    mode; a null payload is a null row. A map's entries keep the order they were written in,
    except through a reader schema (resolved maps are unordered).

    ``schema`` with ``schema_id`` (and ``confluent=True``) is what ``send_arrow`` writes:
    the struct column as datums of ``schema``, framed with ``schema_id``; it also reads that
    id. ``mode`` and ``corrupt_column`` are as for :class:`JsonFormat`, except that the
    corrupt-record column holds the raw bytes (binary).
    """

    corrupt_binary = True

    def __init__(
        self,
        schema: Any = None,
        *,
        confluent: bool = False,
        schema_id: int | None = None,
        schemas: dict[int, Any] | None = None,
        registry_url: str | None = None,
        reader_schema: Any = None,
        mode: str = "PERMISSIVE",
        corrupt_column: str | None = "_corrupt_record",
        registry_timeout: float = 10.0,
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self.mode = mode
        self.corrupt_column = corrupt_column
        self.confluent = confluent
        self.schema = None if schema is None else _schema_text(schema, "schema")
        self.reader_schema = (
            None if reader_schema is None else _schema_text(reader_schema, "reader_schema")
        )
        self.schema_id = schema_id
        self._typed_by: str | None = None
        self._reader = _native.AvroReader(self.reader_schema)
        self.registry = (
            None if registry_url is None else SchemaRegistry(registry_url, timeout=registry_timeout)
        )
        if not confluent:
            for name, given in (
                ("schema_id", schema_id),
                ("schemas", schemas),
                ("registry_url", registry_url),
            ):
                if given is not None:
                    raise ValueError(f"{name} is for confluent=True (Confluent's framing)")
            if self.schema is None:
                raise ValueError("AvroFormat needs the writer schema of its plain datums")
            self._reader.add_writer(None, self.schema)
            return
        if (self.schema is None) != (schema_id is None):
            raise ValueError("with confluent=True, schema and schema_id go together")
        known = {int(k): _schema_text(v, f"schemas[{k}]") for k, v in (schemas or {}).items()}
        if self.schema is not None and schema_id is not None:
            known.setdefault(schema_id, self.schema)
        if not known and self.registry is None:
            raise ValueError(
                "AvroFormat(confluent=True) needs schemas=, registry_url= or schema with schema_id"
            )
        for schema_id_, text in known.items():
            self._reader.add_writer(schema_id_, text)
        # The column's type before any record: the reader schema's, or the one writer's.
        self._typed_by = self.reader_schema or (
            next(iter(known.values())) if len(set(known.values())) == 1 else None
        )

    def _unknown(self, payloads: Any) -> list[tuple[int, int]]:
        batch = _one_column(payloads)
        return [
            (schema_id, row)
            for schema_id, row in _native.avro_schema_ids(batch)
            if not self._reader.has_writer(schema_id)
        ]

    async def prepare(self, batch: Any, column: str) -> None:
        if not self.confluent or self.registry is None or not batch.num_rows:
            return
        for schema_id, row in self._unknown(batch.column(column)):
            try:
                text = await self.registry.schema(schema_id)
                self._reader.add_writer(schema_id, text)
            except (SchemaNotFound, SchemaRegistryUnavailable, ValueError) as exc:
                raise _named(batch, column, _SchemaProblem(str(exc), row, schema_id)) from None

    def decode(self, payloads: Any) -> tuple[Any, list[tuple[int, str]]]:
        import pyarrow as pa

        if self.confluent and len(payloads) == 0:
            return self._empty(), []
        batch = _one_column(payloads)
        if self.confluent:
            for schema_id, row in self._unknown(payloads):
                where = (
                    "not in schemas= and no registry_url is given"
                    if self.registry is None
                    else "not fetched from the registry (the read did not prepare it)"
                )
                raise _SchemaProblem(f"schema id {schema_id} is {where}", row, schema_id)
        try:
            columns, bad = self._reader.decode(
                batch, confluent=self.confluent, fail_fast=self.mode == "FAILFAST"
            )
        except ValueError as exc:
            if len(exc.args) == 3:  # (message, row, schema id): ids giving other columns
                raise _SchemaProblem(*exc.args) from None
            raise
        return pa.record_batch(columns).column(0), bad

    def _empty(self) -> Any:
        import pyarrow as pa

        if self._typed_by is None:
            raise ValueError(
                "AvroFormat(confluent=True) with several writer schemas (or a registry) and no "
                "reader_schema gives its column type only with the records: give "
                "reader_schema for a read whose schema is set before them"
            )
        plain = _native.AvroReader(self.reader_schema)
        plain.add_writer(None, self._typed_by)
        columns, _ = plain.decode(_one_column(_empty_payloads()), confluent=False)
        return pa.record_batch(columns).column(0)

    def apply(self, batch: Any, column: str) -> tuple[Any, Malformed | None]:
        try:
            return super().apply(batch, column)
        except _SchemaProblem as problem:
            raise _named(batch, column, problem) from None

    def encode(self, values: Any) -> Any:
        """Each row as a datum of ``schema`` (fields matched by name), framed with
        ``schema_id`` when ``confluent``; a null row a null payload. ValueError naming the
        field and row that does not fit the schema."""
        import pyarrow as pa

        if self.schema is None:
            raise ValueError("writing Avro needs schema (and schema_id with confluent=True)")
        if not pa.types.is_struct(values.type):
            raise TypeError(f"expected a struct column to write as Avro, got {values.type}")
        batch = pa.record_batch([values], names=["value"])
        schema_id = self.schema_id if self.confluent else None
        return pa.record_batch(_native.encode_avro(batch, self.schema, schema_id)).column(0)

    def __repr__(self) -> str:
        if not self.confluent:
            return f"AvroFormat(<schema>, mode={self.mode!r})"
        source = "registry" if self.registry is not None else "schemas"
        return f"AvroFormat(confluent=True, <{source}>, mode={self.mode!r})"


def _one_column(payloads: Any) -> Any:
    import pyarrow as pa

    return pa.record_batch([payloads], names=["payload"])


def _named(batch: Any, column: str, problem: _SchemaProblem) -> PayloadSchemaError:
    names = batch.schema.names

    def at(name: str, default: Any) -> Any:
        return batch.column(name)[problem.row].as_py() if name in names else default

    topic, partition, offset = at("topic", ""), at("partition", -1), at("offset", -1)
    return PayloadSchemaError(
        f"{topic}[{partition}] offset {offset}: the record's {column}: {problem}",
        topic,
        partition,
        offset,
        problem.schema_id,
    )


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
