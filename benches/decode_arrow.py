"""Microbenchmark of the Arrow decode path: ``_native.decode_columns`` (one partition's raw
``records`` bytes to Arrow columns in Spark's Kafka schema), nothing else timed.

The input is built once per case: records with 10 B keys and 100 B or 1 KiB values (bytes that
compress like text), in batches of ~512 KiB as a producer with a large ``batch.size`` writes
them, grouped into fetches of ~``--fetch-bytes`` of one partition (a Fetch response's records
section). Each round decodes every fetch once; the best round is kept. Prints a Markdown table:
ns per record and millions of records per second of the best round, and the wire bytes per
second. Run against a release build of the native module:

    python benches/decode_arrow.py [--records N] [--repeat R] [--fetch-bytes B]
"""

from __future__ import annotations

import argparse
import platform
import random
import time

from ferrokafka import _native

BATCH_BYTES = 512 * 1024
KEY_SIZE = 10


WORDS = [b"alpha", b"beta", b"gamma", b"delta", b"click", b"view", b"cart", b"user", b"eu-west"]


def payloads(size: int, count: int = 1024) -> list[bytes]:
    """`count` distinct JSON-like values of `size` bytes: random numbers and words, so that they
    compress about as well as real event payloads do (2-4x), not like one repeated string."""
    rng = random.Random(size)
    out = []
    for _ in range(count):
        text = bytearray()
        while len(text) < size:
            text += b'{"id":%d,"kind":"%s","ts":%d,"score":%.3f},' % (
                rng.randrange(10**9),
                rng.choice(WORDS),
                1_700_000_000_000 + rng.randrange(10**7),
                rng.random() * 100,
            )
        out.append(bytes(text[:size]))
    return out


def build_fetches(total: int, value_size: int, codec: str, fetch_bytes: int) -> list[bytes]:
    values = payloads(value_size)
    per_batch = max(1, BATCH_BYTES // (value_size + KEY_SIZE + 12))
    fetches: list[bytes] = []
    current = bytearray()
    offset = 0
    while offset < total:
        n = min(per_batch, total - offset)
        records = [
            (
                1_700_000_000_000 + offset + i,
                b"key-%06d" % ((offset + i) % 1_000_000),
                values[(offset + i) % len(values)],
                [],
            )
            for i in range(n)
        ]
        current += _native.encode_batch(records, base_offset=offset, compression=codec)
        offset += n
        if len(current) >= fetch_bytes:
            fetches.append(bytes(current))
            current = bytearray()
    if current:
        fetches.append(bytes(current))
    return fetches


def best_round(fetches: list[bytes], repeat: int) -> tuple[float, int]:
    decode = _native.decode_columns
    best = float("inf")
    rows = 0
    for _ in range(repeat):
        rows = 0
        start = time.perf_counter()
        for raw in fetches:
            rows += decode(raw, "bench", 0).records.num_rows
        best = min(best, time.perf_counter() - start)
    return best, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--fetch-bytes", type=int, default=1 << 20)
    args = parser.parse_args()
    cpu = platform.processor() or platform.machine()
    print(
        f"# decode_columns: {args.records} records per case, ~512 KiB batches, "
        f"~{args.fetch_bytes >> 10} KiB fetches, best of {args.repeat} ({cpu}, "
        f"Python {platform.python_version()})\n"
    )
    print("| value | codec | fetches | wire MB | ns/record | M records/s | wire MB/s |")
    print("|---|---|---|---|---|---|---|")
    for value_size in (100, 1024):
        for codec in ("none", "lz4", "zstd"):
            fetches = build_fetches(args.records, value_size, codec, args.fetch_bytes)
            wire = sum(map(len, fetches))
            seconds, rows = best_round(fetches, args.repeat)
            assert rows == args.records, (rows, args.records)
            print(
                f"| {value_size} B | {codec} | {len(fetches)} | {wire / 1e6:.1f} | "
                f"{seconds / rows * 1e9:.0f} | {rows / seconds / 1e6:.2f} | "
                f"{wire / seconds / 1e6:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
