"""The Java side of the comparisons: reading a topic back with the Java consumer
(tools/java/InteropConsumer.java, run from the broker's own jars), to check that what ferrokafka
writes is what the reference client reads; running Kafka's own command-line tools
(``kafka_tool``), whose answers come from Java's ``Admin``."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

from ferrokafka.testing import kafka_version, resolve_jars, resolve_kafka

JAVA_CONSUMER = Path(__file__).resolve().parents[2] / "tools" / "java" / "InteropConsumer.java"

# (partition, offset, timestamp, key, value, headers) as every reader in the tests reports a
# record.
Row = tuple[int, int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def read_java(bootstrap: str, topic: str, count: int) -> list[Row]:
    cmd = ["java", "-cp", resolve_kafka().classpath, str(JAVA_CONSUMER)]
    cmd += [bootstrap, topic, str(count), "30000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-3000:]

    def unb64(s: str | None) -> bytes | None:
        return None if s is None else base64.b64decode(s)

    rows: list[Row] = []
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        headers = [(base64.b64decode(k).decode(), unb64(v)) for k, v in r["headers"]]
        rows.append(
            (
                r["partition"],
                r["offset"],
                r["timestamp"],
                unb64(r["key"]),
                unb64(r["value"]),
                headers,
            )
        )
    return rows


def run_kafka_tool(tool_class: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One of Kafka's tools (``org.apache.kafka.tools...``, the classes behind ``kafka-*.sh``)
    run from the broker's release and kafka-tools, finished, whatever its exit status."""
    tools = resolve_jars([f"org.apache.kafka:kafka-tools:{kafka_version()}"]).classpath
    cmd = ["java", "-cp", f"{resolve_kafka().classpath}:{tools}", tool_class, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def kafka_tool(tool_class: str, *args: str) -> str:
    """The standard output of one of Kafka's tools (``run_kafka_tool``); a failure fails the
    test with the tool's stderr."""
    done = run_kafka_tool(tool_class, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
