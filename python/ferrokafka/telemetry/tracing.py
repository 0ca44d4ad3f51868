"""Tracing spans for send and receive, as ``opentelemetry-instrumentation-aiokafka`` makes
them for aiokafka, applied to ferrokafka's classes.

That instrumentor patches ``aiokafka.AIOKafkaProducer``/``AIOKafkaConsumer`` by module path and
reads aiokafka's private attributes, so it cannot wrap ferrokafka's classes; these wrappers
follow its conventions instead: the same span names, kinds and attributes, and the trace
context in record headers. One difference: the send span ends when the broker acknowledges the
record (as the Java agent's producer span), so it measures delivery and carries the partition
and offset the record got.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import MutableSequence, Sequence
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.propagators import textmap
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from .._native import RecordFuture, __version__
from ..consumer.consumer import AIOKafkaConsumer
from ..producer.producer import AIOKafkaProducer
from ..structs import TopicPartition

Headers = Sequence[tuple[str, bytes | None]]

_originals: dict[tuple[type, str], Any] = {}


class _HeaderGetter(textmap.Getter[Headers]):
    def get(self, carrier: Headers, key: str) -> list[str] | None:
        for k, v in carrier:
            if k == key and v is not None:
                return [v.decode("utf-8", "replace")]
        return None

    def keys(self, carrier: Headers) -> list[str]:
        return [k for k, _ in carrier]


class _HeaderSetter(textmap.Setter[MutableSequence[tuple[str, bytes | None]]]):
    def set(self, carrier: MutableSequence[tuple[str, bytes | None]], key: str, value: str) -> None:
        carrier.append((key, value.encode()))


_GETTER = _HeaderGetter()
_SETTER = _HeaderSetter()


def is_instrumented() -> bool:
    return bool(_originals)


def instrument(tracer_provider: TracerProvider | None = None) -> None:
    """Trace ``AIOKafkaProducer.send`` (and so ``send_and_wait``) and
    ``AIOKafkaConsumer.getone``/``getmany`` (and so ``async for``) of every instance, with a
    tracer of ``tracer_provider`` (the global one by default). Calling it again does nothing
    until :func:`uninstrument`."""
    if _originals:
        return
    tracer = trace.get_tracer("ferrokafka.telemetry", __version__, tracer_provider=tracer_provider)
    _originals[(AIOKafkaProducer, "send")] = send = AIOKafkaProducer.send
    _originals[(AIOKafkaConsumer, "getone")] = getone = AIOKafkaConsumer.getone
    _originals[(AIOKafkaConsumer, "getmany")] = getmany = AIOKafkaConsumer.getmany

    signature = inspect.signature(send)

    @functools.wraps(send)
    async def traced_send(self: AIOKafkaProducer, *args: Any, **kwargs: Any) -> RecordFuture:
        # send()'s own signature binds the call: a wrong one fails as send() would.
        call = signature.bind(self, *args, **kwargs)
        call.apply_defaults()
        given = call.arguments
        topic, key, partition = given["topic"], given["key"], given["partition"]
        config = self.client.config
        span = tracer.start_span(f"{topic} send", kind=SpanKind.PRODUCER)
        if span.is_recording():
            _base_attributes(span, config.bootstrap_servers, config.client_id, topic, partition)
            _set_key(span, key)
            span.set_attribute("messaging.operation.name", "send")
            span.set_attribute("messaging.operation.type", "publish")
        carrier: list[tuple[str, bytes | None]] = list(given["headers"] or ())
        propagate.inject(carrier, context=trace.set_span_in_context(span), setter=_SETTER)
        given["headers"] = carrier
        try:
            with trace.use_span(span, end_on_exit=False):
                future = await send(*call.args, **call.kwargs)
        except BaseException as exc:
            _fail(span, exc)
            raise
        future.add_done_callback(functools.partial(_delivered, span))
        return future

    @functools.wraps(getone)
    async def traced_getone(self: AIOKafkaConsumer[Any, Any], *partitions: TopicPartition) -> Any:
        record = await getone(self, *partitions)
        _receive_span(tracer, self, record)
        return record

    @functools.wraps(getmany)
    async def traced_getmany(
        self: AIOKafkaConsumer[Any, Any],
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
    ) -> Any:
        records = await getmany(self, *partitions, timeout_ms=timeout_ms, max_records=max_records)
        if records:
            _poll_spans(tracer, self, records)
        return records

    AIOKafkaProducer.send = traced_send  # type: ignore[method-assign]
    AIOKafkaConsumer.getone = traced_getone  # type: ignore[method-assign]
    AIOKafkaConsumer.getmany = traced_getmany  # type: ignore[method-assign]


def uninstrument() -> None:
    """Put the original methods back."""
    for (cls, name), original in _originals.items():
        setattr(cls, name, original)
    _originals.clear()


def _base_attributes(
    span: Span,
    bootstrap_servers: str | Sequence[str],
    client_id: str | None,
    topic: str,
    partition: int | None,
) -> None:
    span.set_attribute("messaging.system", "kafka")
    span.set_attribute("server.address", _servers(bootstrap_servers))
    if client_id is not None:
        span.set_attribute("messaging.client.id", client_id)
    span.set_attribute("messaging.destination.name", topic)
    if partition is not None:
        span.set_attribute("messaging.destination.partition.id", str(partition))


def _servers(bootstrap_servers: str | Sequence[str]) -> str:
    """As the instrumentor records them: the option's value as given, as JSON (so not the
    config's parsed ``bootstrap_addresses``, which would add the default port)."""
    if isinstance(bootstrap_servers, str):
        return json.dumps(bootstrap_servers)
    return json.dumps(list(bootstrap_servers))


def _set_key(span: Span, key: Any) -> None:
    if key is None:
        return
    if isinstance(key, bytes):
        try:
            span.set_attribute("messaging.kafka.message.key", key.decode())
        except UnicodeDecodeError:
            pass
        return
    span.set_attribute("messaging.kafka.message.key", str(key))


def _fail(span: Span, exc: BaseException) -> None:
    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
    span.end()


def _delivered(span: Span, future: RecordFuture) -> None:
    if future.cancelled():
        _fail(span, asyncio.CancelledError())
        return
    exc = future.exception()
    if exc is not None:
        _fail(span, exc)
        return
    metadata = future.result()
    if metadata is not None and span.is_recording():  # None with acks=0
        span.set_attribute("messaging.destination.partition.id", str(metadata.partition))
        span.set_attribute("messaging.kafka.message.offset", metadata.offset)
    span.end()


def _receive_span(tracer: trace.Tracer, consumer: AIOKafkaConsumer[Any, Any], record: Any) -> Span:
    """The instrumentor's per-record span: a child of the context the record's headers carry
    (the producer's send span), ended at once."""
    parent = propagate.extract(record.headers, getter=_GETTER)
    span = tracer.start_span(f"{record.topic} receive", context=parent, kind=SpanKind.CONSUMER)
    if span.is_recording():
        config = consumer._config
        _base_attributes(
            span, config.bootstrap_servers, config.client_id, record.topic, record.partition
        )
        _set_key(span, record.key)
        if config.group_id is not None:
            span.set_attribute("messaging.consumer.group.name", config.group_id)
        span.set_attribute("messaging.operation.name", "receive")
        span.set_attribute("messaging.operation.type", "receive")
        span.set_attribute("messaging.kafka.message.offset", record.offset)
        span.set_attribute(
            "messaging.message.id", f"{record.topic}.{record.partition}.{record.offset}"
        )
    span.end()
    return span


def _poll_spans(
    tracer: trace.Tracer,
    consumer: AIOKafkaConsumer[Any, Any],
    records: dict[TopicPartition, list[Any]],
) -> None:
    """As the instrumentor's ``getmany``: a span for the poll, one per partition under it, and
    a receive span per record (child of its producer's context) linked from its partition's."""
    config = consumer._config
    topics = ", ".join(sorted({tp.topic for tp in records}))
    with tracer.start_as_current_span(f"{topics} receive", kind=SpanKind.CONSUMER) as poll:
        if poll.is_recording():
            poll.set_attribute("messaging.system", "kafka")
            poll.set_attribute("server.address", _servers(config.bootstrap_servers))
            if config.client_id is not None:
                poll.set_attribute("messaging.client.id", config.client_id)
            if config.group_id is not None:
                poll.set_attribute("messaging.consumer.group.name", config.group_id)
            poll.set_attribute(
                "messaging.batch.message_count", sum(len(r) for r in records.values())
            )
            poll.set_attribute("messaging.operation.name", "receive")
            poll.set_attribute("messaging.operation.type", "receive")
        for tp, batch in records.items():
            with tracer.start_as_current_span(
                f"{tp.topic} receive", kind=SpanKind.CONSUMER
            ) as part:
                if part.is_recording():
                    _base_attributes(
                        part, config.bootstrap_servers, config.client_id, tp.topic, tp.partition
                    )
                    if config.group_id is not None:
                        part.set_attribute("messaging.consumer.group.name", config.group_id)
                    part.set_attribute("messaging.batch.message_count", len(batch))
                    part.set_attribute("messaging.operation.name", "receive")
                    part.set_attribute("messaging.operation.type", "receive")
                for record in batch:
                    part.add_link(_receive_span(tracer, consumer, record).get_span_context())
