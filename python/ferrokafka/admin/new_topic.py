"""``NewTopic``: what ``create_topics`` creates (aiokafka's fields)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import IllegalArgumentError

if TYPE_CHECKING:
    from .._native import CreatableTopic

__all__ = ["NewTopic"]


class NewTopic:
    """A topic to create.

    ``num_partitions`` and ``replication_factor`` may be -1 for the broker defaults (when
    ``replica_assignments`` is given they must be -1). ``replica_assignments`` maps a
    partition to its replica broker ids; ``topic_configs`` are topic-level configs.
    """

    def __init__(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        replica_assignments: dict[int, list[int]] | None = None,
        topic_configs: dict[str, str] | None = None,
    ) -> None:
        if not name:
            raise ValueError("NewTopic: name must be a non-empty string")
        if replica_assignments is not None and (num_partitions != -1 or replication_factor != -1):
            raise IllegalArgumentError(
                f"NewTopic {name!r}: with replica_assignments, num_partitions and "
                "replication_factor must both be -1"
            )
        self.name = name
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.replica_assignments = replica_assignments or {}
        self.topic_configs = topic_configs or {}

    def __repr__(self) -> str:
        return (
            f"NewTopic(name={self.name!r}, num_partitions={self.num_partitions}, "
            f"replication_factor={self.replication_factor})"
        )

    def to_request(self) -> CreatableTopic:
        """The CreateTopics request entry for this topic."""
        return {
            "name": self.name,
            "num_partitions": self.num_partitions,
            "replication_factor": self.replication_factor,
            "assignments": [
                {"partition_index": p, "broker_ids": list(b)}
                for p, b in sorted(self.replica_assignments.items())
            ],
            "configs": [{"name": k, "value": v} for k, v in sorted(self.topic_configs.items())],
        }
