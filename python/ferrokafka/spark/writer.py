"""Writing a DataFrame to Kafka with the columns of Spark's Kafka sink: ``topic`` (or the
``topic`` option, which wins), ``key`` and ``value`` (string or binary), ``headers``
(``array<struct<key: string, value: binary>>``) and ``partition`` (int). Every record of a task
is acknowledged before the task succeeds; a delivery error fails the task."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .options import SinkOptions
from .runtime import runtime

__all__ = ["check_sink_schema", "chunks", "write_batches"]

_TEXT_OR_BYTES = ("string", "binary")


_ALLOWED = {
    "topic": ("string",),
    "key": _TEXT_OR_BYTES,
    "value": _TEXT_OR_BYTES,
    "headers": ("array<struct<key:string,value:binary>>",),
    "partition": ("int",),
}


def check_sink_schema(fields: Mapping[str, str], topic_option: str | None) -> None:
    """Check a DataFrame's columns (``name -> simpleString`` of its type) as Spark's sink does,
    in Spark's order and with Spark's wording. Other columns are ignored."""
    if topic_option is None and "topic" not in fields:
        raise ValueError(
            "topic option required when no 'topic' attribute is present. Use the topic "
            "option for setting a topic."
        )
    for name, allowed in _ALLOWED.items():
        if name == "topic" and topic_option is not None:
            continue  # the option wins; the column is not looked at
        if name == "value" and name not in fields:
            raise ValueError("Required attribute 'value' not found")
        if name in fields and fields[name] not in allowed:
            raise ValueError(
                f"{name} attribute unsupported type {fields[name]}. {name} must be a(n) "
                f"{' or '.join(allowed)}"
            )


def _as_bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _columns(batch: Any) -> Iterator[dict[str, Any]]:
    """One dict per row of a ``pyarrow.RecordBatch`` or of a list of Spark Rows."""
    if isinstance(batch, list):
        for row in batch:
            yield row.asDict() if hasattr(row, "asDict") else dict(row)
        return
    names = batch.schema.names
    cols = {name: batch.column(name).to_pylist() for name in names}
    for i in range(batch.num_rows):
        yield {name: cols[name][i] for name in names}


def chunks(rows: Iterable[Any], size: int = 4096) -> Iterator[list[Any]]:
    """Spark Rows in lists of ``size`` (for writers that get rows, not Arrow)."""
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def write_batches(sink: SinkOptions, batches: Iterable[Any]) -> int:
    """Send every row of ``batches`` (Arrow record batches, or lists of Spark Rows) and wait
    for all of them to be acknowledged; returns how many were written. Spark's input is read on
    the calling thread while the producer sends the previous batch on the runtime's loop."""
    rt = runtime()
    pending: list[tuple[int, asyncio.Future[Any]]] = []
    written = 0

    async def send(rows: list[dict[str, Any]], first: int) -> None:
        producer = await rt.producer(sink.client, sink.ssl, sink.producer)
        for number, row in enumerate(rows, first):
            topic = sink.topic or row.get("topic")
            if topic is None:
                raise ValueError(
                    "The Kafka message data sent to the producer contains a null topic. Use the "
                    f"`topic` option for setting a default topic. (row {number} of this task)"
                )
            headers = row.get("headers")
            future = await producer.send_record(
                topic,
                _as_bytes(row.get("value")),
                key=_as_bytes(row.get("key")),
                partition=row.get("partition"),
                headers=[(h["key"], _as_bytes(h["value"])) for h in headers] if headers else None,
            )
            pending.append((number, future))

    async def finish() -> None:
        producer = await rt.producer(sink.client, sink.ssl, sink.producer)
        await producer.flush()
        for number, future in pending:
            try:
                await future
            except Exception as exc:
                raise _with_row(exc, number) from exc

    with rt.lock:
        for batch in batches:
            rows = list(_columns(batch))
            rt.run(send(rows, written))
            written += len(rows)
        rt.run(finish())
    return written


def _with_row(exc: Exception, number: int) -> Exception:
    """``exc`` again, its message naming the row of the task that failed."""
    try:
        return type(exc)(f"Writing row {number} of this task failed: {exc}")
    except TypeError:
        return exc
