"""Microbenchmark of JSON payloads to a typed Arrow table, in process, what each idiom costs per
record once the records are fetched (no broker):

* ``JsonFormat.decode``: ferrokafka's Rust decoder over the batch's value column;
* ``json.loads`` per record, then ``pyarrow.Table.from_pylist`` with the schema: what Python
  code over ``getmany()`` writes;
* confluent-kafka's ``JSONDeserializer`` per record (with its schema: it validates each record
  with ``jsonschema``), then ``from_pylist``: the consumer-side deserializer of a confluent-kafka
  application, when installed.

The records are 10-field objects of about 200 B (a typical event: ints, a double, strings, a
boolean, a timestamp, a nested object and a list). Each idiom runs ``--repeat`` times over
``--records`` records; the best round is kept. Prints a Markdown table of records/s and the
ratio to the Rust decoder. Run against a release build of the native module:

    python benches/decode_json.py [--records N] [--repeat R]
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from ferrokafka.formats import JsonFormat

DDL = (
    "id BIGINT, user STRING, country STRING, amount DOUBLE, items INT, paid BOOLEAN, "
    "at TIMESTAMP, channel STRING, device STRUCT<os: STRING, version INT>, tags ARRAY<STRING>"
)


def records(n: int) -> list[bytes]:
    rng = random.Random(11)
    out = []
    for i in range(n):
        out.append(
            json.dumps(
                {
                    "id": i,
                    "user": f"user-{rng.randrange(100_000):06d}",
                    "country": rng.choice(["DE", "FR", "US", "JP", "BR"]),
                    "amount": round(rng.uniform(1, 500), 2),
                    "items": rng.randrange(1, 9),
                    "paid": rng.random() < 0.9,
                    "at": f"2026-11-29T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z",
                    "channel": rng.choice(["web", "app", "store"]),
                    "device": {"os": rng.choice(["ios", "android"]), "version": rng.randrange(20)},
                    "tags": rng.sample(["new", "promo", "gift", "bulk", "vip"], 2),
                }
            ).encode()
        )
    return out


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    values = records(args.records)
    column = pa.array(values, pa.binary())
    fmt = JsonFormat(DDL)
    schema = fmt.schema
    # from_pylist wants the timestamp as a datetime or an int: give it what a loader would.
    import datetime as dt

    def python_loads() -> Any:
        rows = []
        for v in values:
            row = json.loads(v)
            row["at"] = dt.datetime.fromisoformat(row["at"])
            rows.append(row)
        return pa.Table.from_pylist(rows, schema=schema)

    cases: list[tuple[str, Callable[[], Any]]] = [
        ("ferrokafka `JsonFormat.decode` (Rust)", lambda: fmt.decode(column)),
        ("`json.loads` per record + `Table.from_pylist`", python_loads),
    ]
    try:
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        json_schema = json.dumps(
            {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "user": {"type": "string"}},
            }
        )

        # Plain JSON values, no Confluent framing: its schema-id hook hands the value over whole.
        def whole(payload: bytes, ctx: Any, schema_id: Any) -> io.BytesIO:
            return io.BytesIO(payload)

        deserializer = JSONDeserializer(json_schema, conf={"schema.id.deserializer": whole})
        ctx = SerializationContext("bench", MessageField.VALUE)

        def confluent() -> Any:
            rows = []
            for v in values:
                row = deserializer(v, ctx)
                row["at"] = dt.datetime.fromisoformat(row["at"])
                rows.append(row)
            return pa.Table.from_pylist(rows, schema=schema)

        cases.append(("confluent-kafka `JSONDeserializer` + `Table.from_pylist`", confluent))
    except ImportError as exc:
        print(f"(confluent-kafka's JSONDeserializer not measured: {exc})")
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
