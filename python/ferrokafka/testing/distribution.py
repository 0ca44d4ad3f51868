"""Which Apache Kafka the harness runs and where its pieces come from: the release (pinned,
or ``FERROKAFKA_KAFKA_VERSION``), its jars resolved from Maven Central, and the JVM (the
``java`` argument, ``FERROKAFKA_JAVA``, ``JAVA_HOME``, else ``java`` on the PATH)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .maven import ResolvedJars, resolve_jars

__all__ = [
    "KAFKA_VERSION",
    "SCALA_BINARY_VERSION",
    "SUPPORTED_KAFKA",
    "BrokerStartError",
    "find_java",
    "kafka_release",
    "kafka_version",
    "logs_through_log4j2",
    "resolve_kafka",
]

#: The Apache Kafka release the harness runs unless ``FERROKAFKA_KAFKA_VERSION`` says otherwise.
KAFKA_VERSION = "4.2.0"
SCALA_BINARY_VERSION = "2.13"
#: Kafka logs through slf4j 1.x; a newer slf4j-api pulled in transitively would find no binding.
SLF4J_VERSION = "1.7.36"
#: The log4j 1.x API Kafka 3.9 logs through (reload4j), the version its release ships.
RELOAD4J_VERSION = "1.2.25"
#: The releases the harness runs, all in KRaft mode.
SUPPORTED_KAFKA = "Apache Kafka 3.9 and 4.x (KRaft)"
_OLDEST = (3, 9)


class BrokerStartError(RuntimeError):
    """A broker could not be set up or did not become ready; the message carries the tail of
    the node's log."""


def kafka_version() -> str:
    """The Kafka version to run: ``$FERROKAFKA_KAFKA_VERSION`` or :data:`KAFKA_VERSION`."""
    return os.environ.get("FERROKAFKA_KAFKA_VERSION") or KAFKA_VERSION


def kafka_release(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a Kafka release version such as ``"3.9.1"``."""
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a Kafka release version: {version!r}") from None


def logs_through_log4j2(version: str) -> bool:
    """Kafka 4.0 moved the broker from log4j 1.x (reload4j) to log4j2 (KIP-653)."""
    return kafka_release(version) >= (4, 0)


def _logging_artifacts(version: str) -> list[str]:
    # The broker's POM declares only slf4j-api; the binding and its backend come from the
    # release tarball, so they are added by hand at the versions each release line ships.
    if not logs_through_log4j2(version):
        return [
            f"ch.qos.reload4j:reload4j:{RELOAD4J_VERSION}",
            f"org.slf4j:slf4j-reload4j:{SLF4J_VERSION}",
        ]
    log4j = "2.25.3" if kafka_release(version) >= (4, 2) else "2.24.3"
    return [
        f"org.apache.logging.log4j:log4j-api:{log4j}",
        f"org.apache.logging.log4j:log4j-core:{log4j}",
        f"org.apache.logging.log4j:log4j-slf4j-impl:{log4j}",
    ]


def resolve_kafka(version: str | None = None) -> ResolvedJars:
    """The broker's jars (``kafka_2.13`` at runtime scope plus its logging backend), resolved
    with Maven and cached; a second call is instant and offline. Raises ValueError for a
    release the harness does not run (see :data:`SUPPORTED_KAFKA`)."""
    version = version or kafka_version()
    if kafka_release(version) < _OLDEST:
        raise ValueError(
            f"the harness runs {SUPPORTED_KAFKA}, not Kafka {version}: before 3.9 the storage "
            "formatter has no --standalone (KIP-853), which a single-node broker is formatted with"
        )
    return resolve_jars(
        [f"org.apache.kafka:kafka_{SCALA_BINARY_VERSION}:{version}", *_logging_artifacts(version)],
        managed=[f"org.slf4j:slf4j-api:{SLF4J_VERSION}"],
        scope="runtime",
    )


def find_java(java: str | None) -> str:
    candidates: list[str] = []
    if java:
        candidates.append(java)
    if os.environ.get("FERROKAFKA_JAVA"):
        candidates.append(os.environ["FERROKAFKA_JAVA"])
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    candidates.append("java")
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return os.path.abspath(found)
    raise BrokerStartError(f"no Java runtime found (tried {candidates}); Kafka needs Java 17+")
