"""Fixtures the integration tests share beyond tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaBroker, KafkaCluster

from ..conftest import KEEP_DATA
from ..needs import CLUSTER_START_S


@pytest.fixture
def listener(request: pytest.FixtureRequest) -> KafkaBroker:
    """The broker fixture named by the test's indirect parameter: one test body runs against
    each secured listener."""
    broker: KafkaBroker = request.getfixturevalue(request.param)
    return broker


@pytest.fixture
async def admin(bootstrap_servers: str) -> AsyncIterator[AIOKafkaAdminClient]:
    """An admin client of the session's broker, closed after the test."""
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as client:
        yield client


@dataclass(frozen=True)
class PlacementCluster:
    """Three nodes in racks r1, r2, r3, each with two log directories."""

    cluster: KafkaCluster
    log_dirs: dict[int, tuple[str, str]]
    """Each node's two log directories."""

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers


PLACEMENT_CONFIG = {
    # No node kills here: a node fenced for heartbeats missed on a loaded machine would only
    # drop out of what the tests describe.
    "broker.session.timeout.ms": "30000",
    # A throttled move copies at most one fetch a quota window: small fetches keep it in
    # progress for minutes rather than one fetch of the whole partition.
    "replica.fetch.max.bytes": "4096",
    "replica.fetch.response.max.bytes": "4096",
}


@pytest.fixture(scope="session")
def placement_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementCluster]:
    """What the admin calls on replica placement (log directories, reassignments, leader
    elections) and on racks need; the session's ``kafka_cluster`` has neither racks nor a
    second log directory."""
    root = tmp_path_factory.mktemp("dirs")
    dirs = {n: (str(root / f"n{n}" / "a"), str(root / f"n{n}" / "b")) for n in (1, 2, 3)}
    placement = PlacementCluster(
        KafkaCluster(
            3,
            config={**KEEP_DATA, **PLACEMENT_CONFIG},
            node_configs={
                n: {"broker.rack": f"r{n}", "log.dirs": ",".join(dirs[n])} for n in (1, 2, 3)
            },
            jvm_options=QUICK_START_JVM_OPTIONS,
            start_timeout=CLUSTER_START_S,
        ),
        dirs,
    )
    placement.cluster.start()
    try:
        yield placement
    finally:
        placement.cluster.stop()
