"""ACL bindings for ``create_acls``, ``describe_acls`` and ``delete_acls``.

aiokafka 0.14 has no ACL API; these are the names, values and shapes of kafka-python's admin
ACL types (the admin client aiokafka's was derived from): ``ACL`` (a concrete binding) and
``ACLFilter`` (a pattern of bindings), each a principal, a host, an ``ACLOperation``, an
``ACLPermissionType`` and a ``ResourcePattern`` / ``ResourcePatternFilter``. The enum values
are Kafka's wire codes. A filter's ``None`` principal, host or resource name matches any, as do
the ``ANY`` members.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ..errors import IllegalArgumentError

__all__ = [
    "ACL",
    "ACLFilter",
    "ACLOperation",
    "ACLPermissionType",
    "ACLResourcePatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
]


class ResourceType(IntEnum):
    """What an ACL protects. ``ANY`` only in a filter."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class ACLOperation(IntEnum):
    """What an ACL allows or denies. ``ANY`` only in a filter; ``ALL`` is every operation."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class ACLPermissionType(IntEnum):
    """Whether an ACL allows or denies. ``ANY`` only in a filter."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class ACLResourcePatternType(IntEnum):
    """How an ACL's resource name matches (KIP-290): ``LITERAL`` the name itself (``"*"`` is
    every resource), ``PREFIXED`` every name starting with it. In a filter, ``ANY`` matches
    bindings of any pattern type with exactly that name, ``MATCH`` the bindings that would
    apply to a resource of that name (literal, wildcard and prefixes of it)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


@dataclass(frozen=True)
class ResourcePatternFilter:
    """Which resource patterns a filter matches; ``resource_name=None`` matches any name."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: ACLResourcePatternType

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``IllegalArgumentError`` for a value this kind of pattern cannot hold."""
        if not isinstance(self.resource_type, ResourceType):
            raise IllegalArgumentError("resource_type must be a ResourceType")
        if not isinstance(self.pattern_type, ACLResourcePatternType):
            raise IllegalArgumentError("pattern_type must be an ACLResourcePatternType")

    def __str__(self) -> str:
        name = "*any*" if self.resource_name is None else repr(self.resource_name)
        return f"{self.resource_type.name.lower()} {name} ({self.pattern_type.name.lower()})"


@dataclass(frozen=True)
class ResourcePattern(ResourcePatternFilter):
    """One concrete resource pattern: a type (not ``ANY``), a name, ``LITERAL`` or
    ``PREFIXED``."""

    resource_name: str
    pattern_type: ACLResourcePatternType = ACLResourcePatternType.LITERAL

    def validate(self) -> None:
        super().validate()
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise IllegalArgumentError(f"resource_type cannot be {self.resource_type.name}")
        if self.pattern_type not in (
            ACLResourcePatternType.LITERAL,
            ACLResourcePatternType.PREFIXED,
        ):
            raise IllegalArgumentError(
                f"pattern_type cannot be {self.pattern_type.name} on a concrete ResourcePattern"
            )
        if not isinstance(self.resource_name, str):
            raise IllegalArgumentError("resource_name must be a str")


@dataclass(frozen=True)
class ACLFilter:
    """Which ACL bindings ``describe_acls`` and ``delete_acls`` select. ``principal`` is
    ``"User:name"``; ``None`` principal or host matches any."""

    principal: str | None
    host: str | None
    operation: ACLOperation
    permission_type: ACLPermissionType
    resource_pattern: ResourcePatternFilter

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``IllegalArgumentError`` for a value this kind of binding cannot hold."""
        if not isinstance(self.operation, ACLOperation):
            raise IllegalArgumentError("operation must be an ACLOperation")
        if not isinstance(self.permission_type, ACLPermissionType):
            raise IllegalArgumentError("permission_type must be an ACLPermissionType")
        if not isinstance(self.resource_pattern, ResourcePatternFilter):
            raise IllegalArgumentError("resource_pattern must be a ResourcePatternFilter")

    def __str__(self) -> str:
        return (
            f"{self.permission_type.name} {self.principal or '*any*'} "
            f"{self.operation.name} on {self.resource_pattern} from {self.host or '*any*'}"
        )


@dataclass(frozen=True)
class ACL(ACLFilter):
    """One concrete ACL binding: a principal (``"User:alice"``), a host (``"*"`` for every
    host), an operation and permission (not ``ANY``) on a ``ResourcePattern``."""

    principal: str
    host: str
    resource_pattern: ResourcePattern

    def validate(self) -> None:
        super().validate()
        if self.operation in (ACLOperation.ANY, ACLOperation.UNKNOWN):
            raise IllegalArgumentError(f"operation cannot be {self.operation.name}")
        if self.permission_type in (ACLPermissionType.ANY, ACLPermissionType.UNKNOWN):
            raise IllegalArgumentError(f"permission_type cannot be {self.permission_type.name}")
        if not isinstance(self.resource_pattern, ResourcePattern):
            raise IllegalArgumentError("resource_pattern must be a ResourcePattern")
        if not isinstance(self.principal, str) or not isinstance(self.host, str):
            raise IllegalArgumentError("principal and host must be str")
