"""The producer: ``AIOKafkaProducer`` (aiokafka 0.14's API) and its ``BatchBuilder``."""

from .message_accumulator import BatchBuilder, BatchRecordMetadata
from .producer import AIOKafkaProducer

__all__ = ["AIOKafkaProducer", "BatchBuilder", "BatchRecordMetadata"]
