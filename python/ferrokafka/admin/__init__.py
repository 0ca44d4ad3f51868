"""The admin client (aiokafka's ``aiokafka.admin`` names)."""

from .acl_resource import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from .alter_config_op import AlterConfigOp, AlterConfigOpType
from .client import AIOKafkaAdminClient
from .cluster import ClusterDescription
from .config_resource import ConfigResource, ConfigResourceType
from .log_dirs import LogDirDescription, ReplicaInfo, TopicPartitionReplica
from .new_partitions import NewPartitions
from .new_topic import NewTopic
from .offsets import ListOffsetsResultInfo, OffsetSpec
from .reassignments import ElectionType, PartitionReassignment
from .records_to_delete import RecordsToDelete
from .transaction_types import (
    AbortTransactionSpec,
    ProducerIdAndEpoch,
    ProducerState,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)

__all__ = [
    "ACL",
    "ACLFilter",
    "ACLOperation",
    "ACLPermissionType",
    "ACLResourcePatternType",
    "AIOKafkaAdminClient",
    "AbortTransactionSpec",
    "AlterConfigOp",
    "AlterConfigOpType",
    "ClusterDescription",
    "ConfigResource",
    "ConfigResourceType",
    "ElectionType",
    "ListOffsetsResultInfo",
    "LogDirDescription",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "PartitionReassignment",
    "ProducerIdAndEpoch",
    "ProducerState",
    "RecordsToDelete",
    "ReplicaInfo",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "TopicPartitionReplica",
    "TransactionDescription",
    "TransactionListing",
    "TransactionState",
]
