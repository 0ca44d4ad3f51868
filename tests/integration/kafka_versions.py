"""Marks for what only some of the supported brokers (Kafka 3.9 and 4.x) have. A test that needs
a newer broker than the run's is skipped with the mark's reason (tests/conftest.py), never
silently."""

from __future__ import annotations

import pytest

KIP848 = pytest.mark.requires_kafka_4(
    "KIP-848 consumer groups (group_protocol='consumer') are generally available from Kafka 4.0; "
    "3.9 has them only as a preview that is off by default"
)
"""For a test of the KIP-848 consumer group protocol."""

CONSUMER_PROTOCOL = pytest.param("consumer", marks=KIP848)
"""The ``"consumer"`` value of a ``protocol`` parametrization."""
