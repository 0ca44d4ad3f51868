"""``AdminConfig``: the options of ``AIOKafkaAdminClient``, under aiokafka's keyword names."""

from __future__ import annotations

from dataclasses import dataclass

from .connection import ConnectionConfig

__all__ = ["AdminConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminConfig(ConnectionConfig):
    """The options of ``AIOKafkaAdminClient`` (its keyword arguments but ``loop``), checked:
    the connection options, documented on ``ConnectionConfig``. The admin client's Metadata
    requests never create topics (``allow_auto_create_topics`` stays False)."""
