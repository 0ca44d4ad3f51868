"""Capture record batches written by other producers, raw from the broker, as test fixtures.

Starts a single KRaft node (the project's harness) and, for every codec, writes the same
dataset to its own one-partition topic with

* the Java producer (kafka-clients from Maven; ``tools/java/InteropProducer.java``), and
* librdkafka (confluent-kafka from PyPI),

then fetches each partition from offset 0 with a plain Fetch request and saves the response's
``records`` bytes, untouched, to ``tests/fixtures/interop/<producer>-<codec>.bin``. The Java
producer also writes one committed transaction (``java-transactional.bin``, with its COMMIT
marker). The dataset (``tests/fixtures/interop/dataset.py``, mirrored in the Java program) is what
``tests/unit/test_interop_fixtures.py`` expects to decode.

Run: ``.venv/bin/python tools/capture_interop.py`` (about a minute; needs java and mvn).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import confluent_kafka
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import ApiKey
from ferrokafka.records import decode_records
from ferrokafka.structs import TopicPartition
from ferrokafka.testing import KafkaBroker, resolve_kafka

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "interop"))
from dataset import COUNT, dataset_record

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "interop"
JAVA_PRODUCER = ROOT / "tools" / "java" / "InteropProducer.java"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def produce_java(bootstrap: str, topic: str, codec: str, tx_id: str | None = None) -> None:
    cmd = ["java", "-cp", resolve_kafka().classpath, str(JAVA_PRODUCER)]
    cmd += [bootstrap, topic, codec, str(COUNT)] + ([tx_id] if tx_id else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def produce_librdkafka(bootstrap: str, topic: str, codec: str) -> None:
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.codec": codec,
            "linger.ms": 20,
            "batch.size": 8192,
            "acks": "all",
        }
    )
    for i in range(COUNT):
        ts, key, value, headers = dataset_record(i)
        producer.produce(topic, value, key, partition=0, timestamp=ts, headers=headers)
    if producer.flush(30) != 0:
        raise RuntimeError(f"librdkafka could not deliver everything to {topic}")


async def fetch_raw(bootstrap: str, topic: str, end_offset: int) -> bytes:
    """The partition's records bytes from offset 0 up to ``end_offset``."""
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None
        records = b""
        for _ in range(100):
            position = decode_records(records, topic, 0).next_offset or 0
            if position >= end_offset:
                return records
            body = {
                "max_wait_ms": 100,
                "min_bytes": 1,
                "max_bytes": 8 << 20,
                "isolation_level": 0,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {
                                "partition": 0,
                                "fetch_offset": position,
                                "partition_max_bytes": 8 << 20,
                            }
                        ],
                    }
                ],
            }
            response = await client.send(leader, ApiKey.FETCH, body, version=12)
            part = response["responses"][0]["partitions"][0]
            if part["error_code"] != 0:
                raise RuntimeError(f"fetch {topic}: error {part['error_code']}")
            # A fetch may stop short of the end (transaction markers land just after
            # commitTransaction returns): fetch on from where the bytes end, as a consumer does.
            records += bytes(part["records"] or b"")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{topic} never reached offset {end_offset}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with KafkaBroker() as broker:
        bootstrap = broker.bootstrap_servers
        jobs = [("java", c) for c in CODECS] + [("librdkafka", c) for c in CODECS]
        jobs.append(("java", "transactional"))
        for producer, codec in jobs:
            topic = f"interop-{producer}-{codec}"
            broker.create_topic(topic)
            if codec == "transactional":
                produce_java(bootstrap, topic, "none", tx_id="interop-tx")
            elif producer == "java":
                produce_java(bootstrap, topic, codec)
            else:
                produce_librdkafka(bootstrap, topic, codec)
            end = COUNT + 1 if codec == "transactional" else COUNT
            raw = asyncio.run(fetch_raw(bootstrap, topic, end))
            path = OUT / f"{producer}-{codec}.bin"
            path.write_bytes(raw)
            print(f"{path.relative_to(ROOT)}: {len(raw)} bytes", flush=True)


if __name__ == "__main__":
    sys.exit(main())
