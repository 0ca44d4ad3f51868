"""Topic management through ferrokafka's admin client, for the harness's brokers and for a
broker somebody else runs (:class:`ExternalKafka`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable, Coroutine, Mapping
from types import ModuleType
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["ExternalKafka", "TopicOps", "client_ops", "run_sync"]

_T = TypeVar("_T")
_S = TypeVar("_S")
_P = ParamSpec("_P")


def run_sync(factory: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine to completion from synchronous code, even inside a running loop (then
    in a worker thread with its own loop; the caller's loop is blocked meanwhile)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ferrokafka-harness") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def client_ops() -> ModuleType:
    # Imported late: the client (and the native core under it) is only needed once a broker
    # runs, and importing the harness must stay cheap.
    from . import _client_ops as ops

    return ops


def _blocking(
    method: Callable[Concatenate[_S, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[_S, _P], _T]:
    """The synchronous twin of an ``a``-prefixed coroutine method, with its signature."""
    name = method.__name__.removeprefix("a")

    @functools.wraps(method)
    def blocking(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return run_sync(lambda: method(self, *args, **kwargs))

    blocking.__name__ = name
    blocking.__qualname__ = method.__qualname__.rpartition(".")[0] + "." + name
    blocking.__doc__ = f"Synchronous :meth:`{method.__name__}`."
    return blocking


class TopicOps:
    """Topic management through ferrokafka's admin client (shared by local and external)."""

    replication_factor: int

    def _topic_bootstrap(self) -> str:
        raise NotImplementedError

    async def acreate_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Create ``name`` and wait until its partitions have leaders that serve it."""
        await client_ops().create_topic(
            self._topic_bootstrap(),
            name,
            partitions=partitions,
            replication_factor=replication_factor or self.replication_factor,
            configs=dict(configs) if configs is not None else None,
            timeout=timeout,
        )

    async def adelete_topic(self, name: str, timeout: float = 30.0) -> None:
        """Delete ``name`` and wait until no broker lists it."""
        await client_ops().delete_topic(self._topic_bootstrap(), name, timeout=timeout)

    create_topic = _blocking(acreate_topic)
    delete_topic = _blocking(adelete_topic)


class ExternalKafka(TopicOps):
    """A broker somebody else runs (e.g. ``FERROKAFKA_BOOTSTRAP``), with the harness's topic
    interface. ``start``/``stop`` do nothing: it is not ours to manage."""

    def __init__(self, bootstrap_servers: str, *, replication_factor: int = 1) -> None:
        self._bootstrap_servers = bootstrap_servers
        self.replication_factor = replication_factor

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap_servers

    def _topic_bootstrap(self) -> str:
        return self._bootstrap_servers

    def start(self, timeout: float = 60.0) -> ExternalKafka:
        """Wait until the external broker answers Metadata."""
        run_sync(lambda: client_ops().wait_until_ready(self._bootstrap_servers, 1, timeout))
        return self

    def stop(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"ExternalKafka({self._bootstrap_servers!r})"
