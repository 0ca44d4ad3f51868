"""The Java side: kafka-clients and Kafka's tools from Maven (``ferrokafka.testing``), the
harness's Java programs (tools/java/Bench*.java and ShareMember.java, compiled once per harness
run) and Kafka's ``ConsumerPerformance``/``ProducerPerformance`` (run through ``BenchTool``,
which adds the wall and CPU time of the call).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .runner import ROOT

#: The Bench* programs, and ShareMember (W9's Java member; the share-group tests also run it
#: as a single-file source program).
SOURCES = [
    *sorted((ROOT / "tools" / "java").glob("Bench*.java")),
    ROOT / "tools" / "java" / "ShareMember.java",
]
CONSUMER_PERFORMANCE = "org.apache.kafka.tools.ConsumerPerformance"
PRODUCER_PERFORMANCE = "org.apache.kafka.tools.ProducerPerformance"


@dataclass(frozen=True)
class Java:
    java: str
    classpath: str  # the compiled Bench* classes, then kafka-tools (with kafka-clients)
    version: str

    def argv(self, main: str, *args: object) -> list[str]:
        return [self.java, "-cp", self.classpath, main, *map(str, args)]

    def consumer(
        self,
        mode: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        n: int,
        properties: Path | None = None,
    ) -> list[str]:
        """BenchConsumer's command line; ``properties``: a file of extra client configs."""
        extra = [] if properties is None else [properties]
        return self.argv("BenchConsumer", mode, bootstrap, topic, partitions, n, *extra)

    def group(self, bootstrap: str, topic: str, partitions: int, group: str, protocol: str):
        return self.argv("BenchGroup", bootstrap, topic, partitions, group, protocol)

    def share_member(
        self, bootstrap: str, group: str, topic: str, count: int, idle_ms: int, *, commit: bool
    ) -> list[str]:
        """ShareMember's command line, quiet: it prints only its summary line,
        ``{"records": n, "first_ms": t0, "last_ms": t1}``; it stops after ``count`` records
        (0: no count) or ``idle_ms`` without one (counted from its start until the first);
        ``commit``: ``commitSync()`` after each poll."""
        flags = ["quiet"] if commit else ["quiet", "nocommit"]
        return self.argv("ShareMember", bootstrap, group, topic, count, idle_ms, *flags)

    def tool(self, tool_class: str, *args: object) -> list[str]:
        return self.argv("BenchTool", tool_class, *args)


def prepare(build_dir: Path) -> Java:
    """Resolve kafka-tools, compile the Bench programs into ``build_dir``."""
    from ferrokafka.testing import kafka_version, resolve_jars

    java = shutil.which("java")
    javac = shutil.which("javac")
    if java is None or javac is None:
        raise RuntimeError("the Java clients need a JDK (java and javac) on PATH")
    jars = resolve_jars([f"org.apache.kafka:kafka-tools:{kafka_version()}"]).classpath
    build_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [javac, "-nowarn", "-d", str(build_dir), "-cp", jars, *map(str, SOURCES)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    first = (out.stderr.strip().splitlines() or ["?"])[0]
    return Java(java=java, classpath=f"{build_dir}:{jars}", version=first)


def parse_consumer_performance(lines: list[str]) -> tuple[int, float]:
    """(records, MB) from ConsumerPerformance's figures line: start.time, end.time,
    data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, ..."""
    for line in reversed(lines):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 6 and re.match(r"\d{4}-\d\d-\d\d", parts[0]):
            return int(parts[4]), float(parts[2])
    raise ValueError(f"no figures line in ConsumerPerformance's output: {lines[-3:]}")


def parse_producer_performance(lines: list[str]) -> int:
    """The record count of ProducerPerformance's final line: ``N records sent, ...``."""
    for line in reversed(lines):
        m = re.match(r"\s*(\d+) records sent,", line)
        if m:
            return int(m.group(1))
    raise ValueError(f"no summary line in ProducerPerformance's output: {lines[-3:]}")
