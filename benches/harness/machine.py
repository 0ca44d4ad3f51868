"""What the harness ran on: cores, CPU model, memory, OS, and the version of every client and
of the broker."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = [
    "ferrokafka",
    "aiokafka",
    "kafka-python",
    "confluent-kafka",
    "kafkarrow",
    "pyarrow",
    "pyspark",
    "pandas",
    # W11: confluent-kafka's deserializers decode with these.
    "fastavro",
    "jsonschema",
]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def ferrokafka_state() -> str:
    """The checkout's commit and the built native module's hash: taken at the start and the
    end of a run, so a run during which ferrokafka changed says so."""
    import hashlib

    import ferrokafka._native as native

    with open(native.__file__, "rb") as f:
        build = hashlib.sha256(f.read()).hexdigest()[:12]
    return f"commit {_git_commit()}, native module {build}"


def _git_commit() -> str | None:
    """The checkout's commit (read-only git), "+ local changes" when the tree differs."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return None
    return f"{head}{' + local changes' if dirty else ''}" if head else None


def _java_version() -> str | None:
    """``java -version``'s first line (when no Java client ran, for Spark's JVM)."""
    import shutil

    java = shutil.which("java")
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stderr.strip().splitlines() or [None])[0]


def describe(java_version: str | None, broker: str, state_at_start: str) -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    try:
        import confluent_kafka

        versions["librdkafka"] = confluent_kafka.libversion()[0]
    except ImportError:
        versions["librdkafka"] = None
    from ferrokafka.testing import kafka_version

    versions["kafka-clients (Java consumer)"] = kafka_version()
    versions["kafka-tools (ConsumerPerformance, ProducerPerformance)"] = kafka_version()
    from ferrokafka.testing.spark import SPARK_KAFKA_VERSION

    versions["spark-sql-kafka-0-10"] = SPARK_KAFKA_VERSION
    versions["spark-avro"] = SPARK_KAFKA_VERSION  # resolved with it (spark_kafka_jars)
    versions["java"] = java_version or _java_version()
    versions["broker"] = broker
    return {
        "cores": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gib": _memory_gib(),
        "machine": platform.machine(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "ferrokafka": {"start": state_at_start, "end": ferrokafka_state()},
        "versions": versions,
    }
