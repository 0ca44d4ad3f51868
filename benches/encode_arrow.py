"""What ``send_arrow`` costs in the native module, without a broker: W6's rows (1M values of
100 random capital letters, no key, in Arrow record batches of 65,536 rows) planned per
partition (``plan_arrow_records``) and each chunk encoded as a Kafka batch (``encode``), as
the producer does for one ``send_arrow`` call per Arrow batch. Prints a table: the median and
best of ``--rounds`` for each codec, in CPU seconds per million records.

    .venv/bin/python benches/encode_arrow.py [--records N] [--rounds R]

Measure with a release build of the extension (``tools/bootstrap``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyarrow as pa
from ferrokafka import _native
from harness.producers import ARROW_ROWS, POOL, random_values

PARTITIONS = 8
BATCH_SIZE = 1_000_000
MAX_REQUEST_SIZE = 1 << 20


def batches(records: int, value_size: int = 100) -> list[pa.RecordBatch]:
    values = random_values(POOL, value_size)
    out = []
    for first in range(0, records, ARROW_ROWS):
        rows = range(first, min(records, first + ARROW_ROWS))
        out.append(pa.record_batch({"value": pa.array([values[i % POOL] for i in rows])}))
    return out


def once(data: list[pa.RecordBatch], codec: str) -> tuple[float, int]:
    """CPU seconds to plan and encode every batch, and the bytes encoded."""
    size = 0
    start = time.process_time()
    for sticky, batch in enumerate(data):
        chunks = _native.plan_arrow_records(
            [batch],
            num_partitions=PARTITIONS,
            sticky=sticky,
            batch_size=BATCH_SIZE,
            max_request_size=MAX_REQUEST_SIZE,
        )
        for chunk in chunks:
            size += len(chunk.encode(0, compression=codec))
    return time.process_time() - start, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    data = batches(args.records)
    per_million = 1e6 / args.records
    print(f"plan_arrow_records + encode, {args.records:,} records of 100 B, {args.rounds} rounds")
    print(f"{'codec':<8} {'median CPU s/1M':>16} {'best':>8} {'MB out':>8}")
    for codec in ("none", "lz4", "zstd"):
        once(data, codec)  # warm-up
        runs = [once(data, codec) for _ in range(args.rounds)]
        times = [t * per_million for t, _ in runs]
        print(
            f"{codec:<8} {statistics.median(times):>16.4f} {min(times):>8.4f} "
            f"{runs[0][1] / 1e6:>8.1f}"
        )


if __name__ == "__main__":
    main()
