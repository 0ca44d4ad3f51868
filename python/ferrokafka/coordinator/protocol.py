"""aiokafka's import path of ``ferrokafka.consumer.group.subscription``."""

from ..consumer.group.subscription import (
    CONSUMER_PROTOCOL_HIGHEST_VERSION,
    ConsumerProtocol,
    ConsumerProtocolDecodeError,
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

__all__ = [
    "CONSUMER_PROTOCOL_HIGHEST_VERSION",
    "ConsumerProtocol",
    "ConsumerProtocolDecodeError",
    "ConsumerProtocolMemberAssignment",
    "ConsumerProtocolMemberMetadata",
]
