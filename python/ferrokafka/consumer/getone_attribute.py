"""``consumer.getone``: each consumer's own ``getone`` attribute, made by the extension.

The class's ``getone`` is a Python method, and a Python call costs a frame: for a record that
is already buffered, that is a sixth of what ``await consumer.getone()`` costs. So each
consumer has, in its ``__dict__``, a ``GetOne`` that makes the step with no frame; attribute
lookup finds it before the class's method (a method is not a data descriptor). It calls the
class's method instead whenever that could differ (partitions named, a subclass's override,
a patched class), and it carries what introspection asks of a method: its signature, and
that it is a coroutine function, as aiokafka's ``async def getone`` is.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from .. import _native
from .. import errors as Errors

__all__ = ["install_getone", "mark_coroutine_function"]


def mark_coroutine_function(func: Any) -> None:
    """Let ``inspect``/``asyncio.iscoroutinefunction`` say what ``func`` returns: a coroutine
    (aiokafka's is an ``async def``; code that checks before awaiting must see the same)."""
    mark = getattr(inspect, "markcoroutinefunction", None)  # Python 3.12+
    if mark is not None:
        mark(func)
    legacy = getattr(asyncio.coroutines, "_is_coroutine", None)  # asyncio's before 3.12
    if legacy is not None:
        func._is_coroutine = legacy


def class_getone(consumer: Any) -> Callable[..., Any]:
    """``consumer.getone`` as the class defines it: attribute lookup without the instance's
    own attributes (what a subclass or a patch put there is what a call must reach)."""
    cls = type(consumer)
    attr = inspect.getattr_static(cls, "getone")
    bind = getattr(type(attr), "__get__", None)
    return attr if bind is None else bind(attr, consumer, cls)  # type: ignore[no-any-return]


def install_getone(consumer: Any, stream: _native.RecordStream[Any], defined: Any) -> None:
    """Give ``consumer`` its own ``getone``, stepping ``stream``, for as long as its class's
    ``getone`` is ``defined``. Holds the consumer weakly, as the stream does (the consumer
    holds both: a cycle would keep a dropped consumer alive until a collection)."""
    me = weakref.ref(consumer)

    def other(*partitions: Any) -> Any:
        owner = me()
        if owner is None:
            raise Errors.ConsumerStoppedError()
        return class_getone(owner)(*partitions)

    getone = _native.GetOne(stream, type(consumer), defined, other)
    for name, value in _introspected(defined).items():
        setattr(getone, name, value)
    mark_coroutine_function(getone)
    consumer.__dict__["getone"] = getone


@functools.cache
def _introspected(function: Callable[..., Any]) -> dict[str, Any]:
    """What introspection reads of ``function`` as a bound method: its names, its
    documentation and its signature without ``self``."""
    signature = inspect.signature(function)
    return {
        "__name__": function.__name__,
        "__qualname__": function.__qualname__,
        "__doc__": function.__doc__,
        "__signature__": signature.replace(parameters=list(signature.parameters.values())[1:]),
    }
