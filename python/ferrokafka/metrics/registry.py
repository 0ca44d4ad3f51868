"""The metrics of one client: names mapped to what reads their value."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from .name import MetricName
from .sensor import Sensor

Reader = Callable[[float], float]
"""Reads a metric's value at a ``time.monotonic()`` instant."""


class Metrics:
    """Every metric of one client (consumer, producer or admin client), read on demand.

    Sensors are recorded by the client's code as it works; gauges are computed when read
    (lag, assigned partitions, open connections), so they cost nothing until then.
    ``client_id`` is the ``client-id`` tag of every name; ``prefix`` begins the group names
    (``consumer`` → ``consumer-metrics``, ``consumer-node-metrics``, ...)."""

    def __init__(self, client_id: str, prefix: str) -> None:
        self.client_id = client_id
        self.prefix = prefix
        self._readers: dict[MetricName, Reader] = {}
        self._dynamic: list[Callable[[float], Iterator[tuple[MetricName, float]]]] = []

    def name(self, name: str, group: str, **tags: object) -> MetricName:
        """``name`` in ``group`` (prefix added unless it starts with one), with the client-id."""
        return MetricName.of(name, group, client_id=self.client_id, **tags)

    def group(self, suffix: str) -> str:
        """``<prefix>-<suffix>``: ``metrics`` → ``consumer-metrics``."""
        return f"{self.prefix}-{suffix}"

    def add(self, name: MetricName, reader: Reader) -> None:
        self._readers[name] = reader

    def add_dynamic(self, produce: Callable[[float], Iterator[tuple[MetricName, float]]]) -> None:
        """Metrics whose names come and go (one per assigned partition): ``produce(now)``
        yields (name, value) pairs each time the metrics are read."""
        self._dynamic.append(produce)

    def sensor(
        self,
        group: str,
        *,
        values: str | None = None,
        sums: str | None = None,
        counts: str | None = None,
        avg: str | None = None,
        max: str | None = None,
        total: str | None = None,
        count_total: str | None = None,
        **tags: object,
    ) -> Sensor:
        """A new sensor, read by the metrics named. Most follow the Java client's pattern:
        ``values="x"`` names ``x-avg`` and ``x-max`` of the values in the window,
        ``sums="x"`` ``x-rate`` and ``x-total`` of their sum, ``counts="x"`` ``x-rate`` and
        ``x-total`` of how many were recorded. ``avg``, ``max``, ``total`` (of the sum) and
        ``count_total`` name a single figure outside that pattern."""
        s = Sensor()

        def pair(prefix: str | None) -> tuple[str | None, str | None]:
            return (None, None) if prefix is None else (f"{prefix}-rate", f"{prefix}-total")

        sum_rate, sum_total = pair(sums)
        count_rate, all_counted = pair(counts)
        stats: list[tuple[str | None, Reader]] = [
            (avg or (values and f"{values}-avg"), s.avg),
            (max or (values and f"{values}-max"), s.max),
            (sum_rate, s.rate),
            (total or sum_total, lambda _now: s.total),
            (count_rate, s.count_rate),
            (count_total or all_counted, lambda _now: float(s.count)),
        ]
        for metric, reader in stats:
            if metric is not None:
                self.add(self.name(metric, group, **tags), reader)
        return s

    def read(self, now: float | None = None) -> dict[MetricName, float]:
        """Every metric's current value."""
        if now is None:
            now = time.monotonic()
        out = {name: float(reader(now)) for name, reader in self._readers.items()}
        for produce in self._dynamic:
            out.update(produce(now))
        return out


def flatten(metrics: dict[MetricName, float]) -> dict[str, float]:
    """``group:name{tag=value,...}`` → value: for logs, JSON or a quick look."""
    return {str(name): value for name, value in sorted(metrics.items())}
