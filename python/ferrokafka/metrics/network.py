"""Request and connection figures, client-wide (``<prefix>-metrics``) and per broker
connection (``<prefix>-node-metrics``, tag ``node-id`` = ``node-<id>`` as the Java client's:
``node--1`` is the first bootstrap address, ``node-2147483646`` the dedicated coordinator
connection to broker 1)."""

from __future__ import annotations

from collections.abc import Callable

from .registry import Metrics
from .sensor import Sensor


def _request_sensors(m: Metrics, group: str, **tags: str) -> tuple[Sensor, Sensor, Sensor, Sensor]:
    """The sensors of requests (sizes), responses (sizes), their latency and failures, in
    ``group`` with ``tags``: the client-wide ones, or one connection's (``node_id``)."""
    out = m.sensor(group, values="request-size", sums="outgoing-byte", counts="request", **tags)
    incoming = m.sensor(group, sums="incoming-byte", counts="response", **tags)
    latency = m.sensor(group, values="request-latency", **tags)
    errors = m.sensor(group, counts="request-error", **tags)
    return out, incoming, latency, errors


class NodeSensors:
    """What one connection records: per request sent, per response or failure."""

    __slots__ = (
        "_all_errors",
        "_all_in",
        "_all_latency",
        "_all_out",
        "_errors",
        "_in",
        "_latency",
        "_out",
    )

    def __init__(self, net: NetworkMetrics, node_id: int) -> None:
        m = net.metrics
        self._out, self._in, self._latency, self._errors = _request_sensors(
            m, m.group("node-metrics"), node_id=f"node-{node_id}"
        )
        self._all_out = net.out
        self._all_in = net.incoming
        self._all_latency = net.latency
        self._all_errors = net.errors

    def sent(self, size: int, now: float) -> None:
        self._out.record(size, now)
        self._all_out.record(size, now)

    def received(self, size: int, latency_ms: float, now: float) -> None:
        self._in.record(size, now)
        self._all_in.record(size, now)
        self._latency.record(latency_ms, now)
        self._all_latency.record(latency_ms, now)

    def failed(self, now: float) -> None:
        self._errors.record(1.0, now)
        self._all_errors.record(1.0, now)


class NetworkMetrics:
    """The client-wide request and connection figures, and each node's sensors."""

    def __init__(self, metrics: Metrics, open_connections: Callable[[], int]) -> None:
        self.metrics = metrics
        group = metrics.group("metrics")
        self.out, self.incoming, self.latency, self.errors = _request_sensors(metrics, group)
        self.created: Sensor = metrics.sensor(group, counts="connection-creation")
        self.closed: Sensor = metrics.sensor(group, counts="connection-close")
        metrics.add(metrics.name("connection-count", group), lambda _now: float(open_connections()))
        self._nodes: dict[int, NodeSensors] = {}

    def node(self, node_id: int) -> NodeSensors:
        """The sensors of connection key ``node_id`` (kept across reconnections)."""
        sensors = self._nodes.get(node_id)
        if sensors is None:
            sensors = self._nodes[node_id] = NodeSensors(self, node_id)
        return sensors
