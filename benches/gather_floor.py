"""What ``asyncio.gather`` itself costs per future, with no Kafka: the floor under W6's
"futures awaited with ``gather`` per 10k" rows.

``gather`` is Python: per future it checks the type, asks for the loop, keeps the future in a dict
and a list and adds a done-callback; when the future is done that callback runs, and the result
list is built with ``cancelled()``, ``exception()`` and ``result()`` once more. This program
times one ``gather`` over 10,000 futures, settled after ``gather`` has added its callbacks (in one
loop callback) and settled before it is called, for asyncio's own futures
(``loop.create_future()`` and ``set_result``) and for the producer's ``RecordFuture``s (a
``BatchRecords`` of 10,000 records of 100 bytes, resolved as a broker's answer resolves it).
The settling itself is not counted: it is the producer's work whether or not anyone awaits.
Prints a Markdown table of the medians (CPU ns a future) over the rounds. Run with a release
build:

    .venv/bin/python benches/gather_floor.py [--futures N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from ferrokafka import _native
from ferrokafka.structs import TopicPartition

TP = TopicPartition("t", 0)
VALUE = b"x" * 100


def asyncio_futures(
    loop: asyncio.AbstractEventLoop, n: int
) -> tuple[list[Any], Callable[[], None]]:
    futures = [loop.create_future() for _ in range(n)]

    def settle() -> None:
        for f in futures:
            f.set_result(None)

    return futures, settle


def record_futures(loop: asyncio.AbstractEventLoop, n: int) -> tuple[list[Any], Callable[[], None]]:
    batch = _native.BatchRecords(1 << 24)
    batch.set_loop(loop)
    futures = [batch.last_future(batch.add(0, None, VALUE, []) or 0) for _ in range(n)]

    def settle() -> None:
        batch.resolve(TP, 0, -1, None)

    return futures, settle


async def one(make: Callable[..., Any], n: int, settled_first: bool) -> float:
    """CPU ns a future of one ``gather``, settling not counted (it is the producer's work
    whether or not anyone awaits the futures)."""
    loop = asyncio.get_running_loop()
    futures, settle = make(loop, n)
    settling = 0.0

    def timed_settle() -> None:
        nonlocal settling
        start = time.process_time()
        settle()
        settling = time.process_time() - start

    if settled_first:
        settle()
    start = time.process_time()
    if not settled_first:
        loop.call_soon(timed_settle)
    await asyncio.gather(*futures)
    return (time.process_time() - start - settling) / n * 1e9


async def main(n: int, rounds: int) -> None:
    rows = [
        ("asyncio `Future`", asyncio_futures),
        ("ferrokafka `RecordFuture`", record_futures),
    ]
    print(
        f"`asyncio.gather` over {n:,} futures, CPU ns a future (median of {rounds}), Python "
        f"{platform.python_version()}\n"
    )
    print("| futures | settled after `gather` is called | settled before |")
    print("|---|---|---|")
    for name, make in rows:
        after = [await one(make, n, False) for _ in range(rounds)]
        before = [await one(make, n, True) for _ in range(rounds)]
        print(f"| {name} | {statistics.median(after):.0f} | {statistics.median(before):.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--futures", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    asyncio.run(main(args.futures, args.rounds))
