"""OpenTelemetry against the real broker, with the SDK's in-memory exporter and reader: a
send and a receive make a producer span and a consumer span whose parent is the producer's
context carried in the record's headers; the exported metrics follow what was consumed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition, telemetry
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

pytestmark = [pytest.mark.integration]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        telemetry.uninstrument()


def _named(spans: tuple[ReadableSpan, ...], name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name and s.kind == kind]


async def test_send_and_getone_spans_share_the_trace(
    bootstrap_servers: str, topic: str, spans: InMemorySpanExporter
) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers, client_id="p1") as producer:
        meta = await producer.send_and_wait(topic, b"hello", key=b"k1", headers=[("h", b"1")])
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        record = await consumer.getone()
    # The user's header is kept; the trace context rides beside it.
    assert ("h", b"1") in record.headers
    assert any(k == "traceparent" for k, _ in record.headers)

    finished = spans.get_finished_spans()
    (send,) = _named(finished, f"{topic} send", SpanKind.PRODUCER)
    (receive,) = _named(finished, f"{topic} receive", SpanKind.CONSUMER)
    assert send.attributes is not None and receive.attributes is not None
    assert send.attributes["messaging.system"] == "kafka"
    assert send.attributes["messaging.destination.name"] == topic
    assert send.attributes["messaging.operation.type"] == "publish"
    assert send.attributes["messaging.kafka.message.key"] == "k1"
    assert send.attributes["messaging.destination.partition.id"] == "0"
    assert send.attributes["messaging.kafka.message.offset"] == meta.offset
    assert send.attributes["messaging.client.id"] == "p1"
    assert receive.attributes["messaging.kafka.message.offset"] == record.offset
    assert receive.attributes["messaging.destination.partition.id"] == "0"
    assert receive.attributes["messaging.message.id"] == f"{topic}.0.{record.offset}"
    # The consumer span is the producer span's child, across the broker.
    assert send.context is not None and receive.context is not None
    assert receive.context.trace_id == send.context.trace_id
    assert receive.parent is not None and receive.parent.span_id == send.context.span_id


async def test_traced_send_takes_sends_arguments_as_send_does(
    bootstrap_servers: str, topic: str, spans: InMemorySpanExporter
) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        # Positional value, key and partition, as aiokafka's send() takes them.
        meta = await (await producer.send(topic, b"v", b"k2", 0))
        with pytest.raises(TypeError, match="unexpected keyword argument 'partiton'"):
            await producer.send(topic, b"v", partiton=0)
    (send,) = _named(spans.get_finished_spans(), f"{topic} send", SpanKind.PRODUCER)
    assert send.attributes is not None
    assert send.attributes["messaging.kafka.message.key"] == "k2"
    assert send.attributes["messaging.destination.partition.id"] == "0"
    assert send.attributes["messaging.kafka.message.offset"] == meta.offset


async def test_getmany_poll_partition_and_record_spans(
    bootstrap_servers: str, make_topic: Any, spans: InMemorySpanExporter
) -> None:
    topic = make_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        futures = [await producer.send(topic, b"v%d" % i, partition=i % 2) for i in range(6)]
        for f in futures:
            await f
    sends = {s.context.span_id: s for s in spans.get_finished_spans() if s.context is not None}
    assert len(sends) == 6
    spans.clear()
    got = 0
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=f"g-{topic}",
        auto_offset_reset="earliest",
    ) as consumer:
        while got < 6:
            got += sum(len(v) for v in (await consumer.getmany(timeout_ms=5000)).values())
    finished = spans.get_finished_spans()
    records = [
        s for s in finished if s.attributes and "messaging.kafka.message.offset" in s.attributes
    ]
    assert len(records) == 6
    # Each record's span hangs off the span of the send that wrote it.
    assert {r.parent.span_id for r in records if r.parent is not None} == set(sends)
    partitions = [
        s
        for s in finished
        if s.attributes
        and "messaging.destination.partition.id" in s.attributes
        and "messaging.batch.message_count" in s.attributes
    ]
    linked = {link.context.span_id for p in partitions for link in p.links}
    assert linked == {r.context.span_id for r in records if r.context is not None}


async def test_uninstrument_restores_the_methods() -> None:
    telemetry.instrument()
    assert telemetry.is_instrumented()
    assert AIOKafkaProducer.send.__name__ == "send"
    telemetry.uninstrument()
    assert not telemetry.is_instrumented()
    assert AIOKafkaProducer.send.__qualname__ == "AIOKafkaProducer.send"


async def test_metrics_export(bootstrap_servers: str, topic: str) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for i in range(40):
            await producer.send(topic, b"m%d" % i)
        await producer.flush()
    reader = InMemoryMetricReader()
    exporter = telemetry.MetricsExporter(MeterProvider(metric_readers=[reader]))
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest", client_id="exp"
    ) as consumer:
        exporter.register(consumer)
        consumer.assign([tp])
        got = 0
        while got < 40:
            got += sum(len(v) for v in (await consumer.getmany(timeout_ms=5000)).values())
        data = reader.get_metrics_data()
    assert data is not None
    points: dict[str, list[Any]] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                points[m.name] = list(m.data.data_points)
    (consumed,) = points["consumer-fetch-manager-metrics.records-consumed-total"]
    assert consumed.value == got == 40
    assert dict(consumed.attributes) == {"client-id": "exp"}
    (lag,) = points["consumer-fetch-manager-metrics.records-lag"]
    assert lag.value == 0 and dict(lag.attributes)["topic"] == topic
    assert points["consumer-metrics.connection-count"][0].value >= 1
