"""Share groups (KIP-932, "queues for Kafka"): members take records from the same partitions
cooperatively, each record under a time-limited lock, and acknowledge them one by one."""

from .acknowledgements import AcknowledgeType
from .consumer import AcknowledgementCommitFailedError, AIOKafkaShareConsumer

__all__ = ["AIOKafkaShareConsumer", "AcknowledgeType", "AcknowledgementCommitFailedError"]
