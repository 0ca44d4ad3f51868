"""An event loop running in a daemon thread, for synchronous callers of the asyncio client
(Spark's workers, :func:`ferrokafka.arrow.read`). The client's background work (fetching
ahead, heartbeats) goes on in that thread between the caller's calls."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

_T = TypeVar("_T")


class LoopThread:
    """A new event loop, run by a daemon thread named ``name`` until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        """Run ``coro`` on the loop and wait for its result from the calling thread; an
        interrupted or timed-out wait cancels it."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except (KeyboardInterrupt, concurrent.futures.TimeoutError):
            future.cancel()
            raise

    def stop(self, timeout: float) -> None:
        """Stop the loop, wait up to ``timeout`` seconds for the thread, and close the loop if
        it ended."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
