"""A FastAPI app that writes the events it is sent to a Kafka topic.

What it shows: one ``AIOKafkaProducer`` for the whole app, started and stopped by the app's
lifespan (so it connects before the first request is served and sends what it still holds
before the process exits); ``POST /events`` sends the event as JSON with ``send_and_wait`` and
answers with where it was written (topic, partition, offset). Requests share the producer: it
batches concurrent sends into one request per broker.

Needs FastAPI and uvicorn (``pip install fastapi uvicorn``). Run it::

    python examples/fastapi_events.py --bootstrap-server localhost:9092 --topic events --port 8000
    curl -X POST localhost:8000/events -H 'content-type: application/json' \\
        -d '{"key": "user-1", "payload": {"clicked": "buy"}}'

or serve ``create_app(...)`` with any ASGI server. Ctrl-C (or SIGTERM) stops it cleanly.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from ferrokafka import AIOKafkaProducer
from pydantic import BaseModel


class Event(BaseModel):
    key: str | None = None
    payload: dict[str, Any]


class Written(BaseModel):
    topic: str
    partition: int
    offset: int


def create_app(bootstrap_servers: str, topic: str) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers, acks="all", enable_idempotence=True
        )
        await producer.start()
        app.state.producer = producer
        try:
            yield
        finally:
            await producer.stop()  # sends whatever is still buffered first
            print("producer stopped", flush=True)

    app = FastAPI(title="events", lifespan=lifespan)

    @app.post("/events")
    async def post_event(event: Event, request: Request) -> Written:
        producer: AIOKafkaProducer = request.app.state.producer
        value = json.dumps(event.payload, separators=(",", ":")).encode()
        key = event.key.encode() if event.key is not None else None
        meta = await producer.send_and_wait(topic, value, key=key)
        return Written(topic=meta.topic, partition=meta.partition, offset=meta.offset)

    return app


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    uvicorn.run(create_app(args.bootstrap_server, args.topic), host=args.host, port=args.port)
