"""W1 over TLS beside W1 over PLAINTEXT: what TLS costs each consumer, on one broker and one
topic. The broker (``ferrokafka.testing``, 2 GiB heap) has a TLS client listener and a PLAINTEXT
one; the dataset is written once, then every client reads it through each listener in turn,
alternating, for ``--rounds`` rounds, each run in its own process (the harness's children).

    .venv/bin/python benches/consume_tls.py                        # W1: 5M x 100 B, 3 rounds
    .venv/bin/python benches/consume_tls.py --records 200000 --rounds 1
    .venv/bin/python benches/consume_tls.py --clients ferrokafka,aiokafka

Prints a Markdown table: median records/s, CPU seconds and peak RSS of each client on each
listener, and TLS's throughput as a share of PLAINTEXT's.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.datasets import Dataset, write_dataset
from harness.java import prepare
from harness.runner import prepare_bytecode
from harness.workloads import WARM_UP_CLIENT, Context, Sizes, consume_once

CLIENTS = ["ferrokafka", "ferrokafka-arrow", "aiokafka", "confluent-kafka", "kafka-python", "java"]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benches/consume_tls.py", description=__doc__.split("\n")[0])
    p.add_argument("--records", type=int, default=5_000_000, help="records (W1: 5,000,000)")
    p.add_argument("--value-size", type=int, default=100, help="bytes per value (W1: 100)")
    p.add_argument("--partitions", type=int, default=8, help="partitions (W1: 8)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", default=",".join(CLIENTS), help=f"of: {','.join(CLIENTS)}")
    args = p.parse_args(argv)
    args.clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    for c in args.clients:
        if c not in CLIENTS:
            p.error(f"unknown client {c!r}: choose from {','.join(CLIENTS)}")
    return args


def table(runs: list[dict[str, Any]], clients: list[str]) -> str:
    def median(client: str, listener: str, key: str) -> float | None:
        values = [r[key] for r in runs if r["client"] == client and r["case"] == listener]
        return statistics.median(values) if values else None

    lines = [
        "| client | PLAINTEXT M rec/s | TLS M rec/s | TLS / PLAINTEXT | CPU s PLAINTEXT | "
        "CPU s TLS | peak RSS MB PLAINTEXT | peak RSS MB TLS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for client in clients:
        plain, tls = (
            median(client, "plaintext", "records_per_s"),
            median(client, "tls", "records_per_s"),
        )
        if plain is None or tls is None:
            lines.append(f"| {client} | failed | | | | | | |")
            continue
        cells = [f"{plain / 1e6:.2f}", f"{tls / 1e6:.2f}", f"{tls / plain:.0%}"]
        for key, fmt in (("cpu", "{:.2f}"), ("rss_mb", "{:.0f}")):
            for listener in ("plaintext", "tls"):
                value = median(client, listener, key)
                cells.append("" if value is None else fmt.format(value))
        lines.append(f"| {client} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def contexts(
    kafka: Any, java: Any, ds: Dataset, rounds: int, java_tls: Path
) -> tuple[Context, Context]:
    """The harness's contexts for the PLAINTEXT listener and the TLS one (sharing one list of
    runs)."""
    sizes = Sizes(w1=ds, w2=ds, w4=ds, w5_seconds={}, w5_warmup=0, w6_records=0, w7=ds, w8=ds)
    common: dict[str, Any] = {
        "kafka": kafka,
        "java": java,
        "sizes": sizes,
        "rounds": rounds,
        "stall_s": 30.0,
    }
    plaintext = Context(bootstrap=kafka.plaintext_bootstrap_servers, **common)
    tls = Context(
        bootstrap=kafka.bootstrap_servers,
        tls={"cafile": str(kafka.ca_file)},
        java_properties=java_tls,
        **common,
    )
    tls.runs = plaintext.runs
    return plaintext, tls


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from ferrokafka.testing import KafkaBroker

    ds = Dataset(args.partitions, args.records, args.value_size)
    with tempfile.TemporaryDirectory(prefix="ferrokafka-bench-tls-") as work:
        java = prepare(Path(work)) if "java" in args.clients else None
        kafka = KafkaBroker(heap_mb=2048, security="ssl")
        kafka.start()
        try:
            java_tls = Path(work) / "tls.properties"
            java_tls.write_text(
                "security.protocol=SSL\nssl.truststore.type=PEM\n"
                f"ssl.truststore.location={kafka.ca_file}\n"
            )
            plaintext, tls = contexts(kafka, java, ds, args.rounds, java_tls)
            prepare_bytecode(plaintext.log)
            topic = plaintext.topic("tls", ds.records)
            kafka.create_topic(topic, partitions=ds.partitions)
            asyncio.run(write_dataset(plaintext.bootstrap, topic, ds))
            plaintext.log(f"wrote {ds.describe()} to {topic}")
            for ctx, listener in ((plaintext, "plaintext"), (tls, "tls")):
                consume_once(ctx, "W1", listener, WARM_UP_CLIENT, 0, topic, ds, keep=False)
            for rnd in range(1, args.rounds + 1):
                for client in args.clients:
                    for ctx, listener in ((plaintext, "plaintext"), (tls, "tls")):
                        consume_once(ctx, "W1", listener, client, rnd, topic, ds)
            kafka.delete_topic(topic)
            version = kafka.version
        finally:
            kafka.stop()
    runs = plaintext.runs
    failed = [r for r in runs if not r["ok"]]
    print(f"W1 over TLS and PLAINTEXT: {ds.describe()}, {args.rounds} round(s), medians")
    print(f"Apache Kafka {version}, one node; a TLS listener with certificates from a test CA")
    print(f"command: benches/consume_tls.py {shlex.join(sys.argv[1:] if argv is None else argv)}")
    print()
    print(table([r for r in runs if r["ok"]], args.clients))
    for r in failed:
        print(f"FAILED: {r['client']} over {r['case']} round {r['round']}: {r.get('error')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
