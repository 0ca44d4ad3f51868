"""A client's metrics, named as the Java client names them.

``consumer.metrics()``, ``producer.metrics()`` and ``admin.metrics()`` return a dict of
:class:`MetricName` (name, group, tags) to a float, as the Java client's
``Map<MetricName, Metric>`` (read with ``metricValue()``); :func:`flatten` turns it into
``"group:name{tag=value}"`` keys. Windowed figures (avg, max, rate) cover the last 30 to 60
seconds (two 30 s samples), totals all time; latencies and times are in milliseconds, rates
per second; an avg or max with nothing recorded in the window is NaN.
"""

from .name import MetricName
from .registry import Metrics, flatten
from .sensor import Sensor

__all__ = ["MetricName", "Metrics", "Sensor", "flatten"]
