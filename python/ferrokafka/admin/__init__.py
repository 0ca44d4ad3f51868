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
from .features import FeatureMetadata, FeatureUpdate, FeatureUpgradeType, VersionRange
from .log_dirs import LogDirDescription, ReplicaInfo, TopicPartitionReplica
from .new_partitions import NewPartitions
from .new_topic import NewTopic
from .offsets import ListOffsetsResultInfo, OffsetSpec
from .quota_types import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ClientQuotaFilterComponent,
    QuotaMatchType,
)
from .reassignments import ElectionType, PartitionReassignment
from .records_to_delete import RecordsToDelete
from .scram import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from .topic_descriptions import TopicDescription, TopicPartitionInfo
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
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClientQuotaFilterComponent",
    "ClusterDescription",
    "ConfigResource",
    "ConfigResourceType",
    "ElectionType",
    "FeatureMetadata",
    "FeatureUpdate",
    "FeatureUpgradeType",
    "ListOffsetsResultInfo",
    "LogDirDescription",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "PartitionReassignment",
    "ProducerIdAndEpoch",
    "ProducerState",
    "QuotaMatchType",
    "RecordsToDelete",
    "ReplicaInfo",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "ScramCredentialInfo",
    "ScramMechanism",
    "TopicDescription",
    "TopicPartitionInfo",
    "TopicPartitionReplica",
    "TransactionDescription",
    "TransactionListing",
    "TransactionState",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "VersionRange",
]
