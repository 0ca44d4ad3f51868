"""Query a topic with DuckDB's SQL: records, offsets and time span per partition.

What it shows: ``ferrokafka.arrow.read`` returns a ``pyarrow.RecordBatchReader`` over a bounded
part of a topic (offsets ``--start`` to ``--end``, or all of it), in Spark's Kafka schema,
decoded in Rust. Registered with DuckDB, it is scanned as a table through the Arrow C stream,
batch by batch, while the next batches are fetched.

Needs pyarrow and duckdb (``pip install 'ferrokafka[arrow]' duckdb``). Run it::

    python examples/kafka_to_duckdb.py --bootstrap-server localhost:9092 --topic events
"""

from __future__ import annotations

import argparse

import duckdb
import ferrokafka.arrow

QUERY = """
select partition,
       count(*) as records,
       min("offset") as first_offset,
       max("offset") as last_offset,
       min("timestamp") as first_time,
       max("timestamp") as last_time,
       sum(octet_length(value)) as value_bytes
from records
group by partition
order by partition
"""


def main(args: argparse.Namespace) -> None:
    reader = ferrokafka.arrow.read(
        args.bootstrap_server, args.topic, start=args.start, end=args.end
    )
    con = duckdb.connect()
    con.register("records", reader)
    print("partition\trecords\tfirst_offset\tlast_offset\tfirst_time\tlast_time\tvalue_bytes")
    for row in con.sql(QUERY).fetchall():
        print("\t".join(str(v) for v in row), flush=True)


def offset(text: str) -> int | str:
    return text if text in ("earliest", "latest") else int(text)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--start", type=offset, default="earliest", help="first offset read")
    parser.add_argument("--end", type=offset, default="latest", help="offset read up to")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
