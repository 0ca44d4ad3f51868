"""Read a topic of JSON orders as typed Arrow columns and total them per customer.

What it shows: ``value_format=JsonFormat(schema)`` decodes each record's JSON value in Rust,
in one pass over the batch, into a struct column of the schema (here given as Spark DDL), by
the rules of Spark's ``from_json``: no ``json.loads`` and no Python object per record. A value
that does not fit the schema is kept, as text, in the ``_corrupt_record`` column, with its
fields null (``mode="FAILFAST"`` would stop the read at it instead, naming its offset).

Needs pyarrow (``pip install 'ferrokafka[arrow]'``). Run it::

    python examples/json_orders.py --bootstrap-server localhost:9092 --topic orders
"""

from __future__ import annotations

import argparse

import pyarrow as pa
import pyarrow.compute as pc
from ferrokafka.arrow import JsonFormat, read

ORDER = "id BIGINT, customer STRING, amount DECIMAL(10, 2), at TIMESTAMP"


def main(args: argparse.Namespace) -> None:
    reader = read(args.bootstrap_server, args.topic, value_format=JsonFormat(ORDER))
    table = reader.read_all()
    corrupt = table.column("_corrupt_record")
    orders = pa.Table.from_arrays(
        table.column("value").combine_chunks().flatten(), names=["id", "customer", "amount", "at"]
    ).filter(pc.is_null(corrupt))
    print(f"{table.num_rows} records of {args.topic}: {orders.num_rows} orders", flush=True)
    for raw in corrupt.drop_null().to_pylist():
        print(f"malformed: {raw}", flush=True)
    totals = orders.group_by("customer").aggregate([("amount", "sum"), ("id", "count")])
    for row in totals.sort_by(
        [("amount_sum", "descending"), ("customer", "ascending")]
    ).to_pylist():
        print(f"{row['customer']}\t{row['id_count']}\t{row['amount_sum']}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="orders")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
