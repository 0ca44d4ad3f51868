"""ferrokafka: an asyncio Kafka client whose protocol hot path is Rust.

The public API follows aiokafka's: swap ``aiokafka`` for ``ferrokafka`` in imports.
"""

from .client import AIOKafkaClient
from .errors import ConsumerStoppedError, IllegalOperation
from .structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

__version__ = "0.1.0"

__all__ = [
    "AIOKafkaClient",
    "ConsumerRecord",
    "ConsumerStoppedError",
    "IllegalOperation",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "TopicPartition",
    "__version__",
]
