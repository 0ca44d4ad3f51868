"""The metrics package without a broker: windowed stats as the Java client computes them,
names, the registry and flattening."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from ferrokafka import AIOKafkaConsumer
from ferrokafka.metrics import MetricName, Metrics, Sensor, flatten


def test_avg_max_total_and_rates_over_the_window() -> None:
    s = Sensor(30.0, now=0.0)
    for t, v in [(1.0, 10.0), (2.0, 30.0), (3.0, 20.0)]:
        s.record(v, now=t)
    assert s.avg(3.0) == pytest.approx(20.0)
    assert s.max(3.0) == 30.0
    assert s.total == 60.0 and s.count == 3
    # Less than a sample old: the rate divides by at least one sample's length (30 s) on top
    # of the elapsed time, as the Java client's Rate.
    assert s.rate(3.0) == pytest.approx(60.0 / 33.0)
    assert s.count_rate(3.0) == pytest.approx(3 / 33.0)


def test_old_samples_leave_the_window_and_totals_stay() -> None:
    s = Sensor(30.0, now=0.0)
    s.record(100.0, now=1.0)
    s.record(5.0, now=31.0)  # a second sample
    assert s.max(31.0) == 100.0
    assert s.rate(31.0) == pytest.approx(105.0 / 31.0)
    # At 61 s the first sample (started at 0) is past 2 x 30 s: only the second counts.
    assert s.max(61.0) == 5.0
    assert s.avg(61.0) == 5.0
    # Idle for longer than the window: nothing windowed is left, the totals are.
    assert math.isnan(s.avg(200.0)) and math.isnan(s.max(200.0))
    assert s.rate(200.0) == 0.0
    assert s.total == 105.0
    s.record(7.0, now=200.0)
    assert s.max(200.0) == 7.0 and s.count == 3


def test_a_sensor_with_nothing_recorded_reads_nan_and_zero() -> None:
    s = Sensor(30.0, now=0.0)
    assert math.isnan(s.avg(1.0)) and math.isnan(s.max(1.0))
    assert s.rate(1.0) == 0.0 and s.count_rate(1.0) == 0.0


def test_metric_names_are_hashable_with_sorted_tags() -> None:
    a = MetricName.of("records-lag", "consumer-fetch-manager-metrics", topic="t", partition=0)
    b = MetricName.of("records-lag", "consumer-fetch-manager-metrics", partition="0", topic="t")
    assert a == b and hash(a) == hash(b)
    assert a.tag("partition") == "0" and a.tag("node-id") is None
    assert MetricName.of("x", "g", client_id="c").tags == (("client-id", "c"),)
    assert str(a) == "consumer-fetch-manager-metrics:records-lag{partition=0,topic=t}"


def test_registry_reads_sensors_gauges_and_dynamic_metrics() -> None:
    m = Metrics("cid", "consumer")
    s = m.sensor(m.group("metrics"), avg="x-avg", total="x-total", count_total="x-count")
    m.add(m.name("gauge", "consumer-metrics"), lambda now: 42.0)
    m.add_dynamic(lambda now: iter([(m.name("lag", "g", partition=1), 3.0)]))
    s.record(4.0)
    s.record(6.0)
    values = m.read()
    assert values[MetricName.of("x-avg", "consumer-metrics", client_id="cid")] == 5.0
    assert values[MetricName.of("x-total", "consumer-metrics", client_id="cid")] == 10.0
    assert values[MetricName.of("x-count", "consumer-metrics", client_id="cid")] == 2.0
    assert values[MetricName.of("gauge", "consumer-metrics", client_id="cid")] == 42.0
    flat = flatten(values)
    assert flat["g:lag{client-id=cid,partition=1}"] == 3.0
    assert list(flat) == [str(n) for n in sorted(values)] and len(flat) == 5


def test_importing_ferrokafka_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, ferrokafka, ferrokafka.metrics\n"
        "c = ferrokafka.AIOKafkaConsumer(bootstrap_servers='localhost:1')\n"
        "c.metrics()\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_consumer_has_its_metrics_before_it_starts() -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers="localhost:1", client_id="early")
    values = consumer.metrics()
    assert {"consumer-metrics", "consumer-fetch-manager-metrics"} <= {n.group for n in values}

    def fetch(name: str) -> float:
        return values[MetricName.of(name, "consumer-fetch-manager-metrics", client_id="early")]

    assert fetch("records-consumed-total") == 0.0
    assert math.isnan(fetch("records-lag-max")) and math.isnan(fetch("fetch-latency-avg"))
