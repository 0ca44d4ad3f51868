"""A client's own ``getone`` and ``send``: attributes of each consumer and producer, made by
the extension.

The classes' ``getone`` and ``send`` are Python methods, and a Python call costs a frame
(``send``'s a coroutine too): for a record that takes a shortcut (already buffered, or joining
an open batch) that is a sixth of what the call costs. So each client has, in its
``__dict__``, an object of the extension that makes the shortcut's awaitable with no frame;
attribute lookup finds it before the class's method (a method is not a data descriptor). It
calls the class's method instead whenever that could differ (other arguments, a subclass's
override, a patched class), and it carries what introspection asks of a method: its name,
documentation and signature, and that it is a coroutine function, as aiokafka's
``async def`` methods are.

Each holds its client weakly (the client holds it: a cycle would keep a dropped client alive
until a collection).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from . import _native
from . import errors as Errors

__all__ = ["install_getone", "install_send", "mark_coroutine_function"]


def mark_coroutine_function(func: Any) -> None:
    """Let ``inspect``/``asyncio.iscoroutinefunction`` say what ``func`` returns: a coroutine
    (aiokafka's is an ``async def``; code that checks before awaiting must see the same)."""
    mark = getattr(inspect, "markcoroutinefunction", None)  # Python 3.12+
    if mark is not None:
        mark(func)
    legacy = getattr(asyncio.coroutines, "_is_coroutine", None)  # asyncio's before 3.12
    if legacy is not None:
        func._is_coroutine = legacy


def class_attribute(obj: Any, defined: Callable[..., Any]) -> Any:
    """``obj.<name>`` as its class defines it (``defined``'s name): attribute lookup without
    the instance's own attributes (what a subclass or a patch put there is what a call must
    reach)."""
    cls = type(obj)
    name = defined.__name__
    if getattr(cls, name, None) is defined:
        return defined.__get__(obj, cls)  # the method the object was made for, unchanged
    attr = inspect.getattr_static(cls, name)
    bind = getattr(type(attr), "__get__", None)
    return attr if bind is None else bind(attr, obj, cls)


def install_getone(consumer: Any, stream: _native.RecordStream[Any], defined: Any) -> None:
    """Give ``consumer`` its own ``getone``, stepping ``stream``, for as long as its class's
    ``getone`` is ``defined``."""
    me = weakref.ref(consumer)

    def other(*args: Any, **kwargs: Any) -> Any:
        owner = me()
        if owner is None:
            raise Errors.ConsumerStoppedError()
        return class_attribute(owner, defined)(*args, **kwargs)

    _install(consumer, _native.GetOne.make(stream, type(consumer), defined, other), defined)


def install_send(producer: Any, batches: _native.OpenBatches, defined: Any) -> None:
    """Give ``producer`` its own ``send``, whose records join ``batches`` when they can, for
    as long as its class's ``send`` is ``defined``."""
    me = weakref.ref(producer)

    def alive() -> Any:
        owner = me()
        if owner is None:
            raise Errors.ProducerClosed("the producer was dropped")
        return owner

    def slow(topic: Any, value: Any, key: Any) -> Any:
        return defined(alive(), topic, value, key)

    def other(*args: Any, **kwargs: Any) -> Any:
        return class_attribute(alive(), defined)(*args, **kwargs)

    _install(
        producer, _native.SendMethod.make(batches, type(producer), defined, slow, other), defined
    )


def _install(client: Any, own: Any, defined: Callable[..., Any]) -> None:
    for name, value in _introspected(defined).items():
        setattr(own, name, value)
    mark_coroutine_function(own)
    client.__dict__[defined.__name__] = own


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
