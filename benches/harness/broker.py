"""The broker every client reads from: one started here with ``ferrokafka.testing`` (full JIT,
3 GiB heap, 1.5 GiB of it young), or an external one given by its bootstrap address.

The broker started here logs its collections, and ``BrokerGC`` collects its heap on demand and
reads the pauses back. W5 uses both: at 50k records/s a broker with a default-sized young
generation pauses for a young collection every few seconds (12-19 ms on a 512 MiB heap, 5-10 ms
on 2 GiB), and every pause delays every partition's records by its length. Such a pause fell in
some clients' runs and not in others', and decided their p99.9. With a young generation of 1.5
GiB and a full collection before each W5 run, a 20 s run at 50k/s has none; the pauses that do
fall in a run are recorded with it."""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEAP_MB = 3072
YOUNG_MB = 1536

_PAUSE = re.compile(r"\[(?P<at>[^\]]+)\].* Pause .* (?P<ms>[0-9.]+)ms$")


class BrokerGC:
    """The started broker's collections: ``collect()`` runs a full one (``jcmd GC.run``, a
    stop-the-world collection since the broker runs without ``ExplicitGCInvokesConcurrent``);
    ``pauses(start, end)`` are the pauses its log shows between two wall-clock times."""

    def __init__(self, log: Path, pid: int) -> None:
        self.log = log
        self.pid = pid

    def collect(self) -> None:
        jcmd = shutil.which("jcmd")
        if jcmd is None:
            raise RuntimeError("jcmd (from the JDK) is needed to collect the broker's heap")
        subprocess.run(
            [jcmd, str(self.pid), "GC.run"], check=True, capture_output=True, timeout=120
        )

    def pauses(self, start: float, end: float) -> list[float]:
        """Milliseconds of each pause that began between ``start`` and ``end`` (Unix time)."""
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            m = _PAUSE.match(line)
            if m is None:
                continue
            at = datetime.datetime.strptime(m["at"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            if start <= at <= end:
                out.append(float(m["ms"]))
        return out


@dataclass
class Broker:
    bootstrap: str
    kafka: Any  # KafkaBroker or ExternalKafka: create_topic / delete_topic
    description: str
    gc: BrokerGC | None = None
    """None for an external broker."""


@contextmanager
def broker(bootstrap: str | None = None) -> Iterator[Broker]:
    from ferrokafka.testing import ExternalKafka, KafkaBroker, kafka_version

    if bootstrap is not None:
        yield Broker(
            bootstrap,
            ExternalKafka(bootstrap).start(),
            f"external at {bootstrap} (ferrokafka.testing pins Kafka {kafka_version()})",
        )
        return
    from ferrokafka.testing.kraft import DEFAULT_JVM_OPTIONS

    with tempfile.TemporaryDirectory(prefix="ferrokafka-bench-gc-") as logs:
        log = Path(logs) / "gc.log"
        options = [o for o in DEFAULT_JVM_OPTIONS if o != "-XX:+ExplicitGCInvokesConcurrent"]
        options += [f"-Xmn{YOUNG_MB}m", f"-Xlog:gc:file={log}:time"]
        kafka = KafkaBroker(heap_mb=HEAP_MB, jvm_options=options)
        kafka.start()
        try:
            yield Broker(
                kafka.bootstrap_servers,
                kafka,
                f"Apache Kafka {kafka.version} (KRaft, one node, ferrokafka.testing, "
                f"{HEAP_MB // 1024} GiB heap, {YOUNG_MB / 1024:g} GiB young)",
                None if kafka.pid is None else BrokerGC(log, kafka.pid),
            )
        finally:
            kafka.stop()
