"""Microbenchmark of Avro payloads to a typed Arrow table, in process, what each idiom costs per
record once the records are fetched (no broker):

* ``AvroFormat.decode``: ferrokafka's Rust decoder over the batch's value column, plain datums
  and Confluent-framed ones (the same datums behind a schema id), and with a reader schema:
  the writer's own (read as if none were given) and an evolved one with a field added (each
  datum read and resolved by apache-avro, the schema-evolution path);
* fastavro's ``schemaless_reader`` per record, then ``pyarrow.Table.from_pylist`` with the
  column's type: what Python code over ``getmany()`` writes.

The records are 10-field records of about 200 B (a typical event: longs, an int, a double,
strings, a boolean, a timestamp, a nullable string, a nested record and an array of strings).
Each idiom runs ``--repeat`` times over ``--records`` records; the best round is kept. Prints a
Markdown table of records/s and the ratio to the Rust decoder. Run against a release build of
the native module:

    python benches/decode_avro.py [--records N] [--repeat R]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from ferrokafka.formats import AvroFormat

SCHEMA = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "country", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "items", "type": "int"},
        {"name": "paid", "type": "boolean"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "channel", "type": ["null", "string"]},
        {
            "name": "device",
            "type": {
                "type": "record",
                "name": "Device",
                "fields": [{"name": "os", "type": "string"}, {"name": "version", "type": "int"}],
            },
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}


def records(n: int) -> list[dict[str, Any]]:
    rng = random.Random(11)
    start = dt.datetime(2026, 11, 29, tzinfo=dt.timezone.utc)
    return [
        {
            "id": i,
            "user": f"customer-{rng.randrange(100_000):06d}.account@shop-example-domain.org",
            "country": rng.choice(
                ["Federal Republic of Germany", "French Republic", "United States of America"]
            ),
            "amount": round(rng.uniform(1, 500), 2),
            "items": rng.randrange(1, 9),
            "paid": rng.random() < 0.9,
            "at": start + dt.timedelta(seconds=rng.randrange(86_400)),
            "channel": rng.choice(["web-checkout", "mobile-app", "retail-store", None]),
            "device": {
                "os": rng.choice(["iOS 18.1 (iPhone 15 Pro)", "Android 15 (Pixel 9)"]),
                "version": rng.randrange(20),
            },
            "tags": rng.sample(
                ["new-customer", "promotion-2026", "gift-wrapped", "bulk-order", "vip-tier"], 4
            ),
        }
        for i in range(n)
    ]


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    import fastavro

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    parsed = fastavro.parse_schema(SCHEMA)
    values = []
    for row in records(args.records):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        values.append(buf.getvalue())
    column = pa.array(values, pa.binary())
    framed = pa.array([b"\x00\x00\x00\x00\x07" + v for v in values], pa.binary())
    plain = AvroFormat(SCHEMA)
    confluent = AvroFormat(confluent=True, schemas={7: SCHEMA})
    # The writer's own schema as the reader's (Spark's registry option requires one) reads as
    # if none were given; an evolved one makes every datum go through apache-avro's
    # resolution: the cost of schema evolution.
    same = AvroFormat(SCHEMA, reader_schema=SCHEMA)
    evolved_schema = {
        **SCHEMA,
        "fields": [*SCHEMA["fields"], {"name": "note", "type": "string", "default": ""}],
    }
    resolved = AvroFormat(SCHEMA, reader_schema=evolved_schema)
    arrow_type = plain.decode(column[:1])[0].type

    def python_reader() -> Any:
        reader = fastavro.schemaless_reader
        rows = [reader(io.BytesIO(v), parsed) for v in values]
        return pa.Table.from_pylist(rows, schema=pa.schema(list(arrow_type)))

    cases: list[tuple[str, Callable[[], Any]]] = [
        ("ferrokafka `AvroFormat.decode` (Rust), plain datums", lambda: plain.decode(column)),
        (
            "ferrokafka `AvroFormat.decode` (Rust), Confluent-framed",
            lambda: confluent.decode(framed),
        ),
        (
            "ferrokafka `AvroFormat.decode` (Rust), `reader_schema=` the writer's",
            lambda: same.decode(column),
        ),
        (
            "ferrokafka `AvroFormat.decode` (Rust), `reader_schema=` with a field added",
            lambda: resolved.decode(column),
        ),
        ("fastavro `schemaless_reader` per record + `Table.from_pylist`", python_reader),
    ]
    size = sum(map(len, values)) / len(values)
    print(f"{args.records:,} records of {size:.0f} B, best of {args.repeat}; {platform.machine()}")
    print()
    print("| idiom | records/s | vs Rust |")
    print("|---|---:|---:|")
    rust = None
    for name, fn in cases:
        seconds = best(fn, args.repeat)
        rate = args.records / seconds
        rust = rust or rate
        print(f"| {name} | {rate:,.0f} | {rate / rust:.2f}x |")


if __name__ == "__main__":
    main()
