"""ferrokafka: an asyncio Kafka client whose protocol hot path is Rust.

The public API follows aiokafka's: swap ``aiokafka`` for ``ferrokafka`` in imports.
"""

from ._native import RecordFuture, __version__
from .abc import ConsumerRebalanceListener
from .client import AIOKafkaClient
from .consumer import AIOKafkaConsumer
from .errors import ConsumerStoppedError, IllegalOperation
from .producer import AIOKafkaProducer
from .share import AcknowledgeType, AIOKafkaShareConsumer
from .structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

__all__ = [
    "AIOKafkaClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "AIOKafkaShareConsumer",
    "AcknowledgeType",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerStoppedError",
    "IllegalOperation",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RecordFuture",
    "TopicPartition",
    "__version__",
]
