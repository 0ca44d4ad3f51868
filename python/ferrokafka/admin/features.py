"""The admin client's feature operations: the finalized and supported feature levels from a
broker's ApiVersions answer, and UpdateFeatures (KRaft forwards it to the controller), as
Java's ``describeFeatures`` and ``updateFeatures``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

from .. import __version__
from .. import errors as Errors
from ..protocol import Api
from ._base import AdminBase, raise_for, raise_for_each

if TYPE_CHECKING:
    from .._native import ApiVersionsRequest, UpdateFeaturesRequest

__all__ = [
    "FeatureMetadata",
    "FeatureOperations",
    "FeatureUpdate",
    "FeatureUpgradeType",
    "VersionRange",
]


class VersionRange(NamedTuple):
    min_version: int
    max_version: int


@dataclass(frozen=True)
class FeatureMetadata:
    """The cluster's features as a broker sees them (Java's ``FeatureMetadata``)."""

    finalized_features: dict[str, VersionRange]
    """The levels in force, by feature (``metadata.version``, ``transaction.version``...)."""
    finalized_features_epoch: int | None
    supported_features: dict[str, VersionRange]
    """The levels the answering broker can run."""


class FeatureUpgradeType(IntEnum):
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    """A downgrade that loses no metadata; refused otherwise."""
    UNSAFE_DOWNGRADE = 3


class FeatureUpdate(NamedTuple):
    """A feature's new finalized level (0 removes it, a downgrade) and how it may move."""

    max_version_level: int
    upgrade_type: FeatureUpgradeType = FeatureUpgradeType.UPGRADE


class FeatureOperations(AdminBase):
    """Cluster feature levels."""

    async def describe_features(self) -> FeatureMetadata:
        """The finalized and supported feature levels (ApiVersions to the least-loaded
        broker)."""
        request: ApiVersionsRequest = {
            "client_software_name": "ferrokafka",
            "client_software_version": __version__,
        }
        response = await self._client.send_to_any(Api.API_VERSIONS, request)
        raise_for(response["error_code"], "describe_features")
        return FeatureMetadata(
            finalized_features={
                f["name"]: VersionRange(f["min_version_level"], f["max_version_level"])
                for f in response["finalized_features"] or []
            },
            finalized_features_epoch=response["finalized_features_epoch"],
            supported_features={
                f["name"]: VersionRange(f["min_version"], f["max_version"])
                for f in response["supported_features"] or []
            },
        )

    async def update_features(
        self,
        updates: Mapping[str, FeatureUpdate],
        validate_only: bool = False,
        timeout_ms: int | None = None,
    ) -> None:
        """Move features to new finalized levels. A refusal (``InvalidUpdateVersionError``
        for a level the brokers cannot run, a downgrade not marked as one) is raised naming
        the feature. A blank feature name, a level below 0, or level 0 (which removes the
        feature) as an ``UPGRADE`` is refused before sending, as Java's ``Admin`` and
        ``FeatureUpdate`` refuse them: ``IllegalArgumentError`` naming the feature (and, as
        there, an empty ``updates``)."""
        if not updates:
            raise Errors.IllegalArgumentError("update_features: no feature updates given")
        for name, u in updates.items():
            what = f"update_features: feature {name!r}"
            if not name.strip():
                raise Errors.IllegalArgumentError(f"{what}: provided feature can not be empty.")
            if u.max_version_level < 0:
                raise Errors.IllegalArgumentError(
                    f"{what}: cannot specify a negative version level: {u.max_version_level}"
                )
            if u.max_version_level < 1 and u.upgrade_type == FeatureUpgradeType.UPGRADE:
                raise Errors.IllegalArgumentError(
                    f"{what}: the upgradeType flag should be set to SAFE_DOWNGRADE or "
                    f"UNSAFE_DOWNGRADE when the provided maxVersionLevel:"
                    f"{u.max_version_level} is < 1."
                )
        request: UpdateFeaturesRequest = {
            "timeout_ms": self._timeout_ms(timeout_ms),
            "feature_updates": [
                {
                    "feature": name,
                    "max_version_level": u.max_version_level,
                    "upgrade_type": int(u.upgrade_type),
                }
                for name, u in updates.items()
            ],
            "validate_only": validate_only,
        }
        response = await self._client.send_to_any(Api.UPDATE_FEATURES, request)
        raise_for_each(response["results"], "update_features: feature", "feature")
        raise_for(
            response["error_code"],
            f"update_features: {', '.join(sorted(updates))}",
            response["error_message"],
        )
