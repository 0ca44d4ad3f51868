"""The admin client's client quota operations: DescribeClientQuotas and AlterClientQuotas
to any broker (KRaft forwards the change to the controller), as Java's
``describeClientQuotas`` and ``alterClientQuotas``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..protocol import Api
from ._base import AdminBase, raise_for
from .quota_types import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter

if TYPE_CHECKING:
    from .._native import AlterClientQuotasRequest, DescribeClientQuotasRequest

__all__ = ["QuotaOperations"]


class QuotaOperations(AdminBase):
    """Users', client ids' and IPs' quotas."""

    async def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter | None = None
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """The quotas of every entity ``quota_filter`` matches (all by default), by entity."""
        wanted = quota_filter or ClientQuotaFilter.all()
        request: DescribeClientQuotasRequest = {
            "components": [
                {
                    "entity_type": c.entity_type,
                    "match_type": int(c.match_type),
                    "match_name": c.match,
                }
                for c in wanted.components
            ],
            "strict": wanted.strict,
        }
        response = await self._client.send_to_any(Api.DESCRIBE_CLIENT_QUOTAS, request)
        raise_for(response["error_code"], "describe_client_quotas", response["error_message"])
        return {
            ClientQuotaEntity.of({p["entity_type"]: p["entity_name"] for p in e["entity"]}): {
                v["key"]: v["value"] for v in e["values"]
            }
            for e in response["entries"] or []
        }

    async def alter_client_quotas(
        self, alterations: Iterable[ClientQuotaAlteration], validate_only: bool = False
    ) -> None:
        """Set or remove quota values; an entity's error (an unknown key, an invalid value)
        is raised naming the entity."""
        request: AlterClientQuotasRequest = {
            "entries": [
                {
                    "entity": [
                        {"entity_type": kind, "entity_name": name}
                        for kind, name in a.entity.entries
                    ],
                    "ops": [
                        {
                            "key": key,
                            "value": 0.0 if value is None else value,
                            "remove": value is None,
                        }
                        for key, value in a.ops.items()
                    ],
                }
                for a in alterations
            ],
            "validate_only": validate_only,
        }
        if not request["entries"]:
            return
        response = await self._client.send_to_any(Api.ALTER_CLIENT_QUOTAS, request)
        for entry in response["entries"]:
            entity = ClientQuotaEntity.of(
                {p["entity_type"]: p["entity_name"] for p in entry["entity"]}
            )
            raise_for(entry["error_code"], f"alter_client_quotas: {entity}", entry["error_message"])
