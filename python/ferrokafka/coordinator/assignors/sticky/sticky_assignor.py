"""aiokafka's import path of ``ferrokafka.consumer.group.assignors.sticky.sticky_assignor``."""

from ....consumer.group.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
    StickyAssignorUserData,
    StickyPartitionAssignor,
    java_hashmap_order,
)

__all__ = [
    "CooperativeStickyPartitionAssignor",
    "StickyAssignorUserData",
    "StickyPartitionAssignor",
    "java_hashmap_order",
]
