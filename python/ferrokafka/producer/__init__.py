"""The producer: ``AIOKafkaProducer`` (aiokafka 0.14's API) and its ``BatchBuilder``;
``ArrowBatchResult`` is what ``send_arrow`` reports per batch."""

from .arrow import ArrowBatchResult
from .message_accumulator import BatchBuilder, BatchRecordMetadata
from .producer import AIOKafkaProducer

__all__ = ["AIOKafkaProducer", "ArrowBatchResult", "BatchBuilder", "BatchRecordMetadata"]
