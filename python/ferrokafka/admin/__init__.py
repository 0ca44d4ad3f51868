"""The admin client (aiokafka's ``aiokafka.admin`` names)."""

from .client import AIOKafkaAdminClient
from .new_topic import NewTopic

__all__ = ["AIOKafkaAdminClient", "NewTopic"]
