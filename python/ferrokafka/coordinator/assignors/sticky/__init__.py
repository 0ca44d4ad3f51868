"""aiokafka's import path of ``ferrokafka.consumer.group.assignors.sticky``."""

from ....consumer.group.assignors.sticky import (
    CooperativeStickyPartitionAssignor,
    StickyPartitionAssignor,
)

__all__ = ["CooperativeStickyPartitionAssignor", "StickyPartitionAssignor"]
