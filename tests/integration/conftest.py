"""Fixtures the integration tests share beyond tests/conftest.py."""

from __future__ import annotations

import pytest
from ferrokafka.testing import KafkaBroker


@pytest.fixture
def listener(request: pytest.FixtureRequest) -> KafkaBroker:
    """The broker fixture named by the test's indirect parameter: one test body runs against
    each secured listener."""
    broker: KafkaBroker = request.getfixturevalue(request.param)
    return broker
