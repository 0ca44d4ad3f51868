"""Kafka API keys and small protocol constants shared by the Python layer."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["COORDINATOR_KEY_BASE", "ApiKey", "coordinator_node_id"]


class ApiKey(IntEnum):
    """Kafka request types (the ``api_key`` of every request header)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69


COORDINATOR_KEY_BASE = 2147483647
"""Coordinator connections are keyed ``2147483647 - broker_id`` (Integer.MAX_VALUE - id), so
group traffic gets its own socket even to a broker that also serves our fetches."""


def coordinator_node_id(broker_id: int) -> int:
    """The connection key of the coordinator connection to ``broker_id``."""
    return COORDINATOR_KEY_BASE - broker_id
