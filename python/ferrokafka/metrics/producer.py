"""The producer's own figures in ``producer-metrics``: records sent, batches, queue time,
compression, retries, errors, throttling and requests in flight. Recorded per batch and per
Produce request, never per record."""

from __future__ import annotations

import time
from collections.abc import Callable

from .registry import Metrics


class ProducerMetrics:
    def __init__(self, metrics: Metrics, in_flight: Callable[[], int]) -> None:
        group = metrics.group("metrics")
        self.send = metrics.sensor(group, sums="record-send")
        self.batch_size = metrics.sensor(group, values="batch-size")
        self.queue_time = metrics.sensor(group, values="record-queue-time")
        self.compression = metrics.sensor(group, avg="compression-rate-avg")
        self.per_request = metrics.sensor(group, avg="records-per-request-avg")
        self.retry = metrics.sensor(group, sums="record-retry")
        self.error = metrics.sensor(group, sums="record-error")
        self.throttle = metrics.sensor(group, values="produce-throttle-time")
        metrics.add(metrics.name("requests-in-flight", group), lambda _now: float(in_flight()))

    def batch_sent(
        self, records: int, size: int, uncompressed: int, created: float, now: float
    ) -> None:
        """A batch leaves for the first time (retries are counted by ``retried``)."""
        self.send.record(records, now)
        self.batch_size.record(size, now)
        self.queue_time.record((now - created) * 1000, now)
        if uncompressed:
            self.compression.record(size / uncompressed, now)

    def retried(self, records: int) -> None:
        self.retry.record(records, time.monotonic())

    def failed(self, records: int) -> None:
        self.error.record(records, time.monotonic())
