"""The Spark source's payload options: the ``key`` and ``value`` columns read as structs, decoded
in Rust on the executors (:mod:`ferrokafka.formats`).

* ``valueFormat`` / ``keyFormat``: ``binary`` (the default: Spark's own columns), ``json``
  (``valueSchema`` / ``keySchema`` Spark DDL, read as ``from_json`` reads) or ``avro``
  (an Avro schema, JSON text, read as ``from_avro`` reads plain datums);
* ``schemaRegistryAddress``: the Avro columns are in Confluent's framing (a magic byte and the
  writer schema's id before each datum), which Spark's ``from_avro`` cannot read
  (SPARK-34652); the writer schemas are looked up by id in this Schema Registry on the
  executors, and ``valueSchema`` / ``keySchema`` is the reader schema each is resolved to
  (Spark needs the DataFrame's schema before any record is read).
  ``schemaRegistryTimeoutMs``: per request (default 10000);
* ``avroSchemasById``: Confluent's framing too, with the writer schemas given as a JSON object
  of id to schema (looked up before the registry when both are given);
* ``mode`` (``PERMISSIVE`` or ``FAILFAST``, for both columns), ``columnNameOfCorruptRecord``
  and ``keyColumnNameOfCorruptRecord`` (both ``_corrupt_record`` by default: with both
  formats in ``PERMISSIVE`` mode, name one of them otherwise).

An option that goes with none of the formats given is refused, naming it, as are the names
other tools give a registry's address (one name is accepted, so that a misspelt option is not
read as no registry at all).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..arrow.schema import arrow_schema
from ..ddl import ddl_from_arrow
from ..formats import AvroFormat, JsonFormat, PayloadFormat
from ..schema_registry import SchemaRegistry
from .security import Secret, reveal

__all__ = ["ColumnFormat", "formatted_spark_schema", "parse_payload_formats"]

_FORMATS = ("binary", "json", "avro")
#: What other tools call a registry's address: refused with the name read here.
_REGISTRY_LOOKALIKES = (
    "schemaregistryurl",
    "schema.registry.url",
    "kafka.schema.registry.url",
    "schemaregistry",
)
_DEFAULT_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class ColumnFormat:
    """How one column (``key`` or ``value``) is read: ``kind`` ``json`` (``schema`` Spark
    DDL) or ``avro`` (``schema`` an Avro schema: the writer schema of plain datums, or the
    reader schema with Confluent's framing, given by ``registry`` and/or ``schemas_by_id``)."""

    column: str
    kind: str
    schema: str
    mode: str = "PERMISSIVE"
    corrupt_column: str = "_corrupt_record"
    registry: Secret | None = None
    schemas_by_id: tuple[tuple[int, str], ...] = ()
    registry_timeout_ms: int = _DEFAULT_TIMEOUT_MS

    @property
    def confluent(self) -> bool:
        return self.registry is not None or bool(self.schemas_by_id)

    def payload_format(self) -> PayloadFormat:
        """The format, made once per process: a registry's schemas are then fetched once per
        executor, not once per task."""
        made = _made.get(self)
        if made is None:
            made = _made[self] = self._make()
        return made

    def _make(self) -> PayloadFormat:
        if self.kind == "json":
            return JsonFormat(self.schema, mode=self.mode, corrupt_column=self.corrupt_column)
        if not self.confluent:
            return AvroFormat(self.schema, mode=self.mode, corrupt_column=self.corrupt_column)
        return AvroFormat(
            confluent=True,
            schemas=dict(self.schemas_by_id) or None,
            registry_url=None if self.registry is None else reveal(self.registry),
            registry_timeout=self.registry_timeout_ms / 1000,
            reader_schema=self.schema,
            mode=self.mode,
            corrupt_column=self.corrupt_column,
        )

    def struct_ddl(self) -> str:
        """The column's fields as Spark DDL."""
        if self.kind == "json":
            return self.schema
        import pyarrow as pa

        empty = pa.array([], pa.binary())
        return ddl_from_arrow(self.payload_format().decode(empty)[0].type)


_made: dict[ColumnFormat, PayloadFormat] = {}


def formatted_spark_schema(
    kafka_schema: str, key: ColumnFormat | None, value: ColumnFormat | None
) -> str:
    """``kafka_schema`` (DDL) with the formatted columns structs, and their corrupt-record
    columns last in ``PERMISSIVE`` mode, the key's first."""
    out = kafka_schema
    corrupt = []
    for fmt in (key, value):
        if fmt is None:
            continue
        out = out.replace(f"{fmt.column} binary", f"{fmt.column} struct<{fmt.struct_ddl()}>", 1)
        if fmt.mode == "PERMISSIVE":
            kind = "binary" if fmt.kind == "avro" else "string"
            corrupt.append(f", `{fmt.corrupt_column}` {kind}")
    return out + "".join(corrupt)


def parse_payload_formats(
    opts: Mapping[str, str],
) -> tuple[ColumnFormat | None, ColumnFormat | None]:
    """The key's and the value's formats of lower-cased options ``opts``, checked: a bad
    schema, mode or combination is a ``ValueError`` naming the option, on the driver."""
    for name in _REGISTRY_LOOKALIKES:
        if name in opts:
            raise ValueError(
                f"option {name!r} is not read: give the Schema Registry's address as "
                "'schemaRegistryAddress'"
            )
    kinds = {side: _kind(opts, side) for side in ("key", "value")}
    avro = [side for side, kind in kinds.items() if kind == "avro"]
    for name, needs in (
        ("schemaregistryaddress", "schemaRegistryAddress"),
        ("avroschemasbyid", "avroSchemasById"),
    ):
        if name in opts and not avro:
            raise ValueError(f"option {needs!r} needs keyFormat=avro or valueFormat=avro")
    if "schemaregistrytimeoutms" in opts and "schemaregistryaddress" not in opts:
        raise ValueError("option 'schemaRegistryTimeoutMs' needs 'schemaRegistryAddress'")
    if "mode" in opts and not any(kinds.values()):
        raise ValueError("option 'mode' needs keyFormat or valueFormat (json or avro)")
    mode = opts.get("mode", "PERMISSIVE").strip().upper()
    registry, by_id, timeout_ms = _confluent(opts) if avro else (None, (), _DEFAULT_TIMEOUT_MS)
    made: dict[str, ColumnFormat | None] = {}
    for side, kind in kinds.items():
        if kind is None:
            made[side] = None
            continue
        fmt = ColumnFormat(
            side,
            kind,
            _schema(opts, side, kind, confluent=registry is not None or bool(by_id)),
            mode,
            _corrupt_column(opts, side),
            registry if kind == "avro" else None,
            by_id if kind == "avro" else (),
            timeout_ms,
        )
        try:
            fmt.payload_format()  # a bad schema or mode fails here, on the driver
        except ValueError as exc:
            raise ValueError(f"option {_option(side, 'schema')!r}: {exc}") from None
        made[side] = fmt
    key, value = made["key"], made["value"]
    if key and value and mode == "PERMISSIVE" and key.corrupt_column == value.corrupt_column:
        raise ValueError(
            f"keyFormat and valueFormat both keep malformed records in {key.corrupt_column!r}: "
            "give keyColumnNameOfCorruptRecord or columnNameOfCorruptRecord another name"
        )
    return key, value


def _option(side: str, name: str) -> str:
    """An option's name as documented: ``valueSchema``, ``keySchema``."""
    return side + name[0].upper() + name[1:]


def _kind(opts: Mapping[str, str], side: str) -> str | None:
    kind = opts.get(f"{side}format", "binary").strip().lower()
    if kind not in _FORMATS:
        raise ValueError(
            f"Invalid value {kind!r} for option {_option(side, 'format')!r}: "
            f"{' or '.join(_FORMATS)}"
        )
    if kind != "binary":
        return kind
    corrupt = "columnnameofcorruptrecord" if side == "value" else "keycolumnnameofcorruptrecord"
    for name in (f"{side}schema", corrupt):
        if name in opts:
            raise ValueError(f"option {name!r} needs {_option(side, 'format')}=json or avro")
    return None


def _schema(opts: Mapping[str, str], side: str, kind: str, *, confluent: bool) -> str:
    schema = opts.get(f"{side}schema", "").strip()
    if schema:
        return schema
    name = _option(side, "schema")
    if kind == "json":
        raise ValueError(f"{side}Format=json needs the option {name!r} (Spark DDL)")
    if confluent:
        raise ValueError(
            f"{side}Format=avro with Confluent's framing needs the option {name!r}: the "
            "reader schema (Avro, JSON text) each writer schema is resolved to, since Spark "
            "needs the DataFrame's schema before any record is read"
        )
    raise ValueError(f"{side}Format=avro needs the option {name!r} (an Avro schema, JSON text)")


def _corrupt_column(opts: Mapping[str, str], side: str) -> str:
    name = "columnNameOfCorruptRecord" if side == "value" else "keyColumnNameOfCorruptRecord"
    corrupt = opts.get(name.lower(), "_corrupt_record").strip()
    if corrupt in arrow_schema(True).names:
        raise ValueError(f"{name} {corrupt!r} is a column of the Kafka schema")
    return corrupt


def _confluent(opts: Mapping[str, str]) -> tuple[Secret | None, tuple[tuple[int, str], ...], int]:
    """``schemaRegistryAddress`` (checked, kept secret: it may hold a password),
    ``avroSchemasById`` and ``schemaRegistryTimeoutMs``."""
    registry = None
    address = opts.get("schemaregistryaddress")
    if address is not None:
        try:
            SchemaRegistry(address.strip())
        except ValueError:
            raise ValueError(
                "option 'schemaRegistryAddress' must be an http(s) URL "
                "(http(s)://[user:password@]host:port[/path])"
            ) from None
        registry = Secret(address.strip())
    by_id: tuple[tuple[int, str], ...] = ()
    raw = opts.get("avroschemasbyid")
    if raw is not None:
        by_id = _schemas_by_id(raw)
    timeout_ms = _DEFAULT_TIMEOUT_MS
    raw_timeout = opts.get("schemaregistrytimeoutms")
    if raw_timeout is not None:
        try:
            timeout_ms = int(raw_timeout.strip())
        except ValueError:
            timeout_ms = 0
        if timeout_ms <= 0:
            raise ValueError(
                f"Invalid value {raw_timeout!r} for option 'schemaRegistryTimeoutMs': "
                "a positive number of milliseconds"
            )
    return registry, by_id, timeout_ms


def _schemas_by_id(raw: str) -> tuple[tuple[int, str], ...]:
    example = '{"7": {"type": "record", ...}}'
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        raise ValueError(
            f"option 'avroSchemasById' must be a JSON object of schema ids to Avro schemas, "
            f"e.g. {example}"
        )
    out = []
    for key, schema in parsed.items():
        try:
            schema_id = int(key)
        except ValueError:
            raise ValueError(
                f"option 'avroSchemasById': {key!r} is not a schema id (an integer)"
            ) from None
        if not 0 <= schema_id < 2**31:
            raise ValueError(f"option 'avroSchemasById': schema id {schema_id} is out of range")
        text = schema if isinstance(schema, str) else json.dumps(schema)
        try:
            AvroFormat(confluent=True, schemas={schema_id: text})
        except ValueError as exc:
            raise ValueError(f"option 'avroSchemasById', schema id {schema_id}: {exc}") from None
        out.append((schema_id, text))
    return tuple(sorted(out))
