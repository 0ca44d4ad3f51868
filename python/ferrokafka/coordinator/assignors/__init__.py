"""aiokafka's import path of ``ferrokafka.consumer.group.assignors``."""

from ...consumer.group.assignors import (
    AbstractPartitionAssignor,
    CooperativeStickyPartitionAssignor,
    RangePartitionAssignor,
    RoundRobinPartitionAssignor,
    StickyPartitionAssignor,
)

__all__ = [
    "AbstractPartitionAssignor",
    "CooperativeStickyPartitionAssignor",
    "RangePartitionAssignor",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
]
