"""Reading a topic back with the Java consumer (tools/java/InteropConsumer.java, run from the
broker's own jars), to check that what ferrokafka writes is what the reference client reads."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

from ferrokafka.testing import resolve_kafka

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
