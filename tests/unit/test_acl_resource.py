"""The ACL binding types: Kafka's wire codes, kafka-python's names, and refusal of what a
concrete binding cannot hold (``ANY`` and ``MATCH`` belong to filters only)."""

from __future__ import annotations

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)


def _acl(op: ACLOperation = ACLOperation.READ, **pattern: object) -> ACL:
    resource = ResourcePattern(ResourceType.TOPIC, "t", **pattern)  # type: ignore[arg-type]
    return ACL("User:alice", "*", op, ACLPermissionType.ALLOW, resource)


def test_wire_codes() -> None:
    assert (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID) == (2, 3, 5)
    assert (ACLOperation.ANY, ACLOperation.READ, ACLOperation.IDEMPOTENT_WRITE) == (1, 3, 12)
    assert (ACLPermissionType.DENY, ACLPermissionType.ALLOW) == (2, 3)
    assert (ACLResourcePatternType.MATCH, ACLResourcePatternType.PREFIXED) == (2, 4)


def test_a_pattern_is_literal_unless_told() -> None:
    assert ResourcePattern(ResourceType.TOPIC, "t").pattern_type is ACLResourcePatternType.LITERAL


def test_bindings_compare_and_hash_by_value() -> None:
    assert _acl() == _acl()
    assert len({_acl(), _acl(), _acl(ACLOperation.WRITE)}) == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: ResourcePattern(ResourceType.ANY, "t"),
        lambda: ResourcePattern(ResourceType.TOPIC, "t", ACLResourcePatternType.MATCH),
        lambda: ResourcePattern(ResourceType.TOPIC, "t", ACLResourcePatternType.ANY),
        lambda: _acl(ACLOperation.ANY),
        lambda: ACL(
            "User:a",
            "*",
            ACLOperation.READ,
            ACLPermissionType.ANY,
            ResourcePattern(ResourceType.TOPIC, "t"),
        ),
        lambda: ACL(
            "User:a",
            "*",
            ACLOperation.READ,
            ACLPermissionType.ALLOW,
            ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY),
        ),
        lambda: ACLFilter(None, None, 3, ACLPermissionType.ANY, _acl().resource_pattern),  # type: ignore[arg-type]
    ],
)
def test_what_a_binding_cannot_hold_is_refused(make: object) -> None:
    with pytest.raises(Errors.IllegalArgumentError):
        make()  # type: ignore[operator]


def test_a_filter_matches_any_with_none() -> None:
    f = ACLFilter(
        None,
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )
    assert "*any*" in str(f)
    assert "topic 't' (literal)" in str(_acl())
