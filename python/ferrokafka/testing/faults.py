"""A TCP proxy that injects network faults between clients and one broker, driven at run time.

The harness puts one :class:`FaultProxy` in front of each node's client listener and has the
node advertise the proxy's port, so every client connection (bootstrap and after) passes
through it, while replication and the controller keep direct listeners of their own. A test
then degrades one broker's network and heals it:

- :meth:`~FaultProxy.delay`: latency (and jitter) on every chunk, each direction, without
  limiting throughput (chunks are scheduled, not slept on in turn);
- :meth:`~FaultProxy.limit`: bandwidth, bytes per second each way of each connection;
- :meth:`~FaultProxy.black_hole`: connections stay open and data is accepted, but nothing
  is forwarded either way (a broker that hangs, a dropped route);
- :meth:`~FaultProxy.cut`: every open connection is reset now, or after ``after_bytes`` more
  bytes of the broker's answers (mid-frame);
- :meth:`~FaultProxy.refuse`: new connections are reset on accept;
- :meth:`~FaultProxy.heal`: all of it undone (held data flows again).

Assigning :attr:`~FaultProxy.upstream` points new connections elsewhere (a stable address in
front of a cluster that is replaced).

Each proxy runs its own event loop in a daemon thread, so it keeps working while a test's loop
is busy or blocked, and its methods may be called from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .._rng import rng

__all__ = ["FaultProxy", "Faults"]

_CHUNK = 64 * 1024
_LINGER_ZERO = struct.pack("ii", 1, 0)


@dataclass
class Faults:
    """What a proxy does to its traffic now (read by every pump at every chunk)."""

    latency_s: float = 0.0
    jitter_s: float = 0.0
    bytes_per_s: float | None = None
    black_hole: bool = False
    refuse: bool = False
    cut_after: int | None = None
    """Reset every connection once this many more bytes of answers have been forwarded."""


@dataclass(eq=False)
class _Link:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def reset(self) -> None:
        for writer in (self.client, self.upstream):
            transport = writer.transport
            if not transport.is_closing():
                sock = transport.get_extra_info("socket")
                if sock is not None:  # an RST, as a crashed peer or a dropped route gives
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_ZERO)
                transport.abort()
        for task in self.tasks:
            task.cancel()


class FaultProxy:
    """Forward ``127.0.0.1:port`` to ``upstream`` (``host``, ``port``), with :class:`Faults`."""

    def __init__(self, upstream: tuple[str, int], *, port: int = 0, host: str = "127.0.0.1"):
        self.upstream = upstream
        self.host = host
        self._port = port
        self.faults = Faults()
        self._links: set[_Link] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._flowing: asyncio.Event | None = None
        """Clear while black-holed (set and cleared on the proxy's loop)."""
        self.accepted = 0
        """Connections accepted so far (refused ones included)."""
        self.refused = 0
        self.forwarded_bytes = 0
        """Bytes of the broker's answers forwarded to clients so far."""

    # ---- life ------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._flowing = asyncio.Event()
            self._flowing.set()
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._accept, self.host, self._port, reuse_address=True)
                )
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            self._port = self._server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(
            target=run, name=f"fault-proxy-{self.upstream}", daemon=True
        )
        self._thread.start()
        ready.wait()
        if failure:
            raise RuntimeError(f"fault proxy for {self.upstream} cannot listen") from failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        return f"{self.host}:{self._port}"

    @property
    def connections(self) -> int:
        """Connections open through the proxy now."""
        return len(self._links)

    # ---- faults (any thread) ---------------------------------------------------------------

    def delay(self, latency_ms: float, jitter_ms: float = 0.0) -> None:
        """Hold every chunk ``latency_ms`` (plus up to ``jitter_ms`` more) each way."""
        if latency_ms < 0 or jitter_ms < 0:
            raise ValueError("latency and jitter must not be negative")
        self.faults.latency_s = latency_ms / 1000
        self.faults.jitter_s = jitter_ms / 1000

    def limit(self, bytes_per_s: float | None) -> None:
        """At most ``bytes_per_s`` each way (None: unlimited)."""
        if bytes_per_s is not None and bytes_per_s <= 0:
            raise ValueError("bytes_per_s must be positive")
        self.faults.bytes_per_s = bytes_per_s

    def black_hole(self) -> None:
        """Accept and hold everything, forward nothing, until :meth:`heal`."""
        self.faults.black_hole = True
        self._call(self._hold)

    def refuse(self) -> None:
        """Reset new connections on accept, until :meth:`heal`."""
        self.faults.refuse = True

    def cut(self, after_bytes: int | None = None) -> None:
        """Reset every open connection: now, or once ``after_bytes`` more bytes of answers
        went through (``after_bytes`` inside a response cuts it mid-frame)."""
        if after_bytes is None:
            self._call(self._reset_all)
        else:
            self.faults.cut_after = self.forwarded_bytes + after_bytes

    def heal(self) -> None:
        """No faults: held data flows, new connections are accepted."""
        self.faults = Faults()
        self._call(self._release)

    # ---- internals -------------------------------------------------------------------------

    def _call(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` on the proxy's loop, and return once it ran: a fault is in force when
        the method that set it returns."""
        loop = self._loop
        if loop is None:
            return
        if self._thread is threading.current_thread():
            fn()
            return
        done = threading.Event()

        def call() -> None:
            try:
                fn()
            finally:
                done.set()

        loop.call_soon_threadsafe(call)
        done.wait(10)

    def _hold(self) -> None:
        assert self._flowing is not None
        self._flowing.clear()

    def _release(self) -> None:
        assert self._flowing is not None
        self._flowing.set()

    def _reset_all(self) -> None:
        for link in list(self._links):
            link.reset()
        self._links.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)
        self.accepted += 1
        if self.faults.refuse:
            self.refused += 1
            _Link(writer, writer).reset()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        link = _Link(writer, up_writer)
        self._links.add(link)
        link.tasks = [
            asyncio.create_task(self._pump(reader, up_writer, link, answers=False)),
            asyncio.create_task(self._pump(up_reader, writer, link, answers=True)),
        ]
        await asyncio.gather(*link.tasks, return_exceptions=True)
        link.reset()
        self._links.discard(link)

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        link: _Link,
        *,
        answers: bool,
    ) -> None:
        """Copy one direction, chunk by chunk, through the faults; ends the link when the
        sending side closes."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        sender = asyncio.create_task(self._deliver(queue, writer, link, answers=answers))
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                f = self.faults
                jitter = rng.uniform(0, f.jitter_s) if f.jitter_s else 0.0
                queue.put_nowait((time.monotonic() + f.latency_s + jitter, data))
            await queue.join()
        finally:
            sender.cancel()
            link.reset()

    async def _deliver(
        self,
        queue: asyncio.Queue[tuple[float, bytes]],
        writer: asyncio.StreamWriter,
        link: _Link,
        *,
        answers: bool,
    ) -> None:
        last_due = 0.0
        while True:
            due, data = await queue.get()
            # Jitter must not reorder bytes: a chunk never goes before the one ahead of it.
            due = max(due, last_due)
            last_due = due
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            assert self._flowing is not None
            await self._flowing.wait()
            f = self.faults
            if answers and f.cut_after is not None:
                room = f.cut_after - self.forwarded_bytes
                if room < len(data):
                    if room > 0:
                        self.forwarded_bytes += room
                        writer.write(data[:room])
                        with contextlib.suppress(ConnectionError):
                            await writer.drain()
                    f.cut_after = None
                    self._reset_all()
                    return
            # Counted before the write: a peer on another thread may read the bytes before
            # this thread runs again, and must never see a count behind what it read.
            if answers:
                self.forwarded_bytes += len(data)
            writer.write(data)
            try:
                await writer.drain()
            except ConnectionError:
                link.reset()
                return
            if f.bytes_per_s:
                await asyncio.sleep(len(data) / f.bytes_per_s)
            queue.task_done()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        self._reset_all()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    def __repr__(self) -> str:
        return f"FaultProxy({self.address} -> {self.upstream[0]}:{self.upstream[1]}, {self.faults})"
