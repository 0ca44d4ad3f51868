"""aiokafka's import path of ``ferrokafka.consumer.group.assignors.range``."""

from ...consumer.group.assignors.range import RangePartitionAssignor

__all__ = ["RangePartitionAssignor"]
