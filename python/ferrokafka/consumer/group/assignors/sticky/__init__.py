"""The sticky and cooperative-sticky assignors (``sticky_assignor``, aiokafka's module name), and
what they are built of: the sticky user data, Java's HashMap order, the assignment builders."""

from .sticky_assignor import CooperativeStickyPartitionAssignor, StickyPartitionAssignor

__all__ = ["CooperativeStickyPartitionAssignor", "StickyPartitionAssignor"]
