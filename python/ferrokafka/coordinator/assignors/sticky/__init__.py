"""Sticky assignors (aiokafka's path ``...assignors.sticky.sticky_assignor``)."""

from .sticky_assignor import CooperativeStickyPartitionAssignor, StickyPartitionAssignor

__all__ = ["CooperativeStickyPartitionAssignor", "StickyPartitionAssignor"]
