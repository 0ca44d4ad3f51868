"""The admin client's config operations: DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs, routed per resource (a broker's to that broker, the rest to any
broker)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol import Api
from ._base import AdminBase, Body, plain, raise_for
from .alter_config_op import AlterConfigOp
from .config_resource import ConfigResource, ConfigResourceType

if TYPE_CHECKING:
    from .._native import (
        AlterConfigsRequest,
        AlterConfigsResourceResponse,
        DescribeConfigsRequest,
        DescribeConfigsResult,
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResult,
    )

    ResourceResults = (
        Iterable[DescribeConfigsResult]
        | Iterable[AlterConfigsResourceResponse]
        | Iterable[IncrementalAlterConfigsResult]
    )

__all__ = ["ConfigOperations"]

_PER_BROKER = (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER)
"""Resource types only their broker can answer for."""

_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp", bound=Mapping[str, Any])


class ConfigOperations(AdminBase):
    """Topic and broker configuration."""

    async def describe_configs(
        self, config_resources: list[ConfigResource], include_synonyms: bool = False
    ) -> list[Body]:
        """Read the configuration of topics and brokers: one decoded DescribeConfigs response
        per request (broker resources go to that broker, topic resources to any broker). A
        resource's error (e.g. an unknown topic) is raised naming the resource."""

        def request(resources: list[ConfigResource]) -> DescribeConfigsRequest:
            return {
                "resources": [
                    {
                        "resource_type": int(res.resource_type),
                        "resource_name": res.name,
                        "configuration_keys": list(res.configs) if res.configs else None,
                    }
                    for res in resources
                ],
                "include_synonyms": include_synonyms,
            }

        return await self._per_config_resource(
            Api.DESCRIBE_CONFIGS, config_resources, request, lambda r: r["results"]
        )

    async def alter_configs(
        self, config_resources: list[ConfigResource], validate_only: bool = False
    ) -> list[Body]:
        """Set the dynamic configuration of topics and brokers, ``configs`` of each
        ``ConfigResource`` (name -> value; keys not named return to their defaults, as
        AlterConfigs does): one decoded AlterConfigs response per request, routed as
        ``describe_configs`` routes. A resource's error (an unknown topic, an invalid value)
        is raised naming the resource."""

        def request(resources: list[ConfigResource]) -> AlterConfigsRequest:
            return {
                "resources": [
                    {
                        "resource_type": int(res.resource_type),
                        "resource_name": res.name,
                        "configs": [
                            {"name": name, "value": None if value is None else str(value)}
                            for name, value in (res.configs or {}).items()
                        ],
                    }
                    for res in resources
                ],
                "validate_only": validate_only,
            }

        return await self._per_config_resource(
            Api.ALTER_CONFIGS, config_resources, request, lambda r: r["responses"]
        )

    async def incremental_alter_configs(
        self,
        configs: Mapping[ConfigResource, Iterable[AlterConfigOp]],
        validate_only: bool = False,
    ) -> None:
        """Change single configs of topics, brokers and broker loggers (Java's
        ``incrementalAlterConfigs``): each ``AlterConfigOp`` sets, deletes (back to the
        default), appends to or subtracts from one key; keys not named keep their values.
        Broker resources go to that broker, the rest to any broker. A resource's error (an
        unknown topic, an invalid value, a key that is not a list for APPEND) is raised naming
        the resource."""
        changes = {res: list(ops) for res, ops in configs.items()}
        for res, ops in changes.items():
            for op in ops:
                if not isinstance(op, AlterConfigOp):
                    raise TypeError(f"the changes of {res} must be AlterConfigOps, got {op!r}")

        def request(resources: list[ConfigResource]) -> IncrementalAlterConfigsRequest:
            return {
                "resources": [
                    {
                        "resource_type": int(res.resource_type),
                        "resource_name": res.name,
                        "configs": [
                            {
                                "name": op.name,
                                "config_operation": int(op.op_type),
                                "value": op.value,
                            }
                            for op in changes[res]
                        ],
                    }
                    for res in resources
                ],
                "validate_only": validate_only,
            }

        await self._per_config_resource(
            Api.INCREMENTAL_ALTER_CONFIGS, list(changes), request, lambda r: r["responses"]
        )

    async def _per_config_resource(
        self,
        api: Api[_Req, _Resp],
        config_resources: list[ConfigResource],
        request: Callable[[list[ConfigResource]], _Req],
        results: Callable[[_Resp], ResourceResults],
    ) -> list[Body]:
        """Send ``api`` with the ``request`` of the resources: broker resources to that
        broker, the rest to any broker. The responses in that order, once none of their
        ``results`` carries an error (the first is raised, naming its resource)."""
        by_broker: dict[int, list[ConfigResource]] = defaultdict(list)
        anywhere: list[ConfigResource] = []
        for res in config_resources:
            # An unnamed broker resource is the cluster-wide default: any broker answers.
            if res.resource_type in _PER_BROKER and res.name:
                by_broker[int(res.name)].append(res)
            else:
                anywhere.append(res)
        sends = [
            self._client.send(broker, api, request(resources))
            for broker, resources in by_broker.items()
        ]
        if anywhere:
            sends.append(self._client.send_to_any(api, request(anywhere)))
        responses = await asyncio.gather(*sends)
        what = api.key.name.lower()
        for response in responses:
            _raise_for_resources(results(response), what)
        return [plain(r) for r in responses]


def _raise_for_resources(results: ResourceResults, what: str) -> None:
    """Raise the first config resource error, naming the resource."""
    for result in results:
        kind = ConfigResourceType(result["resource_type"]).name.lower()
        raise_for(
            result["error_code"],
            f"{what}: {kind} {result['resource_name']!r}",
            result["error_message"],
        )
