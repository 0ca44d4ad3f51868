"""Capture golden protocol bytes from a real Kafka broker.

Starts a single KRaft node whose PLAINTEXT listener is *advertised* at a recording proxy, so
every connection a client makes (bootstrap and after) passes through it. Two clients talk to it:

* the Java client, through Kafka's own command-line tools (TopicCommand, GetOffsetShell,
  ConsumerGroupCommand, ConsoleShareConsumer, ProducerPerformance) from Maven Central;
* ferrokafka itself.

For each (client, API, version) the first request frame and its response frame are written to
``tests/fixtures/golden/<client>/<Api>-v<version>-{request,response}.bin`` (frame bodies without
the size prefix). The Rust tests decode every file and re-encode it byte for byte.

Run: ``.venv/bin/python tools/capture_golden.py`` (a few minutes; needs java and mvn).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import sys
from pathlib import Path

from ferrokafka import _native
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ConfigResource,
    ConfigResourceType,
    NewPartitions,
    NewTopic,
    RecordsToDelete,
)
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import ApiKey
from ferrokafka.structs import TopicPartition
from ferrokafka.testing import KafkaBroker, resolve_jars, resolve_kafka
from ferrokafka.testing.broker import kafka_version

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "golden"
TOPIC = "golden"
GROUP = "golden-group"
SHARE_GROUP = "golden-share-group"
SUPPORTED = set(_native.supported_apis())


class Recorder:
    """Keeps the first request/response pair per (client, api_key, version)."""

    def __init__(self) -> None:
        self.client = "java"
        self.saved: set[tuple[str, int, int]] = set()

    def save(self, key: int, version: int, request: bytes, response: bytes) -> None:
        ident = (self.client, key, version)
        if key not in SUPPORTED or ident in self.saved:
            return
        name, low, high, _ = _native.supported_apis()[key]
        if not low <= version <= high:
            print(f"  NOT SUPPORTED: {self.client} {name} v{version}", flush=True)
            return
        self.saved.add(ident)
        folder = OUT / self.client
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}-v{version}-request.bin").write_bytes(request)
        (folder / f"{name}-v{version}-response.bin").write_bytes(response)
        print(f"  captured {self.client} {name} v{version}", flush=True)


def _frames(buf: bytearray) -> list[bytes]:
    out = []
    while len(buf) >= 4:
        (size,) = struct.unpack(">i", buf[:4])
        if len(buf) < 4 + size:
            break
        out.append(bytes(buf[4 : 4 + size]))
        del buf[: 4 + size]
    return out


async def _proxy(recorder: Recorder, port: int, target: int) -> asyncio.Server:
    async def handle(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        br, bw = await asyncio.open_connection("127.0.0.1", target)
        pending: dict[int, tuple[int, int, bytes]] = {}

        async def up() -> None:
            buf = bytearray()
            while data := await cr.read(65536):
                bw.write(data)
                buf += data
                for frame in _frames(buf):
                    key, version, corr = struct.unpack(">hhi", frame[:8])
                    pending[corr] = (key, version, frame)
            bw.close()

        async def down() -> None:
            buf = bytearray()
            while data := await br.read(65536):
                cw.write(data)
                buf += data
                for frame in _frames(buf):
                    (corr,) = struct.unpack(">i", frame[:4])
                    if corr in pending:
                        key, version, request = pending.pop(corr)
                        recorder.save(key, version, request, frame)
            cw.close()

        await asyncio.gather(up(), down(), return_exceptions=True)

    return await asyncio.start_server(handle, "127.0.0.1", port)


async def _java(classpath: str, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        "java",
        "-cp",
        classpath,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"java {args[0]} failed:\n{out.decode(errors='replace')}")


async def _ferrokafka(bootstrap: str) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(TOPIC + "-fk", 2, 1)])
        await admin.wait_for_topic(TOPIC + "-fk", partitions=2, timeout=30)
        await admin.create_partitions({TOPIC + "-fk": NewPartitions(3)})
        await admin.wait_for_topic(TOPIC + "-fk", partitions=3, timeout=30)
        await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC + "-fk")])
        await admin.delete_records({TopicPartition(TOPIC + "-fk", 0): RecordsToDelete(0)})
        await admin.list_consumer_groups()
        await admin.describe_consumer_groups([GROUP])
        await admin.list_consumer_group_offsets(GROUP)
        # A group no one created: the broker's answer carries GROUP_ID_NOT_FOUND.
        await admin.delete_consumer_groups([GROUP + "-fk"])
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(TOPIC)
        await client.refresh_metadata()
        await client.send_to_any(ApiKey.FIND_COORDINATOR, {"key": "g", "coordinator_keys": ["g"]})
        leader = client.cluster.broker_ids()[0]
        await client.send(
            leader,
            ApiKey.LIST_OFFSETS,
            {
                "replica_id": -1,
                "topics": [
                    {"name": TOPIC, "partitions": [{"partition_index": 0, "timestamp": -1}]}
                ],
            },
        )
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.delete_topics([TOPIC + "-fk"])


async def main() -> None:
    version = kafka_version()
    classpath = ":".join(
        [
            resolve_kafka(version).classpath,
            resolve_jars([f"org.apache.kafka:kafka-tools:{version}"]).classpath,
        ]
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        proxy_port = s.getsockname()[1]
    broker = KafkaBroker(config={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}"})
    await asyncio.to_thread(broker.start)
    try:
        recorder = Recorder()
        server = await _proxy(recorder, proxy_port, broker.port)
        bootstrap = f"127.0.0.1:{proxy_port}"
        print(f"Kafka {version}; broker :{broker.port}, recording proxy :{proxy_port}")
        recorder.client = "java"
        tools = "org.apache.kafka.tools."
        await _java(
            classpath,
            tools + "TopicCommand",
            "--bootstrap-server",
            bootstrap,
            "--create",
            "--topic",
            TOPIC,
            "--partitions",
            "2",
            "--replication-factor",
            "1",
        )
        await _java(
            classpath,
            tools + "GetOffsetShell",
            "--bootstrap-server",
            bootstrap,
            "--topic",
            TOPIC,
            "--time",
            "-1",
        )
        # Commit offsets for a group without members (OffsetCommit), then list and describe it.
        group_command = [tools + "consumer.group.ConsumerGroupCommand", "--bootstrap-server"]
        await _java(
            classpath,
            *group_command,
            bootstrap,
            "--reset-offsets",
            "--to-earliest",
            "--execute",
            "--group",
            GROUP,
            "--topic",
            TOPIC,
        )
        await _java(classpath, *group_command, bootstrap, "--list")
        await _java(classpath, *group_command, bootstrap, "--describe", "--group", GROUP)
        # A share group (KIP-932): the console share consumer joins (ShareGroupHeartbeat),
        # fetches and acknowledges (ShareFetch, ShareAcknowledge). A share group starts at the
        # latest offset, so the records are produced once it has had time to join.
        share = asyncio.create_task(
            _java(
                classpath,
                tools + "consumer.ConsoleShareConsumer",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                TOPIC,
                "--group",
                SHARE_GROUP,
                "--max-messages",
                "3",
                "--timeout-ms",
                "60000",
            )
        )
        await asyncio.sleep(12)
        await _java(
            classpath,
            tools + "ProducerPerformance",
            "--topic",
            TOPIC,
            "--num-records",
            "5",
            "--record-size",
            "10",
            "--throughput",
            "-1",
            "--producer-props",
            f"bootstrap.servers={bootstrap}",
        )
        await share
        recorder.client = "ferrokafka"
        await _ferrokafka(bootstrap)
        recorder.client = "java"
        await _java(classpath, *group_command, bootstrap, "--delete", "--group", GROUP)
        await _java(
            classpath,
            tools + "TopicCommand",
            "--bootstrap-server",
            bootstrap,
            "--delete",
            "--topic",
            TOPIC,
        )
        server.close()
        (OUT / "KAFKA_VERSION").write_text(version + "\n")
    finally:
        await asyncio.to_thread(broker.stop)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(main())
