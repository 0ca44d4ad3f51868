"""``NewPartitions``: what ``create_partitions`` grows a topic to (aiokafka's fields)."""

from __future__ import annotations

__all__ = ["NewPartitions"]


class NewPartitions:
    """Grow a topic to ``total_count`` partitions.

    ``new_assignments``, when given, holds one replica list (broker ids) per *new* partition,
    so its length is ``total_count`` minus the current count; without it the controller
    places the replicas.
    """

    def __init__(self, total_count: int, new_assignments: list[list[int]] | None = None) -> None:
        self.total_count = total_count
        self.new_assignments = new_assignments

    def __repr__(self) -> str:
        return (
            f"NewPartitions(total_count={self.total_count}, "
            f"new_assignments={self.new_assignments!r})"
        )
