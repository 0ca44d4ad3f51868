"""The producer's latency at a low rate: how long ``await producer.send_and_wait(...)`` takes
for one 100-byte record at a time with ``linger_ms=0`` (acks=1), a record every millisecond.

Each round runs ``--records`` sends (the first 200 are not counted) in a child process, for
ferrokafka and aiokafka (or ``--clients``), alternating; prints the medians over rounds of
p50, p99 and p99.9 in milliseconds. ``--pythonpath`` runs ferrokafka from another build (an
unpacked wheel of an earlier commit) as ``ferrokafka-other``, to compare before and after.

    .venv/bin/python benches/produce_latency.py [--records 3000] [--rounds 3]
        [--clients ferrokafka,aiokafka] [--pythonpath DIR] [--bootstrap H:P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

SKIP = 200
QUANTILES = {"p50": 0.5, "p99": 0.99, "p99.9": 0.999}


async def measure(module: str, bootstrap: str, topic: str, records: int) -> dict[str, float]:
    mod: Any = __import__(module)
    producer = mod.AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=0, acks=1, enable_idempotence=False
    )
    await producer.start()
    took = []
    try:
        for _ in range(records):
            start = time.perf_counter()
            await producer.send_and_wait(topic, b"x" * 100)
            took.append(time.perf_counter() - start)
            await asyncio.sleep(0.001)
    finally:
        await producer.stop()
    took = sorted(took[SKIP:])
    return {name: took[int(q * (len(took) - 1))] * 1000 for name, q in QUANTILES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default="ferrokafka,aiokafka")
    parser.add_argument("--pythonpath", help="an earlier ferrokafka build, run as ferrokafka-other")
    parser.add_argument("--bootstrap")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        module, bootstrap, topic = args.child
        print(json.dumps(asyncio.run(measure(module, bootstrap, topic, args.records))))
        return

    from harness.broker import broker

    clients = args.clients.split(",")
    if args.pythonpath:
        clients.append("ferrokafka-other")
    runs: dict[str, list[dict[str, float]]] = {c: [] for c in clients}
    with broker(args.bootstrap) as b:
        topic = f"latency-{uuid.uuid4().hex[:8]}"
        b.kafka.create_topic(topic, partitions=1)
        for rnd in range(1, args.rounds + 1):
            for c in clients:
                env = dict(os.environ)
                if c == "ferrokafka-other":
                    env["PYTHONPATH"] = args.pythonpath
                module = "aiokafka" if c == "aiokafka" else "ferrokafka"
                argv = [sys.executable, __file__, "--records", str(args.records)]
                out = subprocess.run(
                    [*argv, "--child", module, b.bootstrap, topic],
                    capture_output=True,
                    text=True,
                    timeout=600,
                    check=True,
                    env=env,
                )
                r = json.loads(out.stdout.strip().splitlines()[-1])
                runs[c].append(r)
                cells = ", ".join(f"{k} {v:.3f} ms" for k, v in r.items())
                print(f"round {rnd} {c}: {cells}", file=sys.stderr)
    print(
        f"\n# send_and_wait latency, linger_ms=0, acks=1, {args.records - SKIP:,} records a "
        f"round, medians of {args.rounds}\n"
    )
    print("| producer | " + " | ".join(f"{q} ms" for q in QUANTILES) + " |")
    print("|---|" + "---|" * len(QUANTILES))
    for c in clients:
        cells = " | ".join(f"{statistics.median(r[q] for r in runs[c]):.3f}" for q in QUANTILES)
        print(f"| {c} | {cells} |")


if __name__ == "__main__":
    main()
