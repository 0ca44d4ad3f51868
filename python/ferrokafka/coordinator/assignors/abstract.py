"""aiokafka's import path of ``ferrokafka.consumer.group.assignors.abstract``."""

from ...consumer.group.assignors.abstract import (
    AbstractPartitionAssignor,
    ClusterView,
    Members,
    hybridmethod,
    java_string_key,
    member_order,
    partitions_per_topic,
)

__all__ = [
    "AbstractPartitionAssignor",
    "ClusterView",
    "Members",
    "hybridmethod",
    "java_string_key",
    "member_order",
    "partitions_per_topic",
]
