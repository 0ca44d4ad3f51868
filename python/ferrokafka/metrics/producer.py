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
        self.send = metrics.sensor(group, rate="record-send-rate", total="record-send-total")
        self.batch_size = metrics.sensor(group, avg="batch-size-avg", max="batch-size-max")
        self.queue_time = metrics.sensor(
            group, avg="record-queue-time-avg", max="record-queue-time-max"
        )
        self.compression = metrics.sensor(group, avg="compression-rate-avg")
        self.per_request = metrics.sensor(group, avg="records-per-request-avg")
        self.retry = metrics.sensor(group, rate="record-retry-rate", total="record-retry-total")
        self.error = metrics.sensor(group, rate="record-error-rate", total="record-error-total")
        self.throttle = metrics.sensor(
            group, avg="produce-throttle-time-avg", max="produce-throttle-time-max"
        )
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
