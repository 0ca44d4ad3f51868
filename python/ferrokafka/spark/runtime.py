"""One event loop and one client per process, for code that Spark calls synchronously.

Spark calls the driver's planning and the executors' fetch functions as plain functions, and
reuses Python worker processes across tasks. Each process therefore gets one event loop running
in a daemon thread, and keeps one consumer (or producer) per client configuration on it, reused by
every task that process runs: connections, metadata and fetched-but-unread data survive from one
task to the next, and the consumer keeps fetching in the background while Spark works through
the batch it was just handed.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

from ..consumer import AIOKafkaConsumer
from ..producer import AIOKafkaProducer
from ..waits import wait_for
from .options import client_kwargs
from .security import Secret

__all__ = ["Runtime", "runtime"]

_T = TypeVar("_T")

#: How long closing the cached clients may take when the process exits.
_CLOSE_TIMEOUT = 5.0


class Runtime:
    """An event loop in a daemon thread and the clients kept on it."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="ferrokafka-spark", daemon=True
        )
        self._thread.start()
        self._consumers: dict[Any, AIOKafkaConsumer[bytes, bytes]] = {}
        self._producers: dict[Any, AIOKafkaProducer] = {}
        #: One task at a time uses a cached client (Spark may run tasks in threads).
        self.lock = threading.Lock()
        #: How many consumers this process made (one per configuration, unless one failed).
        self.consumers_made = 0

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        """Run ``coro`` on the loop and wait for its result from the calling thread."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except (KeyboardInterrupt, concurrent.futures.TimeoutError):
            future.cancel()
            raise

    async def consumer(
        self, client: Mapping[str, Any], ssl: Mapping[str, Any]
    ) -> AIOKafkaConsumer[bytes, bytes]:
        """The started consumer for this configuration (assign mode, no group, no commits)."""
        key = _key(client, ssl)
        consumer = self._consumers.get(key)
        if consumer is None:
            consumer = AIOKafkaConsumer(
                **{
                    "enable_auto_commit": False,
                    "auto_offset_reset": "none",
                    # A task reads one partition: let one fetch bring a larger piece of it.
                    "max_partition_fetch_bytes": 8 * 1024 * 1024,
                    # A range only asks for records that existed when it was planned, so a
                    # fetch never needs to wait for new ones; and the fetch sent past the end
                    # of the previous range (held by the broker this long) delays the next
                    # range's first fetch to that broker.
                    "fetch_max_wait_ms": 10,
                    **client_kwargs(client, ssl),
                    "group_id": None,
                }
            )
            await consumer.start()
            self._consumers[key] = consumer
            self.consumers_made += 1
        return consumer

    async def producer(
        self, client: Mapping[str, Any], ssl: Mapping[str, Any], producer: Mapping[str, Any]
    ) -> AIOKafkaProducer:
        """The started producer for this configuration."""
        key = (_key(client, ssl), _key(producer, {}))
        found = self._producers.get(key)
        if found is None:
            found = AIOKafkaProducer(**client_kwargs(client, ssl), **producer)
            await found.start()
            self._producers[key] = found
        return found

    async def discard(self, client: Any) -> None:
        """Drop a client that failed, so that the next task makes a fresh one."""
        for cache in (self._consumers, self._producers):
            for key, value in list(cache.items()):
                if value is client:
                    del cache[key]
        await wait_for(client.stop(), _CLOSE_TIMEOUT)

    async def _close_all(self) -> None:
        clients: list[Callable[[], Awaitable[None]]] = [c.stop for c in self._consumers.values()]
        clients += [p.stop for p in self._producers.values()]
        self._consumers.clear()
        self._producers.clear()
        for stop in clients:
            try:
                await wait_for(stop(), _CLOSE_TIMEOUT)
            except Exception:  # the process is exiting: close the others
                pass

    def close(self) -> None:
        """Stop every cached client (bounded) and the loop."""
        if self.loop.is_closed():
            return
        try:
            self.run(self._close_all(), timeout=2 * _CLOSE_TIMEOUT)
        except Exception:  # exiting anyway
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(_CLOSE_TIMEOUT)


def _key(client: Mapping[str, Any], ssl: Mapping[str, Any]) -> Any:
    # A secret's repr hides it: it keys by value, or two passwords would share a client.
    def part(config: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            sorted((k, v if isinstance(v, Secret) else repr(v)) for k, v in config.items())
        )

    return (part(client), part(ssl))


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime() -> Runtime:
    """This process's runtime, made on first use (and anew in a forked child: Spark forks its
    Python workers from a daemon process)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None or _runtime.pid != os.getpid():
            _runtime = Runtime()
            atexit.register(_runtime.close)
        return _runtime
