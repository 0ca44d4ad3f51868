"""``RecordsToDelete``: how far ``delete_records`` truncates a partition (aiokafka's fields)."""

from __future__ import annotations

__all__ = ["RecordsToDelete"]


class RecordsToDelete:
    """Delete every record of a partition below ``before_offset`` (-1: up to the high
    watermark). The partition's log start offset becomes ``before_offset``."""

    def __init__(self, before_offset: int) -> None:
        self.before_offset = before_offset

    def __repr__(self) -> str:
        return f"RecordsToDelete(before_offset={self.before_offset})"
