"""The admin client (aiokafka's ``aiokafka.admin`` names)."""

from .client import AIOKafkaAdminClient
from .config_resource import ConfigResource, ConfigResourceType
from .new_partitions import NewPartitions
from .new_topic import NewTopic
from .records_to_delete import RecordsToDelete

__all__ = [
    "AIOKafkaAdminClient",
    "ConfigResource",
    "ConfigResourceType",
    "NewPartitions",
    "NewTopic",
    "RecordsToDelete",
]
