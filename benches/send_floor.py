"""What aiokafka's producer API costs per record before any Kafka work: the floor under
``send()``.

``fut = await producer.send(topic, value)`` then ``fut.add_done_callback(cb)`` (W6's pattern)
implies, per record, a coroutine awaited, an ``asyncio.Future`` created, a callback added, the
future resolved with a ``RecordMetadata`` and the callback run by the event loop. This program
times those steps alone, with no broker and no client, under asyncio and uvloop, and prints
microseconds per record next to what confluent-kafka's ``Producer.produce()`` spends in all
(measured by ``benches/harness.py --workloads W6``: 1 / records per second).

    python benches/send_floor.py [--records N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from ferrokafka.structs import RecordMetadata, TopicPartition

BATCH = 160  # records per resolved batch: 16 KiB batches of 100-byte values


async def steps(n: int) -> dict[str, float]:
    """Seconds per record of each step, and of them all together."""
    loop = asyncio.get_running_loop()
    tp = TopicPartition("t", 0)
    delivered = 0

    def callback(_fut: asyncio.Future[Any]) -> None:
        nonlocal delivered
        delivered += 1

    async def send() -> asyncio.Future[RecordMetadata]:
        return loop.create_future()

    out: dict[str, float] = {}
    start = time.perf_counter()
    for _ in range(n):
        await send()
    out["await send() (a coroutine returning a new future)"] = time.perf_counter() - start

    futures = [loop.create_future() for _ in range(n)]
    start = time.perf_counter()
    for fut in futures:
        fut.add_done_callback(callback)
    out["add_done_callback"] = time.perf_counter() - start

    start = time.perf_counter()
    for first in range(0, n, BATCH):
        for i, fut in enumerate(futures[first : first + BATCH], first):
            fut.set_result(RecordMetadata("t", 0, tp, i, 0, 0, -1))
        await asyncio.sleep(0)  # the loop runs the callbacks set_result scheduled
    await asyncio.sleep(0)
    out["RecordMetadata + set_result + the loop running the callback"] = time.perf_counter() - start
    assert delivered == n, delivered
    out["all of the above"] = sum(out.values())
    return {step: seconds / n for step, seconds in out.items()}


def best(
    run: Callable[[Coroutine[Any, Any, dict[str, float]]], dict[str, float]], n: int, repeat: int
) -> dict[str, float]:
    results = [run(steps(n)) for _ in range(repeat)]
    return {step: min(r[step] for r in results) for step in results[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import uvloop

    loops = {"asyncio": asyncio.run, "uvloop": uvloop.run}
    table = {name: best(run, args.records, args.repeat) for name, run in loops.items()}
    print(f"Per record, best of {args.repeat} runs of {args.records:,} records (microseconds)\n")
    print("| step | " + " | ".join(loops) + " |")
    print("|---|" + "---|" * len(loops))
    for step in table["asyncio"]:
        cells = " | ".join(f"{table[name][step] * 1e6:.2f}" for name in loops)
        print(f"| {step} | {cells} |")


if __name__ == "__main__":
    main()
