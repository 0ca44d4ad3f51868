"""Spark SQL's DDL for a schema (``"id BIGINT, tags ARRAY<STRING>, at TIMESTAMP"``) read into a
``pyarrow.Schema``, without Spark, with the Arrow types Spark's own Arrow conversion gives:
BOOLEAN, TINYINT/BYTE, SMALLINT/SHORT, INT/INTEGER, BIGINT/LONG, FLOAT/REAL, DOUBLE, STRING
(and VARCHAR(n), CHAR(n)), BINARY, DATE, TIMESTAMP (microseconds, UTC), DECIMAL(p, s) (also
DEC and NUMERIC; DECIMAL alone is (10, 0)), ARRAY<t>, MAP<k, v> and STRUCT<name: t, ...>. A
field may end in ``NOT NULL`` and a ``COMMENT '...'``; names may be quoted with backquotes.

:func:`ddl_from_arrow` goes the other way, for a column whose type comes from elsewhere (an
Avro schema) and that Spark is told the type of."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ddl_from_arrow", "schema_from_ddl"]

_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")


def _primitive(pa: Any, name: str) -> Any:
    return {
        "BOOLEAN": pa.bool_(),
        "TINYINT": pa.int8(),
        "BYTE": pa.int8(),
        "SMALLINT": pa.int16(),
        "SHORT": pa.int16(),
        "INT": pa.int32(),
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
        "LONG": pa.int64(),
        "FLOAT": pa.float32(),
        "REAL": pa.float32(),
        "DOUBLE": pa.float64(),
        "STRING": pa.string(),
        "BINARY": pa.binary(),
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP_LTZ": pa.timestamp("us", tz="UTC"),
    }.get(name)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        at = 0
        while at < len(text):
            if text[at:].strip() == "":
                break
            m = _TOKEN.match(text, at)
            if m is None:
                raise ValueError(f"schema {text!r}: cannot read it at {text[at:]!r}")
            self.tokens.append((m.group(1), m.start(1)))
            at = m.end()
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            where = "the end" if token is None else repr(token)
            want = f"{expected!r}" if expected else "more"
            raise ValueError(f"schema {self.text!r}: expected {want}, found {where}")
        self.at += 1
        return token

    def name(self) -> str:
        token = self.take()
        if token.startswith("`"):
            return token[1:-1].replace("``", "`")
        if not (token[0].isalpha() or token[0] == "_"):
            raise ValueError(f"schema {self.text!r}: {token!r} is not a field name")
        return token

    def fields(self, pa: Any, end: str | None) -> list[Any]:
        fields = []
        while True:
            name = self.name()
            if end is not None and self.peek() == ":":
                self.take(":")
            data_type = self.data_type(pa)
            nullable = True
            if (self.peek() or "").upper() == "NOT":
                self.take("NOT")
                self.take("NULL")
                nullable = False
            if (self.peek() or "").upper() == "COMMENT":
                self.take("COMMENT")
                self.take()
            fields.append(pa.field(name, data_type, nullable))
            if self.peek() != ",":
                break
            self.take(",")
        if end is not None:
            self.take(end)
        return fields

    def data_type(self, pa: Any) -> Any:
        word = self.take().upper()
        if word == "ARRAY":
            self.take("<")
            item = self.data_type(pa)
            self.take(">")
            return pa.list_(item)
        if word == "MAP":
            self.take("<")
            key = self.data_type(pa)
            self.take(",")
            value = self.data_type(pa)
            self.take(">")
            return pa.map_(key, value)
        if word == "STRUCT":
            self.take("<")
            if self.peek() == ">":
                self.take(">")
                return pa.struct([])
            return pa.struct(self.fields(pa, ">"))
        if word in ("DECIMAL", "DEC", "NUMERIC"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = int(self.take())
                if self.peek() == ",":
                    self.take(",")
                    scale = int(self.take())
                self.take(")")
            return pa.decimal128(precision, scale)
        if word in ("VARCHAR", "CHAR"):
            self.take("(")
            self.take()
            self.take(")")
            return pa.string()
        primitive = _primitive(pa, word)
        if primitive is None:
            raise ValueError(f"schema {self.text!r}: {word} is not a type read here")
        return primitive


def schema_from_ddl(text: str) -> Any:
    """``text`` (Spark DDL: comma-separated ``name type`` fields, or ``STRUCT<...>``) as a
    ``pyarrow.Schema``; ValueError naming what cannot be read."""
    import pyarrow as pa

    parser = _Parser(text)
    if (parser.peek() or "").upper() == "STRUCT" and parser.at + 1 < len(parser.tokens):
        if parser.tokens[1][0] == "<":
            struct = parser.data_type(pa)
            fields = list(struct)
        else:
            fields = parser.fields(pa, None)
    else:
        fields = parser.fields(pa, None)
    if parser.peek() is not None:
        raise ValueError(f"schema {text!r}: unexpected {parser.peek()!r}")
    return pa.schema(fields)


def _ddl_type(pa: Any, t: Any) -> str:
    if pa.types.is_struct(t):
        inner = ", ".join(f"{_quoted(f.name)}: {_ddl_type(pa, f.type)}" for f in t)
        return f"STRUCT<{inner}>"
    if pa.types.is_list(t):
        return f"ARRAY<{_ddl_type(pa, t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{_ddl_type(pa, t.key_type)}, {_ddl_type(pa, t.item_type)}>"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz is not None else "TIMESTAMP_NTZ"
    if pa.types.is_null(t):
        return "VOID"
    for name in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"):
        if _primitive(pa, name) == t:
            return name
    for name in ("STRING", "BINARY", "DATE"):
        if _primitive(pa, name) == t:
            return name
    raise ValueError(f"{t} has no Spark SQL type here")


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def ddl_from_arrow(fields: Any) -> str:
    """A struct type's (or ``pyarrow.Schema``'s) fields as Spark DDL (``"`a` INT, `b`
    ARRAY<STRING>"``); ValueError for a type with no Spark SQL type."""
    import pyarrow as pa

    return ", ".join(f"{_quoted(f.name)} {_ddl_type(pa, f.type)}" for f in fields)
