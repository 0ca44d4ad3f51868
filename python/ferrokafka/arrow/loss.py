"""Data loss in a bounded read, by the rule of Spark's Kafka source.

Gaps in the offsets (compaction, transaction markers, aborted records) are not loss. Loss is a
start that retention already deleted, a partition that vanished, or a log that ends below the
range's end. With ``fail_on_data_loss`` (the default) the read fails naming the topic, partition
and offsets; otherwise it is logged and the read goes on with what is left.
"""

from __future__ import annotations

import logging

from .. import errors as Errors
from ..structs import TopicPartition

__all__ = ["KafkaDataLossError", "deleted", "gone", "report_data_loss", "truncated"]

log = logging.getLogger(__name__)


class KafkaDataLossError(Errors.KafkaError):
    """Records a read should have returned are gone (deleted by retention, a deleted topic or
    partition, a truncated log). Raised when ``failOnDataLoss`` is true (the default)."""


def report_data_loss(fail: bool, reason: str, option: str = "failOnDataLoss") -> None:
    """Raise (``fail``) or log and go on; ``option`` names the setting that chose."""
    if fail:
        raise KafkaDataLossError(
            "Some data may have been lost because they are not available in Kafka any more; "
            "either the data was aged out by Kafka or the topic may have been deleted before all "
            "the data in the topic was processed. If you don't want your query to fail on such "
            f"cases, set the option {option} to false. Reason: {reason}"
        )
    log.warning(
        "%s. Some data may have been lost because they are not available in Kafka any more; "
        'going on because the option "%s" is false.',
        reason,
        option,
    )


def deleted(tp: TopicPartition, position: int, earliest: int, until: int) -> str:
    return (
        f"Cannot fetch offset {position} (TopicPartition: {tp.topic}-{tp.partition}): the "
        f"earliest offset is now {earliest}, so records [{position}, {min(earliest, until)}) "
        "are gone (deleted by retention before they were read)"
    )


def truncated(tp: TopicPartition, position: int, latest: int, until: int) -> str:
    return (
        f"Cannot fetch offset {position} (TopicPartition: {tp.topic}-{tp.partition}): the log "
        f"ends at {latest}, so records [{position}, {until}) are gone (the log was truncated)"
    )


def gone(tp: TopicPartition, position: int, until: int) -> str:
    return (
        f"{tp.topic}-{tp.partition} no longer exists: records [{position}, {until}) cannot be "
        "read (the topic or partition was deleted)"
    )
