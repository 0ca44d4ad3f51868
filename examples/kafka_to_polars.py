"""Read a topic into a Polars DataFrame and rank its keys by records and bytes.

What it shows: ``ferrokafka.arrow.read`` returns a ``pyarrow.RecordBatchReader`` over a bounded
part of a topic (here the last ``--minutes``, or all of it), in Spark's Kafka schema (key,
value, topic, partition, offset, timestamp, timestampType), decoded in Rust and fetched ahead in
a thread of its own. ``pl.from_arrow`` imports it through the Arrow C stream: no Python object
per record and no consumer loop.

Needs pyarrow and polars (``pip install 'ferrokafka[arrow]' polars``). Run it::

    python examples/kafka_to_polars.py --bootstrap-server localhost:9092 --topic events \\
        --minutes 60 --top 10
"""

from __future__ import annotations

import argparse
import datetime

import ferrokafka.arrow
import polars as pl


def main(args: argparse.Namespace) -> None:
    since = None
    if args.minutes is not None:
        now = datetime.datetime.now(datetime.timezone.utc)
        since = now - datetime.timedelta(minutes=args.minutes)
    reader = ferrokafka.arrow.read(args.bootstrap_server, args.topic, start_timestamp=since)
    frame = pl.from_arrow(reader, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    ranked = (
        frame.group_by("key")
        .agg(
            pl.len().alias("records"),
            pl.col("value").bin.size().cast(pl.UInt64).sum().alias("bytes"),
        )
        .sort(["records", "bytes", "key"], descending=[True, True, False], nulls_last=True)
    )
    print(f"{frame.height} records of {args.topic}, {ranked.height} keys", flush=True)
    for key, records, size in ranked.head(args.top).iter_rows():
        name = "(null)" if key is None else key.decode(errors="replace")
        print(f"{name}\t{records}\t{size}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument(
        "--minutes", type=float, help="read only the records of the last MINUTES (default: all)"
    )
    parser.add_argument("--top", type=int, default=10, help="how many keys to print")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
