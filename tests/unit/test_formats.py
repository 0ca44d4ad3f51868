"""Payload formats (``ferrokafka.formats``): JSON decoded in Rust into struct columns, the
corrupt-record column, FAILFAST's cut, and ``getmany_arrow``'s handing out of the records
before a malformed one."""

from __future__ import annotations

from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

from ferrokafka import errors as Errors  # noqa: E402
from ferrokafka.arrow import arrow_schema  # noqa: E402
from ferrokafka.consumer.payload_formats import decode_payloads  # noqa: E402
from ferrokafka.formats import JsonFormat, check_formats, formatted_schema  # noqa: E402
from ferrokafka.structs import TopicPartition  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def kafka_batch(values: list[bytes | None], first_offset: int = 0, topic: str = "t") -> Any:
    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": [None] * n,
            "value": values,
            "topic": [topic] * n,
            "partition": [0] * n,
            "offset": list(range(first_offset, first_offset + n)),
            "timestamp": [0] * n,
            "timestampType": [0] * n,
            "headers": [[]] * n,
        },
        schema=arrow_schema(True),
    )


def test_values_become_a_struct_column_and_malformed_ones_are_kept_as_text() -> None:
    batch = kafka_batch([b'{"id": 1, "name": "a"}', b'{"id": "x", "name": "b"}', None, b"\xff{"])
    out, failed = JsonFormat(SCHEMA).apply(batch, "value")
    assert failed is None
    assert out.schema.field("value").type == pa.struct(SCHEMA)
    assert out.column("value").to_pylist() == [
        {"id": 1, "name": "a"},
        {"id": None, "name": "b"},
        None,
        {"id": None, "name": None},
    ]
    assert out.schema.names[-1] == "_corrupt_record"
    assert out.column("_corrupt_record").to_pylist() == [
        None,
        '{"id": "x", "name": "b"}',
        None,
        "\ufffd{",
    ]
    assert out.column("offset").to_pylist() == [0, 1, 2, 3]


def test_no_corrupt_column_when_none_is_asked_for() -> None:
    out, _ = JsonFormat(SCHEMA, corrupt_column=None).apply(kafka_batch([b"{}"]), "value")
    assert out.schema.names == arrow_schema(True).names


def test_failfast_cuts_before_the_first_malformed_row() -> None:
    batch = kafka_batch([b'{"id": 1}', b'{"id": 2}', b"nope", b'{"id": 4}'])
    out, failed = JsonFormat(SCHEMA, mode="FAILFAST").apply(batch, "value")
    assert out.num_rows == 2 and "_corrupt_record" not in out.schema.names
    assert failed is not None and failed.row == 2 and failed.reason.startswith("not JSON")


def test_bad_arguments_fail_when_the_format_is_made() -> None:
    with pytest.raises(ValueError, match="mode must be one of PERMISSIVE, FAILFAST"):
        JsonFormat(SCHEMA, mode="DROPMALFORMED")
    with pytest.raises(TypeError, match='field "t"'):
        JsonFormat(pa.schema([("t", pa.time32("s"))]))
    with pytest.raises(TypeError, match="__arrow_c_schema__"):
        JsonFormat(42)
    with pytest.raises(ValueError, match="another corrupt_column"):
        check_formats(JsonFormat(SCHEMA), JsonFormat(SCHEMA))
    with pytest.raises(TypeError, match="value_format must be a PayloadFormat"):
        check_formats(None, SCHEMA)  # type: ignore[arg-type]


def test_the_schema_of_formatted_batches() -> None:
    key = JsonFormat(pa.schema([("k", pa.int32())]), corrupt_column="_corrupt_key")
    schema = formatted_schema(arrow_schema(True), key, JsonFormat(SCHEMA))
    assert schema.field("key").type == pa.struct([("k", pa.int32())])
    assert schema.field("value").type == pa.struct(SCHEMA)
    assert schema.names[-2:] == ["_corrupt_key", "_corrupt_record"]


class Seeks:
    def __init__(self) -> None:
        self.seeks: dict[TopicPartition, int] = {}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeks[tp] = offset


A, B = TopicPartition("t", 0), TopicPartition("t", 1)
FAILFAST = JsonFormat(SCHEMA, mode="FAILFAST")


def test_records_before_a_malformed_one_are_handed_out_and_the_position_stays_at_it() -> None:
    consumer = Seeks()
    got = {
        A: kafka_batch([b'{"id": 10}', b"bad", b'{"id": 12}'], first_offset=10),
        B: kafka_batch([b'{"id": 5}'], first_offset=5),
    }
    out = decode_payloads(consumer, got, None, FAILFAST)
    assert out[A].column("value").to_pylist() == [{"id": 10, "name": None}]
    assert out[B].num_rows == 1
    assert consumer.seeks == {A: 11}


def test_a_malformed_first_record_raises_and_gives_every_batch_back() -> None:
    consumer = Seeks()
    got = {
        A: kafka_batch([b"bad", b'{"id": 12}'], first_offset=11),
        B: kafka_batch([b'{"id": 5}', b'{"id": 6}'], first_offset=5),
    }
    with pytest.raises(Errors.PayloadFormatError) as info:
        decode_payloads(consumer, got, None, FAILFAST)
    err = info.value
    assert (err.topic, err.partition, err.offset) == ("t", 0, 11)
    assert "t[0] offset 11: the record's value does not read as JsonFormat" in str(err)
    assert consumer.seeks == {A: 11, B: 5}


def test_keys_are_decoded_too() -> None:
    batch = kafka_batch([b"{}"])
    batch = batch.set_column(0, "key", pa.array([b'{"k": 7}'], pa.binary()))
    key = JsonFormat(pa.schema([("k", pa.int32())]), corrupt_column="_corrupt_key")
    out = decode_payloads(Seeks(), {A: batch}, key, None)
    assert out[A].column("key").to_pylist() == [{"k": 7}]


def test_a_spark_ddl_schema() -> None:
    fmt = JsonFormat("id BIGINT NOT NULL, name VARCHAR(20), tags ARRAY<STRING>")
    assert fmt.schema == pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("name", pa.string()),
            ("tags", pa.list_(pa.string())),
        ]
    )
    values, bad = fmt.decode(pa.array([b'{"id": 1, "tags": ["x"]}']))
    assert values.to_pylist() == [{"id": 1, "name": None, "tags": ["x"]}] and bad == []
    for ddl, message in [
        ("id INTERVAL", "INTERVAL is not a type read here"),
        ("id ARRAY<INT", "expected '>', found the end"),
        ("id INT,", "expected more, found the end"),
        ("id INT garbage", "unexpected 'garbage'"),
    ]:
        with pytest.raises(ValueError, match=message):
            JsonFormat(ddl)


def test_struct_values_are_written_as_json_and_read_back() -> None:
    fmt = JsonFormat("id BIGINT, at TIMESTAMP, tags ARRAY<STRING>, m MAP<STRING, DOUBLE>")
    values = pa.array(
        [
            {"id": 1, "at": None, "tags": ["a", None], "m": [("k", 1.5)]},
            None,
            {"id": None, "at": 1_500_000, "tags": [], "m": []},
        ],
        pa.struct(fmt.schema),
    )
    encoded = fmt.encode(values)
    assert encoded.type == pa.binary()
    assert encoded.to_pylist() == [
        b'{"id":1,"tags":["a",null],"m":{"k":1.5}}',
        None,
        b'{"at":"1970-01-01T00:00:01.500Z","tags":[],"m":{}}',
    ]
    back, bad = fmt.decode(encoded)
    assert bad == [] and back.equals(values)
    with pytest.raises(TypeError, match="expected a struct column"):
        fmt.encode(pa.array([1]))
    with pytest.raises(TypeError, match='field "t"'):
        fmt.encode(pa.array([{"t": 1}], pa.struct([("t", pa.time32("s"))])))
