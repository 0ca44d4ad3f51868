"""``ConfigResource``: a topic, broker or group whose configuration ``describe_configs`` reads
(aiokafka's ``aiokafka.admin.config_resource`` names)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum

__all__ = ["ConfigResource", "ConfigResourceType"]


class ConfigResourceType(IntEnum):
    """Kafka's config resource types (the ``resource_type`` of DescribeConfigs)."""

    BROKER = 4
    BROKER_LOGGER = 8
    """A broker's log4j logger levels (the name is the broker id)."""
    TOPIC = 2
    GROUP = 32
    """A consumer or share group's configs (KIP-848, KIP-932): ``share.auto.offset.reset``,
    ``share.record.lock.duration.ms``, ``share.isolation.level``, session timeouts."""


class ConfigResource:
    """A config resource: its type, its name (a topic name, or a broker id as a string) and
    optionally config keys.

    ``configs`` keys restrict ``describe_configs`` to those keys; ``None`` or an empty dict
    asks for every key. ``resource_type`` may also be given by name (``"topic"``,
    ``"BROKER"``).
    """

    def __init__(
        self,
        resource_type: ConfigResourceType | str | int,
        name: str,
        configs: Mapping[str, str | None] | None = None,
    ) -> None:
        if isinstance(resource_type, ConfigResourceType):
            kind = resource_type
        elif isinstance(resource_type, int):
            kind = ConfigResourceType(resource_type)
        else:
            try:
                kind = ConfigResourceType[str(resource_type).upper()]
            except KeyError:
                raise ValueError(
                    f"unknown config resource type {resource_type!r} "
                    f"(one of {[t.name for t in ConfigResourceType]})"
                ) from None
        self.resource_type = kind
        self.name = name
        self.configs = configs

    def __repr__(self) -> str:
        return f"ConfigResource({self.resource_type.name}, {self.name!r}, configs={self.configs!r})"
