"""Client quotas and cluster features through the admin client against the real broker: quotas
set, read back by every kind of filter, removed; the feature levels compared with the
connection's own ApiVersions answer, and updates the controller refuses."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ClientQuotaFilterComponent,
    FeatureUpdate,
    FeatureUpgradeType,
)

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def _quotas_of(
    admin: AIOKafkaAdminClient, user: str
) -> dict[ClientQuotaEntity, dict[str, float]]:
    only_user = ClientQuotaFilter.contains([ClientQuotaFilterComponent.of_entity("user", user)])
    return await admin.describe_client_quotas(only_user)


async def test_client_quotas_set_described_and_removed(admin: AIOKafkaAdminClient) -> None:
    user = f"fk-quota-{uuid.uuid4().hex[:8]}"
    alone = ClientQuotaEntity.of({"user": user})
    with_client = ClientQuotaEntity.of({"user": user, "client-id": "app"})
    await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(alone, {"producer_byte_rate": 1024.0, "request_percentage": 50}),
            ClientQuotaAlteration(with_client, {"consumer_byte_rate": 2048.0}),
        ]
    )
    expected = {
        alone: {"producer_byte_rate": 1024.0, "request_percentage": 50.0},
        with_client: {"consumer_byte_rate": 2048.0},
    }
    found: dict[ClientQuotaEntity, dict[str, float]] = {}
    for _ in range(50):  # the brokers apply it when their metadata log carries it
        found = await _quotas_of(admin, user)
        if found == expected:
            break
        await asyncio.sleep(0.1)
    assert found == expected
    # A strict filter leaves out the entity with another type; every user's default is absent.
    strict = ClientQuotaFilter.contains_only([ClientQuotaFilterComponent.of_entity("user", user)])
    assert await admin.describe_client_quotas(strict) == {alone: expected[alone]}
    every = await admin.describe_client_quotas()
    assert every[alone] == expected[alone] and every[with_client] == expected[with_client]

    # validate_only changes nothing; None removes a key, and an entity without keys goes.
    await admin.alter_client_quotas(
        [ClientQuotaAlteration(alone, {"producer_byte_rate": 1.0})], validate_only=True
    )
    await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(alone, {"producer_byte_rate": None}),
            ClientQuotaAlteration(with_client, {"consumer_byte_rate": None}),
        ]
    )
    for _ in range(50):
        found = await _quotas_of(admin, user)
        if found == {alone: {"request_percentage": 50.0}}:
            break
        await asyncio.sleep(0.1)
    assert found == {alone: {"request_percentage": 50.0}}


async def test_client_quota_errors_name_the_entity(admin: AIOKafkaAdminClient) -> None:
    user = f"fk-quota-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity.of({"user": user})
    with pytest.raises(Errors.InvalidRequestError, match=f"user={user}"):
        await admin.alter_client_quotas([ClientQuotaAlteration(entity, {"no_such_quota": 1.0})])
    with pytest.raises(ValueError, match="unknown quota entity type"):
        ClientQuotaEntity.of({"group": "g"})


async def test_describe_features_matches_api_versions(admin: AIOKafkaAdminClient) -> None:
    features = await admin.describe_features()
    assert "metadata.version" in features.finalized_features
    assert features.finalized_features_epoch is not None
    for name, finalized in features.finalized_features.items():
        supported = features.supported_features[name]
        assert supported.min_version <= finalized.max_version <= supported.max_version, name

    level = features.finalized_features["metadata.version"].max_version
    # The current level again, validated only: accepted.
    await admin.update_features({"metadata.version": FeatureUpdate(level)}, validate_only=True)
    too_high = features.supported_features["metadata.version"].max_version + 1
    with pytest.raises(Errors.KafkaError, match=r"metadata\.version"):
        await admin.update_features({"metadata.version": FeatureUpdate(too_high)})
    with pytest.raises(Errors.KafkaError, match=r"metadata\.version"):
        await admin.update_features(
            {"metadata.version": FeatureUpdate(1, FeatureUpgradeType.UPGRADE)}
        )
    assert (await admin.describe_features()).finalized_features["metadata.version"].max_version == (
        level
    )
