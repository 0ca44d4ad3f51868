"""The admin client's ACL operations: CreateAcls, DescribeAcls and DeleteAcls, sent to any
broker (KRaft brokers forward the writes to the controller), with kafka-python's shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .. import errors as Errors
from ..protocol import Api
from ._base import AdminBase
from .acl_resource import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourceType,
)

if TYPE_CHECKING:
    from .._native import (
        AclCreation,
        CreateAclsRequest,
        DeleteAclsFilter,
        DeleteAclsRequest,
        DescribeAclsRequest,
    )

__all__ = ["AclOperations"]

CreateAclsResult = dict[str, list[Any]]
"""``{"succeeded": [ACL, ...], "failed": [(ACL, KafkaError), ...]}``."""

_Asked = TypeVar("_Asked")
_Result = TypeVar("_Result")


class AclOperations(AdminBase):
    """ACL bindings (the broker needs an authorizer; without one each call raises
    ``SecurityDisabledError``)."""

    async def create_acls(self, acls: list[ACL]) -> CreateAclsResult:
        """Create ACL bindings: ``{"succeeded": [ACL, ...], "failed": [(ACL, error), ...]}``,
        each error an instance of the broker's error class naming the binding (e.g.
        ``ClusterAuthorizationFailedError`` for a principal that may not alter ACLs). Creating
        a binding that exists succeeds."""
        for acl in acls:
            if not isinstance(acl, ACL):
                raise Errors.IllegalArgumentError("create_acls takes ACL objects")
        if not acls:
            return {"succeeded": [], "failed": []}
        creations: list[AclCreation] = [
            {
                "resource_type": int(acl.resource_pattern.resource_type),
                "resource_name": acl.resource_pattern.resource_name,
                "resource_pattern_type": int(acl.resource_pattern.pattern_type),
                "principal": acl.principal,
                "host": acl.host,
                "operation": int(acl.operation),
                "permission_type": int(acl.permission_type),
            }
            for acl in acls
        ]
        create: CreateAclsRequest = {"creations": creations}
        response = await self._client.send_to_any(Api.CREATE_ACLS, create)
        out: CreateAclsResult = {"succeeded": [], "failed": []}
        for acl, result in _one_each("create_acls", acls, "bindings", response["results"]):
            if result["error_code"]:
                out["failed"].append(
                    (
                        acl,
                        _error(result["error_code"], f"create ACL {acl}", result["error_message"]),
                    )
                )
            else:
                out["succeeded"].append(acl)
        return out

    async def describe_acls(self, acl_filter: ACLFilter) -> tuple[list[ACL], type[Errors.NoError]]:
        """The ACL bindings matching ``acl_filter``: ``(acls, NoError)``. An error (no
        authorizer, not authorized to describe the cluster) is raised, typed, naming the
        filter."""
        if not isinstance(acl_filter, ACLFilter):
            raise Errors.IllegalArgumentError("describe_acls takes an ACLFilter")
        request: DescribeAclsRequest = _filter(acl_filter)
        response = await self._retrying(
            lambda: self._client.send_to_any(Api.DESCRIBE_ACLS, request)
        )
        if response["error_code"]:
            raise _error(
                response["error_code"], f"describe ACLs {acl_filter}", response["error_message"]
            )
        acls = [
            _binding(
                resource["resource_type"],
                resource["resource_name"],
                resource["pattern_type"],
                acl["principal"],
                acl["host"],
                acl["operation"],
                acl["permission_type"],
            )
            for resource in response["resources"]
            for acl in resource["acls"]
        ]
        return acls, Errors.NoError

    async def delete_acls(
        self, acl_filters: list[ACLFilter]
    ) -> list[tuple[ACLFilter, list[ACL], type[Errors.NoError] | Errors.KafkaError]]:
        """Delete every ACL binding matching each filter: one ``(filter, deleted ACLs,
        error)`` per filter, in order, ``error`` being ``NoError`` or an instance of the
        broker's error class naming the filter. A binding the broker failed to delete is left
        out of the list and its error is the filter's."""
        for acl_filter in acl_filters:
            if not isinstance(acl_filter, ACLFilter):
                raise Errors.IllegalArgumentError("delete_acls takes ACLFilter objects")
        if not acl_filters:
            return []
        delete: DeleteAclsRequest = {"filters": [_filter(f) for f in acl_filters]}
        response = await self._client.send_to_any(Api.DELETE_ACLS, delete)
        results = response["filter_results"]
        out: list[tuple[ACLFilter, list[ACL], type[Errors.NoError] | Errors.KafkaError]] = []
        for acl_filter, result in _one_each("delete_acls", acl_filters, "filters", results):
            error: type[Errors.NoError] | Errors.KafkaError = Errors.NoError
            if result["error_code"]:
                error = _error(
                    result["error_code"], f"delete ACLs {acl_filter}", result["error_message"]
                )
            deleted = []
            for m in result["matching_acls"]:
                acl = _binding(
                    m["resource_type"],
                    m["resource_name"],
                    m["pattern_type"],
                    m["principal"],
                    m["host"],
                    m["operation"],
                    m["permission_type"],
                )
                if m["error_code"]:
                    if error is Errors.NoError:
                        error = _error(m["error_code"], f"delete ACL {acl}", m["error_message"])
                else:
                    deleted.append(acl)
            out.append((acl_filter, deleted, error))
        return out


def _filter(acl_filter: ACLFilter) -> DeleteAclsFilter:
    """An ``ACLFilter`` on the wire (DescribeAcls takes the same fields as each DeleteAcls
    filter)."""
    pattern = acl_filter.resource_pattern
    return {
        "resource_type_filter": int(pattern.resource_type),
        "resource_name_filter": pattern.resource_name,
        "pattern_type_filter": int(pattern.pattern_type),
        "principal_filter": acl_filter.principal,
        "host_filter": acl_filter.host,
        "operation": int(acl_filter.operation),
        "permission_type": int(acl_filter.permission_type),
    }


def _one_each(
    call: str, asked: Sequence[_Asked], noun: str, results: Sequence[_Result]
) -> zip[tuple[_Asked, _Result]]:
    """Each of ``asked`` with its result, in order; ``KafkaProtocolError`` if the broker
    answered for another number of them."""
    if len(results) != len(asked):
        raise Errors.KafkaProtocolError(f"{call}: {len(results)} results for {len(asked)} {noun}")
    return zip(asked, results, strict=True)


def _error(code: int, what: str, message: str | None) -> Errors.KafkaError:
    detail = f": {message}" if message else ""
    return Errors.for_code(code)(f"{what}{detail}")


def _binding(
    resource_type: int,
    resource_name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission_type: int,
) -> ACL:
    """An ``ACL`` from its wire codes."""
    return ACL(
        principal=principal,
        host=host,
        operation=ACLOperation(operation),
        permission_type=ACLPermissionType(permission_type),
        resource_pattern=ResourcePattern(
            ResourceType(resource_type), resource_name, ACLResourcePatternType(pattern_type)
        ),
    )
