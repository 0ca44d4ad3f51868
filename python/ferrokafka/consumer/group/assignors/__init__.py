"""The classic group's partition assignors, with aiokafka's class names and module names below
this package: ``range.RangePartitionAssignor``, ``roundrobin.RoundRobinPartitionAssignor``,
``sticky.sticky_assignor.StickyPartitionAssignor`` and
``sticky.sticky_assignor.CooperativeStickyPartitionAssignor``. The interface is in ``abstract``.
Pure logic, no I/O. aiokafka's import paths (``ferrokafka.coordinator.assignors...``) re-export
these."""

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
