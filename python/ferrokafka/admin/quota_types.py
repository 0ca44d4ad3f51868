"""What ``describe_client_quotas`` and ``alter_client_quotas`` take and return (Java's
``ClientQuotaEntity``, ``ClientQuotaFilter``, ``ClientQuotaFilterComponent`` and
``ClientQuotaAlteration``). Entity types are ``user``, ``client-id`` and ``ip``; a ``None``
name is the type's default entity."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClientQuotaFilterComponent",
    "QuotaMatchType",
]

ENTITY_TYPES = ("user", "client-id", "ip")


@dataclass(frozen=True)
class ClientQuotaEntity:
    """The entity quotas apply to: one name (``None``, the default) per entity type, e.g. a
    user, a user and client id together, or an IP."""

    entries: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, entity: Mapping[str, str | None]) -> ClientQuotaEntity:
        for kind in entity:
            if kind not in ENTITY_TYPES:
                raise ValueError(f"unknown quota entity type {kind!r} (one of {ENTITY_TYPES})")
        return cls(tuple(sorted(entity.items())))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.entries)

    def __str__(self) -> str:
        return ", ".join(f"{k}={'<default>' if v is None else v}" for k, v in self.entries)


class QuotaMatchType(IntEnum):
    """How a filter component matches an entity type's name (DescribeClientQuotas' codes)."""

    EXACT = 0
    DEFAULT = 1
    ANY = 2


@dataclass(frozen=True)
class ClientQuotaFilterComponent:
    """Which names of one entity type a filter matches."""

    entity_type: str
    match_type: QuotaMatchType
    match: str | None = None

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, QuotaMatchType.EXACT, name)

    @classmethod
    def of_default_entity(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, QuotaMatchType.DEFAULT)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, QuotaMatchType.ANY)


@dataclass(frozen=True)
class ClientQuotaFilter:
    """Entities matching every component; with ``strict``, only those without other entity
    types. ``ClientQuotaFilter.all()`` matches every entity."""

    components: tuple[ClientQuotaFilterComponent, ...] = ()
    strict: bool = False

    @classmethod
    def contains(cls, components: Iterable[ClientQuotaFilterComponent]) -> ClientQuotaFilter:
        return cls(tuple(components))

    @classmethod
    def contains_only(cls, components: Iterable[ClientQuotaFilterComponent]) -> ClientQuotaFilter:
        return cls(tuple(components), strict=True)

    @classmethod
    def all(cls) -> ClientQuotaFilter:
        return cls()


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """Quota changes of one entity: key -> new value, or ``None`` to remove the key
    (``producer_byte_rate``, ``consumer_byte_rate``, ``request_percentage``,
    ``controller_mutation_rate``, ``connection_creation_rate``)."""

    entity: ClientQuotaEntity
    ops: Mapping[str, float | None]
