"""Microbenchmark of Avro payloads to a typed Arrow table, in process, what each idiom costs per
record once the records are fetched (no broker):

* ``AvroFormat.decode``: ferrokafka's Rust decoder over the batch's value column, plain datums
  and Confluent-framed ones (the same datums behind a schema id), and with a reader schema:
  the writer's own (read as if none were given) and an evolved one with a field added (each
  datum read and resolved by apache-avro, the schema-evolution path);
* fastavro's ``schemaless_reader`` per record, then ``pyarrow.Table.from_pylist`` with the
  column's type: what Python code over ``getmany()`` writes.

The records are 10-field records of about 200 B (a typical event: longs, an int, a double,
strings, a boolean, a timestamp, a nullable string, a nested record and an array of strings),
the harness's W11 records (``benches/harness/typed.py``).
Each idiom runs ``--repeat`` times over ``--records`` records; the best round is kept. Prints a
Markdown table of records/s and the ratio to the Rust decoder. Run against a release build of
the native module:

    python benches/decode_avro.py [--records N] [--repeat R]
"""

from __future__ import annotations

import argparse
import io
import platform
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from ferrokafka.formats import AvroFormat
from harness.typed import SCHEMA, rows


def records(n: int) -> list[dict[str, Any]]:
    """``n`` of the harness's W11 records (``harness.typed.rows``) as dicts."""
    return rows(n).to_pylist()


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
