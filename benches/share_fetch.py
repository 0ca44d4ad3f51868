"""One share-group member's ShareFetch round trips, beside its records/s: what bounds W9's
one-member rows.

Each run is a new share group (``share.auto.offset.reset=earliest``) whose one member reads the
topic through ``await consumer.getmany(timeout_ms=1000)`` in a loop (implicit acknowledgement;
``--idiom getone``: ``await consumer.getone()``, a record at a time) until it has every
record. records/s and CPU run from the first record to the last, as in W9; each ShareFetch is
timed as the client sees it, from the request handed to the connection to
the response decoded (the program wraps the consumer's internal client ``send`` to do so), and
counted with the records it acquired. The topic is W9's dataset (1,000,000 records of 100 B in
4 partitions, record batches of 4,032; ``--records`` for fewer), written once.
``--max-fetch-factor`` sets the ceiling a member's fetches grow to, in ``max_poll_records``
(the consumer's is 16), to compare fetch sizes. Prints a Markdown table of the runs. Run with
a release build:

    .venv/bin/python benches/share_fetch.py [--bootstrap H:P] [--runs N] [--records N]
        [--max-fetch-factor F] [--idiom getmany|getone]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

from ferrokafka import AIOKafkaShareConsumer
from ferrokafka.protocol import Api
from ferrokafka.share import fetcher as share_fetcher
from harness.datasets import Dataset, write_dataset
from harness.shares import configure_group
from harness.workloads import W9_DATASET


def acquired(response: Any) -> int:
    """The records a ShareFetch response acquired for the member."""
    return sum(
        r["last_offset"] - r["first_offset"] + 1
        for topic in response["responses"]
        for part in topic["partitions"]
        for r in part["acquired_records"]
    )


async def run(bootstrap: str, topic: str, records: int, idiom: str) -> dict[str, float]:
    group = f"share-fetch-{uuid.uuid4().hex[:8]}"
    await configure_group(bootstrap, group)
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap, group_id=group
    )
    await consumer.start()
    times: list[float] = []
    sizes: list[int] = []
    send = consumer._client.send

    async def timed(node: int, api: Any, body: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        response = await send(node, api, body, **kwargs)
        if api is Api.SHARE_FETCH:
            times.append(time.perf_counter() - start)
            sizes.append(acquired(response))
        return response

    consumer._client.send = timed  # type: ignore[method-assign]
    got = 0
    first = cpu_first = 0.0
    try:
        while got < records:
            if idiom == "getone":
                await consumer.getone()
                n = 1
            else:
                n = sum(map(len, (await consumer.getmany(timeout_ms=1000)).values()))
            if n and not got:
                first, cpu_first = time.perf_counter(), time.process_time()
            got += n
        wall, cpu = time.perf_counter() - first, time.process_time() - cpu_first
    finally:
        await consumer.stop()
    return {
        "records_per_s": got / wall,
        "wall": wall,
        "cpu": cpu,
        "fetches": len(times),
        "fetch_ms": statistics.median(times) * 1000,
        "fetch_records": statistics.median(sizes),
    }


async def main_async(args: argparse.Namespace) -> None:
    from harness.broker import broker

    share_fetcher._MAX_FETCH_FACTOR = args.max_fetch_factor
    ds = Dataset(W9_DATASET.partitions, args.records, W9_DATASET.value_size)
    with broker(args.bootstrap) as b:
        topic = f"share-fetch-{uuid.uuid4().hex[:8]}"
        b.kafka.create_topic(topic, partitions=ds.partitions)
        await write_dataset(b.bootstrap, topic, ds)
        rows = [await run(b.bootstrap, topic, ds.records, args.idiom) for _ in range(args.runs)]
    print(
        f"\n# One share member, {args.idiom}(), {ds.describe()}, fetches up to "
        f"{args.max_fetch_factor} x max_poll_records\n"
    )
    print("| run | records/s | wall s | CPU s | ShareFetches | median ms | median records |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows, 1):
        print(
            f"| {i} | {r['records_per_s'] / 1e6:.2f} M | {r['wall']:.2f} | {r['cpu']:.2f} | "
            f"{r['fetches']} | {r['fetch_ms']:.2f} | {r['fetch_records']:,.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", help="a running broker (default: start one)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--records", type=int, default=W9_DATASET.records)
    parser.add_argument("--max-fetch-factor", type=int, default=share_fetcher._MAX_FETCH_FACTOR)
    parser.add_argument("--idiom", choices=["getmany", "getone"], default="getmany")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
