"""``update_features`` refuses what Java's ``Admin`` and ``FeatureUpdate`` refuse before any
request: a client that never connected answers at once."""

from __future__ import annotations

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, FeatureUpdate, FeatureUpgradeType


@pytest.mark.parametrize(
    ("name", "update", "why"),
    [
        (" ", FeatureUpdate(1), "provided feature can not be empty"),
        ("group.version", FeatureUpdate(-1), "cannot specify a negative version level: -1"),
        (
            "group.version",
            FeatureUpdate(-1, FeatureUpgradeType.SAFE_DOWNGRADE),
            "cannot specify a negative version level: -1",
        ),
        ("group.version", FeatureUpdate(0), "upgradeType flag should be set to SAFE_DOWNGRADE"),
    ],
)
async def test_refused_before_sending(name: str, update: FeatureUpdate, why: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers="127.0.0.1:1")
    with pytest.raises(Errors.IllegalArgumentError, match=why):
        await admin.update_features({"transaction.version": FeatureUpdate(2), name: update})
    await admin.close()


async def test_an_empty_update_is_refused() -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers="127.0.0.1:1")
    with pytest.raises(Errors.IllegalArgumentError, match="no feature updates"):
        await admin.update_features({})
    await admin.close()
