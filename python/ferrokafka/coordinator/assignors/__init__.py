"""Partition assignors with aiokafka's module paths and class names:
``range.RangePartitionAssignor``, ``roundrobin.RoundRobinPartitionAssignor``,
``sticky.sticky_assignor.StickyPartitionAssignor`` and
``sticky.sticky_assignor.CooperativeStickyPartitionAssignor``. The interface is in ``abstract``."""

from .abstract import AbstractPartitionAssignor
from .range import RangePartitionAssignor
from .roundrobin import RoundRobinPartitionAssignor
from .sticky.sticky_assignor import CooperativeStickyPartitionAssignor, StickyPartitionAssignor

__all__ = [
    "AbstractPartitionAssignor",
    "CooperativeStickyPartitionAssignor",
    "RangePartitionAssignor",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
]
