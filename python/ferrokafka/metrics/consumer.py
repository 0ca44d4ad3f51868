"""The consumer's own figures: ``consumer-fetch-manager-metrics`` (fetches, records and bytes
handed out, lag per partition) and ``consumer-coordinator-metrics`` (commits, rebalances,
joins, heartbeats, assigned partitions)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .name import MetricName
from .registry import Metrics

if TYPE_CHECKING:
    from ..consumer.subscription_state import SubscriptionState


class FetchMetrics:
    """Recorded per fetch response and per poll that hands out records (not per record).
    Lag and lead are read off the partitions' state when the metrics are read: ``records-lag``
    is the high watermark (the last stable offset with ``read_committed``) minus the position,
    ``records-lead`` the position minus the log start offset."""

    def __init__(
        self, metrics: Metrics, subscriptions: SubscriptionState, *, read_committed: bool
    ) -> None:
        group = self.group = metrics.group("fetch-manager-metrics")
        self._metrics = metrics
        self._subs = subscriptions
        self._read_committed = read_committed
        self.fetch = metrics.sensor(group, values="fetch-latency", counts="fetch")
        self.fetch_size = metrics.sensor(group, values="fetch-size")
        self.throttle = metrics.sensor(group, values="fetch-throttle-time")
        self.records = metrics.sensor(group, sums="records-consumed")
        self.bytes = metrics.sensor(group, sums="bytes-consumed")
        metrics.add_dynamic(self._lag)

    def fetched(self, latency_ms: float, size: int, throttle_ms: int, now: float) -> None:
        self.fetch.record(latency_ms, now)
        self.fetch_size.record(size, now)
        self.throttle.record(throttle_ms, now)

    def consumed(self, records: int, size: int) -> None:
        now = time.monotonic()
        self.records.record(records, now)
        self.bytes.record(size, now)

    def _lag(self, _now: float) -> Iterator[tuple[MetricName, float]]:
        lag_max = -math.inf
        lead_min = math.inf
        name = self._metrics.name
        group = self.group
        for tp in sorted(self._subs.assigned_partitions()):
            st = self._subs.state(tp)
            position = st.position
            if position is None:
                continue
            end = st.last_stable_offset if self._read_committed else st.highwater
            if end is not None and end >= 0:
                lag = float(end - position)
                lag_max = max(lag_max, lag)
                yield name("records-lag", group, topic=tp.topic, partition=tp.partition), lag
            start = st.log_start_offset
            if start is not None and start >= 0:
                lead = float(position - start)
                lead_min = min(lead_min, lead)
                yield name("records-lead", group, topic=tp.topic, partition=tp.partition), lead
        yield name("records-lag-max", group), lag_max if lag_max > -math.inf else math.nan
        yield name("records-lead-min", group), lead_min if lead_min < math.inf else math.nan


class CoordinatorMetrics:
    """Commits, rebalances (join through assignment, as seen by this member), joins, syncs and
    heartbeats; ``last-rebalance-seconds-ago`` and ``last-heartbeat-seconds-ago`` are -1 (as the
    Java client's) until the first."""

    def __init__(self, metrics: Metrics, subscriptions: SubscriptionState) -> None:
        group = metrics.group("coordinator-metrics")
        self.commit = metrics.sensor(group, values="commit-latency", counts="commit")
        # Java's rebalance figures: a latency total beside the count, and no rates.
        self.rebalance = metrics.sensor(
            group,
            values="rebalance-latency",
            total="rebalance-latency-total",
            count_total="rebalance-total",
        )
        self.failed_rebalance = metrics.sensor(group, count_total="failed-rebalance-total")
        self.join = metrics.sensor(group, values="join-time", counts="join")
        self.sync = metrics.sensor(group, values="sync-time", counts="sync")
        self.heartbeat = metrics.sensor(
            group, max="heartbeat-response-time-max", counts="heartbeat"
        )
        self.last_rebalance: float | None = None
        self.last_heartbeat: float | None = None
        metrics.add(
            metrics.name("assigned-partitions", group),
            lambda _now: float(len(subscriptions.assigned_partitions())),
        )
        metrics.add(
            metrics.name("last-rebalance-seconds-ago", group),
            lambda now: -1.0 if self.last_rebalance is None else now - self.last_rebalance,
        )
        metrics.add(
            metrics.name("last-heartbeat-seconds-ago", group),
            lambda now: -1.0 if self.last_heartbeat is None else now - self.last_heartbeat,
        )

    def rebalanced(self, started: float) -> None:
        now = time.monotonic()
        self.rebalance.record((now - started) * 1000, now)
        self.last_rebalance = now

    def heartbeat_done(self, started: float) -> None:
        now = time.monotonic()
        self.heartbeat.record((now - started) * 1000, now)
        self.last_heartbeat = now
