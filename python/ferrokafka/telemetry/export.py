"""``metrics()`` of ferrokafka clients as OpenTelemetry observable instruments."""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Protocol

from opentelemetry import metrics as otel_metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

from .._native import __version__
from ..metrics import MetricName

_DYNAMIC = {
    "consumer": [
        ("consumer-fetch-manager-metrics", "records-lag"),
        ("consumer-fetch-manager-metrics", "records-lead"),
    ]
}
"""Names that appear only once partitions are assigned: their instruments are made up front."""

_SNAPSHOT_SECONDS = 0.5
"""One collection calls every instrument's callback: a client's metrics are read once for all
of them (a snapshot younger than this is reused)."""


class _HasMetrics(Protocol):
    def metrics(self) -> dict[MetricName, float]: ...


class MetricsExporter:
    """Exports the metrics of the clients :meth:`register`-ed with it through a meter of
    ``meter_provider`` (the global one by default). Instruments are named ``<group>.<name>``,
    as the Java client's OpenTelemetry bridge names them; ``*-total`` figures are observable
    counters, the rest observable gauges; the tags (``client-id``, ``node-id``, ``topic``,
    ``partition``) are attributes. NaN (an average with nothing recorded) is not exported.
    A client is held weakly: one that is gone stops being exported."""

    def __init__(self, meter_provider: MeterProvider | None = None) -> None:
        self._meter = otel_metrics.get_meter(
            "ferrokafka", __version__, meter_provider=meter_provider
        )
        self._clients: weakref.WeakSet[_HasMetrics] = weakref.WeakSet()
        self._snapshots: weakref.WeakKeyDictionary[
            _HasMetrics, tuple[float, dict[MetricName, float]]
        ] = weakref.WeakKeyDictionary()
        self._instruments: set[tuple[str, str]] = set()

    def register(self, client: _HasMetrics) -> None:
        """Export ``client``'s metrics (a consumer, producer or admin client)."""
        self._clients.add(client)
        names = {(n.group, n.name) for n in client.metrics()}
        for prefix in {group.split("-", 1)[0] for group, _ in names}:
            names.update(_DYNAMIC.get(prefix, []))
        for key in sorted(names - self._instruments):
            self._instruments.add(key)
            self._make_instrument(*key)

    def unregister(self, client: _HasMetrics) -> None:
        self._clients.discard(client)
        self._snapshots.pop(client, None)

    def _make_instrument(self, group: str, name: str) -> None:
        callback = self._callback(group, name)
        full = f"{group}.{name}"
        if name.endswith("-total"):
            self._meter.create_observable_counter(full, callbacks=[callback])
        else:
            self._meter.create_observable_gauge(full, callbacks=[callback])

    def _callback(
        self, group: str, name: str
    ) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            out = []
            for client in list(self._clients):
                for metric, value in self._read(client).items():
                    if metric.name == name and metric.group == group and not math.isnan(value):
                        out.append(Observation(value, dict(metric.tags)))
            return out

        return observe

    def _read(self, client: _HasMetrics) -> dict[MetricName, float]:
        now = time.monotonic()
        cached = self._snapshots.get(client)
        if cached is not None and now - cached[0] < _SNAPSHOT_SECONDS:
            return cached[1]
        values = client.metrics()
        self._snapshots[client] = (now, values)
        return values
