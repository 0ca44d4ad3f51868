"""``AlterConfigOp``: one change of ``incremental_alter_configs`` (Java's ``AlterConfigOp``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = ["AlterConfigOp", "AlterConfigOpType"]


class AlterConfigOpType(IntEnum):
    """How a config changes (IncrementalAlterConfigs' operation codes)."""

    SET = 0
    DELETE = 1
    """Back to its default (the value is ignored)."""
    APPEND = 2
    """Add to a list-valued config (``cleanup.policy``, ``follower.replication.throttled.
    replicas``...) the list items of the value not in it yet."""
    SUBTRACT = 3
    """Remove from a list-valued config the list items of the value."""


@dataclass(frozen=True)
class AlterConfigOp:
    """Set, delete, append to or subtract from one config key."""

    name: str
    value: str | None
    op_type: AlterConfigOpType = AlterConfigOpType.SET

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a config name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.op_type, AlterConfigOpType):
            raise ValueError(f"op_type must be an AlterConfigOpType, got {self.op_type!r}")
        if self.op_type != AlterConfigOpType.DELETE and not isinstance(self.value, str):
            raise ValueError(
                f"{self.op_type.name} of {self.name!r} needs a string value, got {self.value!r}"
            )
