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
    "BrokerStartError",
    "find_java",
    "kafka_version",
    "resolve_kafka",
]

#: The Apache Kafka release the harness runs unless ``FERROKAFKA_KAFKA_VERSION`` says otherwise.
KAFKA_VERSION = "4.2.0"
SCALA_BINARY_VERSION = "2.13"
#: Kafka logs through slf4j 1.x; a newer slf4j-api pulled in transitively would find no binding.
SLF4J_VERSION = "1.7.36"


class BrokerStartError(RuntimeError):
    """A broker could not be set up or did not become ready; the message carries the tail of
    the node's log."""


def kafka_version() -> str:
    """The Kafka version to run: ``$FERROKAFKA_KAFKA_VERSION`` or :data:`KAFKA_VERSION`."""
    return os.environ.get("FERROKAFKA_KAFKA_VERSION") or KAFKA_VERSION


def _major_minor(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a Kafka release version: {version!r}") from None


def _log4j_version(version: str) -> str:
    # The log4j2 release each Kafka line was built against (Kafka does not declare it in the
    # broker's POM, so it has to be added by hand).
    return "2.25.3" if _major_minor(version) >= (4, 2) else "2.24.3"


def resolve_kafka(version: str | None = None) -> ResolvedJars:
    """The broker's jars (``kafka_2.13`` at runtime scope plus log4j2), resolved with Maven and
    cached; a second call is instant and offline."""
    version = version or kafka_version()
    if _major_minor(version) < (4, 0):
        raise ValueError(f"the harness runs Kafka 4.x (KRaft + log4j2), not {version}")
    log4j = _log4j_version(version)
    return resolve_jars(
        [
            f"org.apache.kafka:kafka_{SCALA_BINARY_VERSION}:{version}",
            f"org.apache.logging.log4j:log4j-api:{log4j}",
            f"org.apache.logging.log4j:log4j-core:{log4j}",
            f"org.apache.logging.log4j:log4j-slf4j-impl:{log4j}",
        ],
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
