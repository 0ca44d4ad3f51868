"""Writing a DataFrame to Kafka with the columns of Spark's Kafka sink: ``topic`` (or the
``topic`` option, which wins), ``key`` and ``value`` (string or binary), ``headers``
(``array<struct<key: string, value: binary>>``) and ``partition`` (int). Every record of a task
is acknowledged before the task succeeds; a delivery error fails the task."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Iterator, Mapping
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


def _columns(rows: list[Any]) -> Iterator[dict[str, Any]]:
    """One dict per Spark Row."""
    for row in rows:
        yield row.asDict() if hasattr(row, "asDict") else dict(row)


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


_SINK_COLUMNS = ("key", "value", "headers", "partition")


def _null_topic(row: int) -> ValueError:
    return ValueError(
        "The Kafka message data sent to the producer contains a null topic. Use the "
        f"`topic` option for setting a default topic. (row {row} of this task)"
    )


def _by_topic(batch: Any, topic_option: str | None, first: int) -> Iterator[tuple[str, Any]]:
    """``(topic, rows)`` for an Arrow record batch: its sink columns (others are ignored), all
    of them under the ``topic`` option, else split by the ``topic`` column in the order the
    topics first appear (each topic's rows keep their order)."""
    import pyarrow.compute as pc

    data = batch.select([name for name in _SINK_COLUMNS if name in batch.schema.names])
    if topic_option is not None:
        yield topic_option, data
        return
    topics = batch.column("topic")
    if topics.null_count:
        raise _null_topic(first + pc.index(pc.is_null(topics), True).as_py())
    names = pc.unique(topics).to_pylist()
    if len(names) == 1:
        yield names[0], data
        return
    for name in names:
        yield name, data.filter(pc.equal(topics, name))


def write_batches(sink: SinkOptions, batches: Iterable[Any]) -> int:
    """Send every row of ``batches`` (Arrow record batches, or lists of Spark Rows) and wait
    for all of them to be acknowledged; returns how many were written. Spark's input is read on
    the calling thread while the producer sends the previous batch on the runtime's loop.
    Arrow batches go through ``send_arrow``: encoded in Rust, no Python object per row."""
    rt = runtime()
    # (first row, last row, what acknowledges them) in the order they were sent.
    pending: list[tuple[int, int, Awaitable[Any]]] = []
    written = 0

    async def send_arrow(batch: Any, first: int) -> None:
        producer = await rt.producer(sink.client, sink.ssl, sink.producer)
        last = first + batch.num_rows - 1
        for topic, rows in _by_topic(batch, sink.topic, first):
            try:
                future = await producer.send_arrow(topic, rows)
            except Exception as exc:
                raise _with_rows(exc, first, last) from exc
            pending.append((first, last, future))

    async def send_rows(rows: list[dict[str, Any]], first: int) -> None:
        producer = await rt.producer(sink.client, sink.ssl, sink.producer)
        for number, row in enumerate(rows, first):
            topic = sink.topic or row.get("topic")
            if topic is None:
                raise _null_topic(number)
            headers = row.get("headers")
            future = await producer.send_record(
                topic,
                _as_bytes(row.get("value")),
                key=_as_bytes(row.get("key")),
                partition=row.get("partition"),
                headers=[(h["key"], _as_bytes(h["value"])) for h in headers] if headers else None,
            )
            pending.append((number, number, future))

    async def finish() -> None:
        producer = await rt.producer(sink.client, sink.ssl, sink.producer)
        await producer.flush()
        for first, last, future in pending:
            try:
                await future
            except Exception as exc:
                raise _with_rows(exc, first, last) from exc

    with rt.lock:
        for batch in batches:
            if isinstance(batch, list):
                rows = list(_columns(batch))
                rt.run(send_rows(rows, written))
                written += len(rows)
            else:
                rt.run(send_arrow(batch, written))
                written += batch.num_rows
        rt.run(finish())
    return written


def _with_rows(exc: Exception, first: int, last: int) -> Exception:
    """``exc`` again, its message naming the rows of the task it concerns (an Arrow batch's
    errors count rows from the batch's first)."""
    where = f"row {first}" if first == last else f"the batch of rows {first}-{last}"
    try:
        return type(exc)(f"Writing {where} of this task failed: {exc}")
    except TypeError:
        return exc
