"""What every Python client does with each record it reads (inside its timed region), and the
JSON lines a child process prints for the parent: ``{"progress": n}`` while it reads (the stall
watchdog's signal), ``{"ready": true}`` once it is polling (latency runs) and
``{"result": {...}}`` at the end.

Throughput runs keep the count, the value bytes and the checksum (see ``datasets``): a short
per-record Python loop, the same light work for every client that returns record objects;
Arrow clients do it with ``pyarrow.compute`` over the columns. Latency runs read the values
written by ``producers.rate_produce`` instead (see ``LATENCY_HEADER``).
"""

from __future__ import annotations

import json
import math
import struct
import sys
import time
from array import array
from typing import Any

from .datasets import MASK

#: Latency records start with: flag (1 = measured, 0 = warm-up), sequence number, the epoch
#: microseconds at which the producer handed the record over. Big-endian.
LATENCY_HEADER = struct.Struct(">bqq")
PROGRESS_EVERY_S = 0.5


def emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not wait4's ru_maxrss: a child made by vfork+exec
    inherits its parent's peak there."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def percentile(sorted_values: Any, q: float) -> int:
    """Nearest rank: the smallest value with at least ``q`` of the samples at or below it
    (the Java client computes it the same way)."""
    n = len(sorted_values)
    return int(sorted_values[max(0, min(n - 1, math.ceil(q * n) - 1))])


class Tally:
    def __init__(self, latency: bool = False) -> None:
        self.latency = latency
        self.count = 0
        self.bytes = 0
        self.checksum = 0
        self.lat_us = array("q")
        self._last_emit = time.monotonic()

    def progress(self) -> None:
        now = time.monotonic()
        if now - self._last_emit >= PROGRESS_EVERY_S:
            self._last_emit = now
            emit(progress=self.count)

    def _add(self, n: int, offsets: int, nbytes: int) -> None:
        self.count += n
        self.bytes += nbytes
        self.checksum = (self.checksum + offsets * 31 + nbytes) & MASK

    def add_counts(self, n: int, offsets: int, nbytes: int) -> None:
        """``n`` records, their offsets' sum and their values' bytes, summed by a per-record
        loop of the client's own (the one-record idioms)."""
        self._add(n, offsets, nbytes)

    # -- throughput ----------------------------------------------------------------------------

    def add_records(self, records: list[Any]) -> None:
        """aiokafka-style ``ConsumerRecord`` objects (ferrokafka, aiokafka, kafka-python)."""
        if self.latency:
            self._add_latency([r.value for r in records])
            return
        offsets = 0
        nbytes = 0
        for r in records:
            offsets += r.offset
            nbytes += len(r.value)
        self._add(len(records), offsets, nbytes)

    def add_messages(self, messages: list[Any]) -> None:
        """confluent-kafka ``Message`` objects."""
        if self.latency:
            values = []
            for msg in messages:
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                values.append(msg.value())
            self._add_latency(values)
            return
        offsets = 0
        nbytes = 0
        for msg in messages:
            if msg.error():
                raise RuntimeError(str(msg.error()))
            offsets += msg.offset()
            nbytes += len(msg.value())
        self._add(len(messages), offsets, nbytes)

    def add_arrow(self, batch: Any) -> None:
        """A ``pyarrow.RecordBatch`` with ``offset`` and ``value`` columns."""
        if self.latency:
            self._add_latency(batch.column("value").to_pylist())
            return
        import pyarrow.compute as pc

        lengths = pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
        offsets = pc.sum(batch.column("offset")).as_py() or 0
        self._add(batch.num_rows, offsets, lengths)

    # -- latency -------------------------------------------------------------------------------

    def _add_latency(self, values: list[bytes]) -> None:
        now = time.time_ns() // 1000
        unpack = LATENCY_HEADER.unpack_from
        seqs = 0
        nbytes = 0
        n = 0
        lat = self.lat_us
        for v in values:
            flag, seq, at = unpack(v)
            if flag != 1:
                continue
            n += 1
            seqs += seq
            nbytes += len(v)
            lat.append(now - at)
        self._add(n, seqs, nbytes)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"count": self.count, "bytes": self.bytes, "checksum": self.checksum}
        if self.latency and self.lat_us:
            s = sorted(self.lat_us)
            out["lat_us"] = [percentile(s, q) for q in (0.5, 0.99, 0.999)] + [s[-1]]
        return out
