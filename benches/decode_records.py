"""Decode throughput of the Python-visible record paths: raw partition bytes (as a Fetch response
carries them) to ConsumerRecord objects and to Arrow columns (a ``pyarrow.RecordBatch`` in
Spark's Kafka schema), ferrokafka beside aiokafka's own path (its ``PartitionRecords`` over
``MemoryRecords``, C extension included) on the same bytes.

Batches are built like a Java producer's defaults (16 KiB batches); one "fetch" is ~1 MiB of one
partition (max_partition_fetch_bytes). Prints a Markdown table. Run with a release build:

    .venv/bin/python benches/decode_records.py [--records N] [--repeat R] [--memory-tune]

A fetch of very compressible 1 KiB values inflates to ~30 MB of ``bytes`` objects, which the C
allocator takes from the kernel and, with glibc's defaults, gives back when they are freed: every
round page-faults them in again, for both clients alike. ``--memory-tune`` runs the whole
process (aiokafka's path too) with the opt-in settings of ``ferrokafka.memory.tune()``.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from ferrokafka.records import decode_columns, decode_records, encode_batch

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BATCH_BYTES = 16 * 1024
FETCH_BYTES = 1 << 20


def build_fetch(value_size: int, codec: str, total_records: int) -> tuple[list[bytes], int]:
    """Partition buffers of ~FETCH_BYTES each holding `total_records` records in all."""
    per_batch = max(1, BATCH_BYTES // (value_size + 30))
    value = bytes(range(256)) * (value_size // 256 + 1)
    fetches: list[bytes] = []
    current = bytearray()
    offset = 0
    while offset < total_records:
        n = min(per_batch, total_records - offset)
        records = [
            (1_700_000_000_000 + offset + i, b"key-%06d" % (offset + i), value[:value_size], [])
            for i in range(n)
        ]
        current += encode_batch(records, base_offset=offset, compression=codec)
        offset += n
        if len(current) >= FETCH_BYTES:
            fetches.append(bytes(current))
            current = bytearray()
    if current:
        fetches.append(bytes(current))
    return fetches, offset


def time_best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def ferrokafka_path(fetches: list[bytes], check_crcs: bool) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for raw in fetches:
            n += len(decode_records(raw, "bench", 0, check_crcs=check_crcs).records)
        return n

    return run


def columns_path(fetches: list[bytes]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for raw in fetches:
            n += decode_columns(raw, "bench", 0).records.to_pyarrow().num_rows
        return n

    return run


def aiokafka_path(fetches: list[bytes]) -> Callable[[], int]:
    from aiokafka.consumer.fetcher import PartitionRecords
    from aiokafka.record.memory_records import MemoryRecords
    from aiokafka.structs import TopicPartition

    tp = TopicPartition("bench", 0)

    def run() -> int:
        n = 0
        for raw in fetches:
            part = PartitionRecords(tp, MemoryRecords(raw), [], 0, None, None, True, 0)
            n += len(list(part))
        return n

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20k records, one round")
    parser.add_argument(
        "--memory-tune",
        action="store_true",
        help="ferrokafka.memory.tune(): the opt-in process-wide settings (both clients share them)",
    )
    args = parser.parse_args()
    if args.memory_tune:
        from ferrokafka import memory

        memory.tune()
    total = 20_000 if args.quick else args.records
    repeat = 1 if args.quick else args.repeat
    cpu = platform.processor() or platform.machine()
    print(
        f"# record decode to ConsumerRecord objects and Arrow columns ({cpu}, Python "
        f"{platform.python_version()}, {total} records, best of {repeat}"
        f"{', memory.tune()' if args.memory_tune else ''})\n"
    )
    print(
        "| value | codec | wire MB | records rec/s | MB/s | no-CRC rec/s "
        "| Arrow rec/s | Arrow GB/s | aiokafka rec/s | records vs aiokafka | Arrow vs aiokafka |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for value_size in (100, 1024):
        for codec in CODECS:
            fetches, n = build_fetch(value_size, codec, total)
            wire = sum(map(len, fetches))
            payload = n * (value_size + 10)
            fk, got = time_best(ferrokafka_path(fetches, True), repeat)
            assert got == n, (got, n)
            fk_nocrc, _ = time_best(ferrokafka_path(fetches, False), repeat)
            cols, got_cols = time_best(columns_path(fetches), repeat)
            assert got_cols == n, (got_cols, n)
            aio, got_aio = time_best(aiokafka_path(fetches), repeat)
            assert got_aio == n, (got_aio, n)
            print(
                f"| {value_size} B | {codec} | {wire / 1e6:.1f} | {n / fk / 1e6:.2f} M | "
                f"{payload / fk / 1e6:.0f} | {n / fk_nocrc / 1e6:.2f} M | {n / cols / 1e6:.2f} M | "
                f"{payload / cols / 1e9:.2f} | {n / aio / 1e6:.2f} M | "
                f"{aio / fk:.1f}x | {aio / cols:.1f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
