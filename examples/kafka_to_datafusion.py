"""Count a topic's records per key with Apache DataFusion's SQL.

What it shows: ``ferrokafka.arrow.read`` returns a ``pyarrow.RecordBatchReader`` over a topic
(some partitions, or all), in Spark's Kafka schema, decoded in Rust; DataFusion's
``SessionContext.from_arrow`` takes it through the Arrow C stream as a table to query.

Needs pyarrow and datafusion (``pip install 'ferrokafka[arrow]' datafusion``). Run it::

    python examples/kafka_to_datafusion.py --bootstrap-server localhost:9092 --topic events \\
        --partitions 0 1 --top 10
"""

from __future__ import annotations

import argparse

import datafusion
import ferrokafka.arrow

QUERY = """
select cast(key as varchar) as key, count(*) as records
from records
group by key
order by records desc, key
limit {top}
"""


def main(args: argparse.Namespace) -> None:
    reader = ferrokafka.arrow.read(args.bootstrap_server, args.topic, partitions=args.partitions)
    ctx = datafusion.SessionContext()
    ctx.from_arrow(reader, name="records")
    for row in ctx.sql(QUERY.format(top=int(args.top))).to_pylist():
        print(f"{row['key'] if row['key'] is not None else '(null)'}\t{row['records']}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument(
        "--partitions", type=int, nargs="+", help="the partitions to read (default: all)"
    )
    parser.add_argument("--top", type=int, default=10, help="how many keys to print")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
