"""One event loop and one client per process, for code that Spark calls synchronously.

Spark calls the driver's planning and the executors' fetch functions as plain functions, and
reuses Python worker processes across tasks. Each process therefore gets one event loop running
in a daemon thread, and keeps one consumer (or producer) per client configuration on it, reused by
every task that process runs: connections, metadata and fetched-but-unread data survive from one
task to the next, and the consumer keeps fetching in the background while Spark works through
the batch it was just handed.
"""

from __future__ import annotations

import atexit
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..admin import AIOKafkaAdminClient
from ..consumer import AIOKafkaConsumer
from ..loop_thread import LoopThread
from ..producer import AIOKafkaProducer
from ..waits import wait_for
from .options import client_kwargs
from .security import Secret

__all__ = ["Runtime", "runtime"]

#: How long closing the cached clients may take when the process exits.
_CLOSE_TIMEOUT = 5.0


class Runtime(LoopThread):
    """An event loop in a daemon thread and the clients kept on it."""

    def __init__(self) -> None:
        super().__init__("ferrokafka-spark")
        self.pid = os.getpid()
        self._consumers: dict[Any, AIOKafkaConsumer[bytes, bytes]] = {}
        self._producers: dict[Any, AIOKafkaProducer] = {}
        self._admins: dict[Any, AIOKafkaAdminClient] = {}
        #: One task at a time uses a cached client (Spark may run tasks in threads).
        self.lock = threading.Lock()
        #: How many consumers this process made (one per configuration, unless one failed).
        self.consumers_made = 0

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

    async def admin(self, client: Mapping[str, Any], ssl: Mapping[str, Any]) -> AIOKafkaAdminClient:
        """The started admin client for this configuration (its connection options only)."""
        key = _key(client, ssl)
        found = self._admins.get(key)
        if found is None:
            accepted = inspect.signature(AIOKafkaAdminClient.__init__).parameters
            kwargs = {k: v for k, v in client_kwargs(client, ssl).items() if k in accepted}
            found = AIOKafkaAdminClient(**kwargs)
            await found.start()
            self._admins[key] = found
        return found

    async def discard(self, client: Any) -> None:
        """Drop a client that failed, so that the next task makes a fresh one."""
        for cache in (self._consumers, self._producers, self._admins):
            for key, value in list(cache.items()):
                if value is client:
                    del cache[key]
        await wait_for(client.stop(), _CLOSE_TIMEOUT)

    async def _close_all(self) -> None:
        clients: list[Callable[[], Awaitable[None]]] = [c.stop for c in self._consumers.values()]
        clients += [p.stop for p in self._producers.values()]
        clients += [a.close for a in self._admins.values()]
        self._consumers.clear()
        self._producers.clear()
        self._admins.clear()
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
        self.stop(_CLOSE_TIMEOUT)


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
