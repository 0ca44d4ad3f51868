"""Avro payloads (``ferrokafka.formats.AvroFormat``): every type Spark's ``from_avro`` reads,
against an independent writer and reader (fastavro); schema evolution through a reader schema;
Confluent's framing with schemas given and from a Schema Registry (a small HTTP server in the
test: 404, a 500 then success, basic auth, one fetch per id); PERMISSIVE and FAILFAST; and
hostile bytes, which are malformed records, never a crash."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import decimal
import io
import json
import random
import threading
import urllib.parse
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import fastavro  # type: ignore[import-untyped]
import pytest

pa = pytest.importorskip("pyarrow")

from ferrokafka import errors as Errors  # noqa: E402
from ferrokafka.arrow import arrow_schema  # noqa: E402
from ferrokafka.consumer.payload_formats import decode_payloads, prepare_payloads  # noqa: E402
from ferrokafka.ddl import ddl_from_arrow  # noqa: E402
from ferrokafka.formats import AvroFormat, check_formats, formatted_schema  # noqa: E402
from ferrokafka.spark.options import parse_formats  # noqa: E402
from ferrokafka.spark.payloads import formatted_spark_schema  # noqa: E402
from ferrokafka.structs import TopicPartition  # noqa: E402

UTC = dt.timezone.utc
ALL: dict[str, Any] = {
    "type": "record",
    "name": "All",
    "namespace": "t",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "n", "type": ["null", "string"]},
        {"name": "il", "type": ["int", "long"]},
        {"name": "u", "type": ["null", "int", "string"]},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {
            "name": "decf",
            "type": {
                "type": "fixed",
                "name": "DF",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 3,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "ltu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "arr", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {
            "name": "rec",
            "type": {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]},
        },
        {"name": "again", "type": ["null", "In"]},
        {"name": "recs", "type": {"type": "array", "items": "In"}},
    ],
}
ARROW = pa.struct(
    [
        ("b", pa.bool_()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("by", pa.binary()),
        ("n", pa.string()),
        ("il", pa.int64()),
        ("u", pa.struct([("member0", pa.int32()), ("member1", pa.string())])),
        ("e", pa.string()),
        ("fx", pa.binary()),
        ("dec", pa.decimal128(9, 2)),
        ("decf", pa.decimal128(18, 3)),
        ("day", pa.date32()),
        ("tsm", pa.timestamp("us", tz="UTC")),
        ("tsu", pa.timestamp("us", tz="UTC")),
        ("ltm", pa.timestamp("us")),
        ("ltu", pa.timestamp("us")),
        ("id", pa.string()),
        ("arr", pa.list_(pa.field("element", pa.int64()))),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("rec", pa.struct([("x", pa.int32())])),
        ("again", pa.struct([("x", pa.int32())])),
        ("recs", pa.list_(pa.field("element", pa.struct([("x", pa.int32())])))),
    ]
)
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def record(k: int) -> dict[str, Any]:
    """A record as fastavro writes it (Python values of each logical type)."""
    return {
        "b": k % 2 == 0,
        "i": -k,
        "l": k << 40,
        "f": 1.5,
        "d": -2.25 * k,
        "s": f"s{k}é",
        "by": bytes([0, 255, k % 256]),
        "n": None if k % 2 else f"n{k}",
        "il": k,
        "u": [None, k, f"u{k}"][k % 3],
        "e": "AB"[k % 2],
        "fx": b"\x01\x02" + bytes([k % 256]),
        "dec": decimal.Decimal(f"-{k}.05"),
        "decf": decimal.Decimal(f"{k}12345.678"),
        "day": dt.date(2024, 2, 29) + dt.timedelta(days=k),
        "tsm": dt.datetime(2024, 2, 29, 12, 34, 56, 789000, tzinfo=UTC),
        "tsu": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        "ltm": dt.datetime(2024, 1, 1, 0, 0, 0, 1000),
        "ltu": dt.datetime(2024, 1, 1, 0, 0, 0, k),
        "id": str(UUID),
        "arr": [1, None, k],
        "m": {"z": 1, f"k{k}": k},  # not in sorted order
        "rec": {"x": k},
        "again": None if k % 3 == 0 else {"x": -k},
        "recs": [{"x": j} for j in range(k % 4)],
    }


def as_arrow(r: dict[str, Any]) -> dict[str, Any]:
    """The row ``AvroFormat`` gives for ``record``'s values (pyarrow's Python values)."""
    out = dict(r)
    u = r["u"]
    out["u"] = (
        None
        if u is None
        else {
            "member0": u if isinstance(u, int) else None,
            "member1": u if isinstance(u, str) else None,
        }
    )
    out["m"] = sorted(r["m"].items())
    return out


def rows(values: Any) -> list[Any]:
    out = values.to_pylist()
    for row in out:
        if row is not None:
            row["m"] = sorted(row["m"])
    return out


def written(schema: dict[str, Any], values: list[dict[str, Any]]) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for v in values:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, v)
        out.append(buf.getvalue())
    return out


def framed(schema_id: int, datum: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + datum


def kafka_batch(values: list[bytes | None], first_offset: int = 0) -> Any:
    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": [None] * n,
            "value": values,
            "topic": ["t"] * n,
            "partition": [0] * n,
            "offset": list(range(first_offset, first_offset + n)),
            "timestamp": [0] * n,
            "timestampType": [0] * n,
            "headers": [[]] * n,
        },
        schema=arrow_schema(True),
    )


class Seeks:
    def __init__(self) -> None:
        self.seeks: dict[TopicPartition, int] = {}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeks[tp] = offset


def test_every_type_written_by_fastavro_reads_as_spark_from_avro_types() -> None:
    records = [record(k) for k in range(7)]
    fmt = AvroFormat(json.dumps(ALL))
    values, bad = fmt.decode(pa.array([*written(ALL, records), None], pa.binary()))
    assert bad == []
    assert values.type == ARROW
    assert rows(values) == [as_arrow(r) for r in records] + [None]
    # Map entries in the order they were written.
    written_maps = [list(r["m"].items()) for r in records]
    assert values.field("m").to_pylist()[:7] == written_maps


def test_encoded_columns_are_what_fastavro_reads_and_decode_back_equal() -> None:
    records = [record(k) for k in range(7)]
    fmt = AvroFormat(ALL)
    values, _ = fmt.decode(pa.array(written(ALL, records), pa.binary()))
    payloads = fmt.encode(values)
    parsed = fastavro.parse_schema(ALL)
    theirs = [fastavro.schemaless_reader(io.BytesIO(p), parsed) for p in payloads.to_pylist()]
    assert theirs == [{**r, "id": UUID} for r in records]  # fastavro reads uuid as UUID
    again, bad = fmt.decode(payloads)
    assert bad == []
    assert rows(again) == rows(values)  # maps compared as sorted entries: see AvroFormat


def test_the_schema_top_level_must_be_a_record_and_arguments_agree() -> None:
    with pytest.raises(ValueError, match="not a record"):
        AvroFormat('"string"')
    with pytest.raises(ValueError, match="not an Avro schema"):
        AvroFormat('{"type": "nope"}')
    with pytest.raises(ValueError, match="refers to itself"):
        AvroFormat(
            {"type": "record", "name": "L", "fields": [{"name": "n", "type": ["null", "L"]}]}
        )
    with pytest.raises(ValueError, match="schema_id is for confluent=True"):
        AvroFormat(ALL, schema_id=1)
    with pytest.raises(ValueError, match="needs schemas="):
        AvroFormat(confluent=True)
    with pytest.raises(ValueError, match="schema and schema_id go together"):
        AvroFormat(ALL, confluent=True)
    with pytest.raises(ValueError, match="mode"):
        AvroFormat(ALL, mode="DROPMALFORMED")
    with pytest.raises(TypeError, match="Avro schema JSON"):
        AvroFormat(42)


V1 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "gone", "type": "string"},
        {"name": "score", "type": "float"},
    ],
}
V2 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "score", "type": "double"},
        {"name": "added", "type": "string", "default": "none"},
        {"name": "opt", "type": ["null", "int"], "default": None},
    ],
}


def test_a_reader_schema_takes_added_fields_defaults_and_drops_removed_ones() -> None:
    old = written(V1, [{"id": 1, "gone": "x", "score": 0.5}])
    new = written(V2, [{"id": 2, "score": 1.5, "added": "a", "opt": 3}])
    plain = AvroFormat(V1, reader_schema=V2)
    values, bad = plain.decode(pa.array(old, pa.binary()))
    assert bad == []
    assert values.type == pa.struct(
        [("id", pa.int64()), ("score", pa.float64()), ("added", pa.string()), ("opt", pa.int32())]
    )
    assert values.to_pylist() == [{"id": 1, "score": 0.5, "added": "none", "opt": None}]
    both = AvroFormat(confluent=True, schemas={1: V1, 2: V2}, reader_schema=V2)
    payloads = pa.array([framed(1, old[0]), framed(2, new[0])], pa.binary())
    values, bad = both.decode(payloads)
    assert bad == []
    assert values.to_pylist() == [
        {"id": 1, "score": 0.5, "added": "none", "opt": None},
        {"id": 2, "score": 1.5, "added": "a", "opt": 3},
    ]


def test_without_a_reader_schema_the_ids_of_a_batch_must_give_one_type() -> None:
    old = written(V1, [{"id": 1, "gone": "x", "score": 0.5}])
    new = written(V2, [{"id": 2, "score": 1.5, "added": "a", "opt": 3}])
    fmt = AvroFormat(confluent=True, schemas={1: V1, 2: V2, 3: V1})
    same, bad = fmt.decode(pa.array([framed(1, old[0]), framed(3, old[0])], pa.binary()))
    assert bad == [] and same.to_pylist() == [{"id": 1, "gone": "x", "score": 0.5}] * 2
    batch = kafka_batch([framed(1, old[0]), framed(1, old[0]), framed(2, new[0])], 40)
    with pytest.raises(Errors.PayloadSchemaError) as info:
        fmt.apply(batch, "value")
    err = info.value
    assert (err.topic, err.partition, err.offset, err.schema_id) == ("t", 0, 42, 2)
    assert "schema id 2" in str(err) and "schema id 1 (row 0)" in str(err)
    # With several schemas and no reader schema the column type waits for the records.
    with pytest.raises(ValueError, match="reader_schema"):
        formatted_schema(arrow_schema(True), None, fmt)
    one = AvroFormat(confluent=True, schemas={5: V1})
    assert formatted_schema(arrow_schema(True), None, one).field("value").type == pa.struct(
        [("id", pa.int32()), ("gone", pa.string()), ("score", pa.float32())]
    )


def test_confluent_framing_with_the_mapping_and_its_errors() -> None:
    datum = written(V1, [{"id": 7, "gone": "g", "score": 2.0}])[0]
    fmt = AvroFormat(confluent=True, schemas={1: json.dumps(V1)})
    batch = kafka_batch([framed(1, datum), datum, b"\x00\x00", None], 10)
    out, failed = fmt.apply(batch, "value")
    assert failed is None
    blank = {"id": None, "gone": None, "score": None}  # as Spark's from_avro gives
    assert out.column("value").to_pylist() == [
        {"id": 7, "gone": "g", "score": 2.0},
        blank,
        blank,
        None,
    ]
    # Raw bytes, binary: what did not decode, as it came.
    assert out.schema.field("_corrupt_record").type == pa.binary()
    assert out.column("_corrupt_record").to_pylist() == [None, datum, b"\x00\x00", None]
    unknown = kafka_batch([framed(1, datum), framed(9, datum)], 20)
    with pytest.raises(Errors.PayloadSchemaError) as info:
        fmt.apply(unknown, "value")
    assert (info.value.offset, info.value.schema_id) == (21, 9)
    assert "schema id 9 is not in schemas=" in str(info.value)
    consumer = Seeks()
    got = {TopicPartition("t", 0): unknown, TopicPartition("t", 1): kafka_batch([datum], 3)}
    with pytest.raises(Errors.PayloadSchemaError):
        decode_payloads(consumer, got, None, fmt)
    assert consumer.seeks == {TopicPartition("t", 0): 20, TopicPartition("t", 1): 3}


def test_failfast_cuts_before_the_first_record_that_does_not_decode() -> None:
    good = written(V1, [{"id": i, "gone": "", "score": 0.0} for i in range(3)])
    fmt = AvroFormat(V1, mode="FAILFAST")
    consumer = Seeks()
    tp = TopicPartition("t", 0)
    out = decode_payloads(
        consumer, {tp: kafka_batch([good[0], good[1], b"\x02", good[2]])}, None, fmt
    )
    assert [r["id"] for r in out[tp].column("value").to_pylist()] == [0, 1]
    assert "_corrupt_record" not in out[tp].schema.names
    assert consumer.seeks == {tp: 2}
    with pytest.raises(Errors.PayloadFormatError) as info:
        decode_payloads(consumer, {tp: kafka_batch([b"\x02", good[2]], 2)}, None, fmt)
    assert info.value.offset == 2 and "truncated" in str(info.value)
    # Framed: the reason names the schema id, whether the bytes or a value did not read.
    framed_fmt = AvroFormat(confluent=True, schemas={3: V1}, mode="FAILFAST")
    with pytest.raises(Errors.PayloadFormatError, match=r"offset 8: .*schema id 3: truncated"):
        decode_payloads(consumer, {tp: kafka_batch([framed(3, b"\x02")], 8)}, None, framed_fmt)
    stamp = {
        "type": "record",
        "name": "T",
        "fields": [{"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}],
    }
    huge = framed(4, b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01")  # past i64 microseconds
    far = AvroFormat(confluent=True, schemas={4: stamp}, mode="FAILFAST")
    with pytest.raises(Errors.PayloadFormatError, match='schema id 4: field "at": the value'):
        decode_payloads(consumer, {tp: kafka_batch([huge], 9)}, None, far)


def test_hostile_bytes_are_malformed_records_never_a_crash() -> None:
    nested = {
        "type": "record",
        "name": "H",
        "fields": [
            {"name": "a", "type": {"type": "array", "items": "null"}},
            {"name": "m", "type": {"type": "map", "values": "string"}},
            {"name": "u", "type": ["null", "int"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
            {"name": "s", "type": "bytes"},
        ],
    }
    fmt = AvroFormat(nested)
    cases = {
        b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x00": "items",  # 2^62 nulls, no bytes
        b"\x00\xfe\xff\xff\xff\x0f": "past 1048576",  # a map of 2^31 entries
        b"\x00\x80\x01": "64 items at byte 1, but 0 bytes are left",
        b"\x00\x00\x08": "union index 4",
        b"\x00\x00\x02\x02\x02": "enum index 1",
        b"\x00\x00\x00\x00\xfe\xff\xff\xff\xff\x01": "bytes at byte",  # a 2 GiB string
        b"\x00\x00\x00\x00\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01": "varint",
        b"\x00\x00\x00\x00\x01": "negative length",
    }
    values, bad = fmt.decode(pa.array(list(cases), pa.binary()))
    assert values.null_count == 0
    assert all(set(row.values()) == {None} for row in values.to_pylist())
    assert [row for row, _ in bad] == list(range(len(cases)))
    for (_, why), want in zip(bad, cases.values(), strict=True):
        assert want in why, (why, want)
    rng = random.Random(7)
    noise = [bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(3000)]
    for schema in (nested, ALL):
        values, bad = AvroFormat(schema).decode(pa.array(noise, pa.binary()))
        assert len(values) == len(noise) and bad
        out = values.to_pylist()
        assert all(set(out[row].values()) == {None} for row, _ in bad)
    confluent = AvroFormat(confluent=True, schemas={0: ALL})
    values, bad = confluent.decode(pa.array([b"\x00\x00\x00\x00\x00" + n for n in noise]))
    assert len(values) == len(noise) and len(bad) > len(noise) // 2


def test_encoding_checks_the_column_against_the_schema() -> None:
    fmt = AvroFormat(V1, confluent=True, schema_id=300)
    values = pa.array(
        [{"id": 1, "gone": "x", "score": 0.5}, None],
        pa.struct([("id", pa.int32()), ("gone", pa.string()), ("score", pa.float32())]),
    )
    payloads = fmt.encode(values).to_pylist()
    assert payloads[0][:5] == b"\x00\x00\x00\x01\x2c" and payloads[1] is None
    assert fastavro.schemaless_reader(io.BytesIO(payloads[0][5:]), V1) == {
        "id": 1,
        "gone": "x",
        "score": 0.5,
    }
    missing = pa.array([{"id": 1}], pa.struct([("id", pa.int32())]))
    with pytest.raises(ValueError, match=r"value\.gone \(row 0\): the struct has no such field"):
        fmt.encode(missing)
    null_id = pa.array([{"id": None, "gone": "", "score": 0.0}], values.type)
    with pytest.raises(ValueError, match=r"value\.id \(row 0\): null"):
        fmt.encode(null_id)
    with pytest.raises(ValueError, match="writing Avro needs schema"):
        AvroFormat(confluent=True, schemas={1: V1}).encode(values)


def test_spark_value_format_avro() -> None:
    key, fmt = parse_formats({"valueFormat": "avro", "valueSchema": json.dumps(V1)})
    assert key is None and fmt is not None and isinstance(fmt.payload_format(), AvroFormat)
    schema = formatted_spark_schema("key binary, value binary, topic string", None, fmt)
    assert schema == (
        "key binary, value struct<`id` INT, `gone` STRING, `score` FLOAT>, topic string, "
        "`_corrupt_record` binary"
    )
    with pytest.raises(ValueError, match="Avro schema, JSON text"):
        parse_formats({"valueFormat": "avro"})
    assert ddl_from_arrow(ARROW).startswith("`b` BOOLEAN, `i` INT, `l` BIGINT")
    assert "`ltm` TIMESTAMP_NTZ" in ddl_from_arrow(ARROW)
    assert "`m` MAP<STRING, INT>" in ddl_from_arrow(ARROW)


def test_two_formats_may_not_share_the_corrupt_column() -> None:
    with pytest.raises(ValueError, match="both keep malformed records"):
        check_formats(AvroFormat(V1), AvroFormat(V1))


# ---- a Schema Registry ------------------------------------------------------------------


class Registry:
    """A Schema Registry's ``GET /schemas/ids/{id}``: ``schemas`` by id, 404 for others,
    ``fail_first`` ids answered 500 once; every request counted; basic auth checked."""

    def __init__(self, schemas: dict[int, Any], fail_first: set[int], auth: str) -> None:
        self.schemas = schemas
        self.fail_first = set(fail_first)
        self.auth = "Basic " + base64.b64encode(auth.encode()).decode()
        self.credentials = auth.split(":", 1)
        self.requests: list[int] = []

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        prefix = "/ctx/schemas/ids/"
        if handler.headers.get("Authorization") != self.auth:
            handler.send_error(401)
            return
        if not handler.path.startswith(prefix):
            handler.send_error(400)
            return
        schema_id = int(handler.path[len(prefix) :])
        self.requests.append(schema_id)
        if schema_id in self.fail_first:
            self.fail_first.discard(schema_id)
            handler.send_error(500)
            return
        if schema_id not in self.schemas:
            body = json.dumps({"error_code": 40403, "message": "Schema not found"}).encode()
            handler.send_response(404)
        else:
            body = json.dumps({"schema": json.dumps(self.schemas[schema_id])}).encode()
            handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


@pytest.fixture
def registry() -> Iterator[tuple[Registry, str]]:
    with serve(Registry({1: V1, 2: V2}, fail_first={2}, auth="us er:p@ss")) as served:
        yield served


@contextlib.contextmanager
def serve(state: Registry) -> Iterator[tuple[Registry, str]]:
    """``state`` served on a free port of 127.0.0.1: ``(state, its URL with the credentials)``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        user, password = (urllib.parse.quote(p, safe="") for p in state.credentials)
        yield state, f"http://{user}:{password}@127.0.0.1:{port}/ctx"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_schemas_are_fetched_once_per_id_with_a_retry_after_500(
    registry: tuple[Registry, str],
) -> None:
    state, url = registry
    old = written(V1, [{"id": 1, "gone": "x", "score": 0.5}])[0]
    new = written(V2, [{"id": 2, "score": 1.5, "added": "a", "opt": None}])[0]
    fmt = AvroFormat(confluent=True, registry_url=url, reader_schema=V2)
    fmt.registry.backoff = 0.01  # type: ignore[union-attr]
    tp = TopicPartition("t", 0)
    consumer = Seeks()
    for first in (0, 3):
        got = {tp: kafka_batch([framed(1, old), framed(2, new), framed(1, old)], first)}
        await prepare_payloads(consumer, got, None, fmt)
        out = decode_payloads(consumer, got, None, fmt)
        assert [r["id"] for r in out[tp].column("value").to_pylist()] == [1, 2, 1]
    assert state.requests == [1, 2, 2]  # id 2 failed once (500), then each id is kept
    assert consumer.seeks == {}


async def test_an_id_the_registry_does_not_have_names_the_record(
    registry: tuple[Registry, str],
) -> None:
    state, url = registry
    old = written(V1, [{"id": 1, "gone": "x", "score": 0.5}])[0]
    fmt = AvroFormat(confluent=True, registry_url=url, reader_schema=V1)
    tp = TopicPartition("t", 0)
    consumer = Seeks()
    got = {tp: kafka_batch([framed(1, old), framed(77, old)], 50)}
    with pytest.raises(Errors.PayloadSchemaError) as info:
        await prepare_payloads(consumer, got, None, fmt)
    err = info.value
    assert (err.topic, err.partition, err.offset, err.schema_id) == ("t", 0, 51, 77)
    assert "no schema id 77 (HTTP 404)" in str(err)
    assert consumer.seeks == {tp: 50}  # given back
    assert state.requests == [1, 77]


async def test_an_unreachable_registry_is_retried_then_named() -> None:
    fmt = AvroFormat(confluent=True, registry_url="http://127.0.0.1:9", reader_schema=V1)
    registry = fmt.registry
    assert registry is not None
    registry.backoff, registry.timeout = 0.01, 2.0
    got = {TopicPartition("t", 0): kafka_batch([framed(4, b"")], 8)}
    with pytest.raises(Errors.PayloadSchemaError, match="no schema after 4 tries") as info:
        await asyncio.wait_for(prepare_payloads(Seeks(), got, None, fmt), 30)
    assert (info.value.offset, info.value.schema_id) == (8, 4)


async def test_a_read_cancelled_while_a_schema_is_fetched_gives_its_batches_back() -> None:
    class Slow(AvroFormat):
        async def prepare(self, batch: Any, column: str) -> None:
            await asyncio.sleep(60)

    fmt = Slow(confluent=True, schemas={1: V1})
    consumer = Seeks()
    got = {TopicPartition("t", 0): kafka_batch([framed(1, b"")], 30)}
    task = asyncio.ensure_future(prepare_payloads(consumer, got, None, fmt))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert consumer.seeks == {TopicPartition("t", 0): 30}


def test_spark_rows_decoded_on_an_executor_have_the_schema_the_driver_declared() -> None:
    """A key in JSON and Confluent-framed Avro values (schemas given inline), as a task decodes
    them: the batch has exactly the DataFrame schema Spark was given on the driver, corrupt-record
    columns last, the key's first."""
    from ferrokafka.ddl import schema_from_ddl
    from ferrokafka.spark.reader import _decoded
    from ferrokafka.spark.schema import spark_schema

    key, value = parse_formats(
        {
            "keyFormat": "json",
            "keySchema": "user STRING",
            "keyColumnNameOfCorruptRecord": "_corrupt_key",
            "valueFormat": "avro",
            "valueSchema": json.dumps(V2),
            "avroSchemasById": json.dumps({"1": V1, "2": V2}),
        }
    )
    assert key is not None and value is not None
    old = written(V1, [{"id": 1, "gone": "x", "score": 0.5}])[0]
    batch = kafka_batch([framed(1, old), old, None])
    batch = batch.set_column(0, "key", pa.array([b'{"user": "a"}', b"{", None], pa.binary()))
    batch = batch.drop_columns(["headers"])
    for column, fmt in (("key", key), ("value", value)):
        batch = _decoded(batch, column, fmt.payload_format(), None)  # type: ignore[arg-type]
    declared = schema_from_ddl(spark_schema(False, key, value))
    assert batch.schema.names == declared.names
    assert [f.type for f in batch.schema] == [f.type for f in declared]
    assert batch.column("key").to_pylist() == [{"user": "a"}, {"user": None}, None]
    assert batch.column("_corrupt_key").to_pylist() == [None, "{", None]
    assert batch.column("value").to_pylist()[0] == {
        "id": 1,
        "score": 0.5,
        "added": "none",
        "opt": None,
    }
    assert batch.column("_corrupt_record").to_pylist() == [None, old, None]
