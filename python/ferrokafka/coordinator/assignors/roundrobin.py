"""aiokafka's import path of ``ferrokafka.consumer.group.assignors.roundrobin``."""

from ...consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor

__all__ = ["RoundRobinPartitionAssignor"]
