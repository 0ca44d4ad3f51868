"""Error classes, compatible with aiokafka 0.14's ``aiokafka.errors`` (same names, bases, ``errno``,
``message``, ``retriable``, ``invalid_metadata`` and ``for_code``), plus one class for every
Kafka error code aiokafka lacks (Kafka 4.x knows codes up to 133).

The broker error classes, one per code, are generated from ``rust/protocol/error_codes.txt``
(the table the Rust ``ErrorCode`` enum is generated from too) by ``tools/gen_errors.py``; the
client-side classes above them and the subclasses below them are written here. Broker error
classes register themselves by ``errno`` when defined; a second class for the same code is
refused at import time, so the table cannot silently shadow an entry. ``for_code`` maps an
unknown code to ``UnknownError``.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AuthenticationFailedError",
    "AuthenticationMethodNotSupported",
    "BrokerResponseError",
    "Cancelled",
    "CommitFailedError",
    "ConsumerStoppedError",
    "CorrelationIdError",
    "FrameTooLargeError",
    "IllegalArgumentError",
    "IllegalOperation",
    "IllegalStateError",
    "IncompatibleBrokerVersion",
    "KafkaConfigurationError",
    "KafkaConnectionError",
    "KafkaError",
    "KafkaProtocolError",
    "KafkaTLSError",
    "KafkaTimeoutError",
    "KafkaUnavailableError",
    "MetadataEmptyBrokerList",
    "NoBrokersAvailable",
    "NoOffsetForPartitionError",
    "NodeNotReadyError",
    "PayloadFormatError",
    "PayloadSchemaError",
    "ProducerClosed",
    "ProducerFenced",
    "ProtocolDecodeError",
    "QuotaViolationError",
    "RecordTooLargeError",
    "StaleMetadata",
    "TooManyInFlightRequests",
    "UnrecognizedBrokerVersion",
    "UnsupportedCodecError",
    "for_code",
    "kafka_errors",
]

kafka_errors: dict[int, type[BrokerResponseError]] = {}
"""Broker error classes by Kafka error code."""


class KafkaError(RuntimeError):
    """Base of every ferrokafka error."""

    retriable: ClassVar[bool] = False
    invalid_metadata: ClassVar[bool] = False
    """Whether metadata should be refreshed after this error."""

    def __str__(self) -> str:
        if not self.args:
            return self.__class__.__name__
        return f"{self.__class__.__name__}: {super().__str__()}"


class IllegalStateError(KafkaError):
    pass


class IllegalArgumentError(KafkaError):
    pass


class NoBrokersAvailable(KafkaError):
    retriable = True
    invalid_metadata = True


class NodeNotReadyError(KafkaError):
    retriable = True


class KafkaProtocolError(KafkaError):
    retriable = True


class CorrelationIdError(KafkaProtocolError):
    retriable = True


class ProtocolDecodeError(KafkaProtocolError):
    """Bytes from the wire that cannot be decoded (a truncated, malformed or hostile frame)."""


class FrameTooLargeError(ProtocolDecodeError):
    """A frame whose size prefix exceeds the configured maximum (or is negative)."""


class Cancelled(KafkaError):
    retriable = True


class TooManyInFlightRequests(KafkaError):
    retriable = True


class StaleMetadata(KafkaError):
    retriable = True
    invalid_metadata = True


class MetadataEmptyBrokerList(KafkaError):
    retriable = True


class UnrecognizedBrokerVersion(KafkaError):
    pass


class IncompatibleBrokerVersion(KafkaError):
    pass


class CommitFailedError(KafkaError):
    """A commit for a generation the group has moved past."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # aiokafka's default message, unless the raiser says exactly what happened.
        super().__init__(
            *(
                args
                or (
                    "Commit cannot be completed since the group has already rebalanced and "
                    "assigned the partitions to another member. The time between subsequent "
                    "polls was longer than max_poll_interval_ms, so this member left the group. "
                    "Increase max_poll_interval_ms, or reduce max_poll_records so each batch "
                    "is processed sooner.",
                )
            ),
            **kwargs,
        )


class AuthenticationMethodNotSupported(KafkaError):
    pass


class AuthenticationFailedError(KafkaError):
    retriable = False


class KafkaUnavailableError(KafkaError):
    pass


class KafkaTimeoutError(KafkaError):
    pass


class KafkaConnectionError(KafkaError):
    retriable = True
    invalid_metadata = True


class KafkaTLSError(KafkaConnectionError):
    """The TLS handshake with a broker failed: its certificate did not verify (an unknown CA,
    a host name it does not name, expired) or it refused the client's. Retrying the same
    connection cannot help, so it is not retriable."""

    retriable = False


class UnsupportedCodecError(KafkaError):
    pass


class KafkaConfigurationError(KafkaError):
    pass


class QuotaViolationError(KafkaError):
    pass


class ConsumerStoppedError(Exception):
    """Raised by the consumer's get methods once it is stopped, pending calls included."""


class IllegalOperation(Exception):
    """Raised when an operation is not allowed in the consumer's current state."""


class NoOffsetForPartitionError(KafkaError):
    pass


class RecordTooLargeError(KafkaError):
    pass


class ProducerClosed(KafkaError):
    pass


class ProducerFenced(KafkaError):
    """Another producer with the same transactional id has fenced this one."""

    def __init__(self, msg: str = "") -> None:
        super().__init__(
            msg
            or "There is a newer producer using the same transactional_id, "
            "or the transaction timed out on the broker."
        )


class PayloadFormatError(KafkaError):
    """A record's key or value that its format (``value_format=``, ``key_format=``) cannot
    read, in ``FAILFAST`` mode: ``topic``, ``partition`` and ``offset`` name the record. The
    consumer's position is at it; records before it were handed out. Seek past it to go on,
    as after Java's ``RecordDeserializationException``."""

    def __init__(self, message: str, topic: str, partition: int, offset: int) -> None:
        super().__init__(message)
        self.topic = topic
        self.partition = partition
        self.offset = offset

    def __reduce__(self) -> Any:
        return (type(self), (self.args[0], self.topic, self.partition, self.offset))


class PayloadSchemaError(PayloadFormatError):
    """The writer schema of a Confluent-framed Avro record (``AvroFormat(confluent=True)``)
    that cannot be had or used, in any mode: its id is neither in ``schemas=`` nor known to the
    Schema Registry (404), the registry did not answer, or (with no ``reader_schema``) it gives
    another column than an earlier id of the same batch. ``schema_id`` is the id, ``topic``,
    ``partition`` and ``offset`` the first record that has it; the consumer's position is where
    it was before the read."""

    def __init__(
        self, message: str, topic: str, partition: int, offset: int, schema_id: int
    ) -> None:
        super().__init__(message, topic, partition, offset)
        self.schema_id = schema_id

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.args[0], self.topic, self.partition, self.offset, self.schema_id),
        )


class BrokerResponseError(KafkaError):
    """An error code returned by a broker. Subclasses register by ``errno``."""

    errno: ClassVar[int]
    message: ClassVar[str]
    description: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        errno = cls.__dict__.get("errno")
        if errno is None:
            return
        existing = kafka_errors.get(errno)
        if existing is not None:
            raise TypeError(f"{cls.__name__}: error code {errno} is already {existing.__name__}")
        kafka_errors[errno] = cls

    def __str__(self) -> str:
        return f"[Error {self.errno}] {super().__str__()}"


def for_code(error_code: int) -> type[BrokerResponseError]:
    """The class of a Kafka error code (``UnknownError`` for codes not known here)."""
    return kafka_errors.get(error_code, UnknownError)


# --- generated by tools/gen_errors.py from rust/protocol/error_codes.txt; do not edit ---
class UnknownError(BrokerResponseError):
    errno = -1
    message = "UNKNOWN"
    description = "Unknown server error."


class NoError(BrokerResponseError):
    errno = 0
    message = "NO_ERROR"
    description = "No error."


class OffsetOutOfRangeError(BrokerResponseError):
    errno = 1
    message = "OFFSET_OUT_OF_RANGE"
    description = "Offset out of range."


class CorruptRecordException(BrokerResponseError):
    errno = 2
    message = "CORRUPT_MESSAGE"
    description = "Corrupt message."


class UnknownTopicOrPartitionError(BrokerResponseError):
    errno = 3
    message = "UNKNOWN_TOPIC_OR_PARTITION"
    description = "Unknown topic or partition."
    retriable = True
    invalid_metadata = True


class InvalidFetchRequestError(BrokerResponseError):
    errno = 4
    message = "INVALID_FETCH_SIZE"
    description = "Invalid fetch size."


class LeaderNotAvailableError(BrokerResponseError):
    errno = 5
    message = "LEADER_NOT_AVAILABLE"
    description = "Leader not available."
    retriable = True
    invalid_metadata = True


class NotLeaderForPartitionError(BrokerResponseError):
    errno = 6
    message = "NOT_LEADER_FOR_PARTITION"
    description = "Not leader or follower."
    retriable = True
    invalid_metadata = True


class RequestTimedOutError(BrokerResponseError):
    errno = 7
    message = "REQUEST_TIMED_OUT"
    description = "Request timed out."
    retriable = True


class BrokerNotAvailableError(BrokerResponseError):
    errno = 8
    message = "BROKER_NOT_AVAILABLE"
    description = "Broker not available."


class ReplicaNotAvailableError(BrokerResponseError):
    errno = 9
    message = "REPLICA_NOT_AVAILABLE"
    description = "Replica not available."


class MessageSizeTooLargeError(BrokerResponseError):
    errno = 10
    message = "MESSAGE_SIZE_TOO_LARGE"
    description = "Message too large."


class StaleControllerEpochError(BrokerResponseError):
    errno = 11
    message = "STALE_CONTROLLER_EPOCH"
    description = "Stale controller epoch."


class OffsetMetadataTooLargeError(BrokerResponseError):
    errno = 12
    message = "OFFSET_METADATA_TOO_LARGE"
    description = "Offset metadata too large."


class StaleLeaderEpochCodeError(BrokerResponseError):
    errno = 13
    message = "STALE_LEADER_EPOCH_CODE"
    description = "Network exception."


class GroupLoadInProgressError(BrokerResponseError):
    errno = 14
    message = "COORDINATOR_LOAD_IN_PROGRESS"
    description = "Coordinator load in progress."
    retriable = True


class GroupCoordinatorNotAvailableError(BrokerResponseError):
    errno = 15
    message = "COORDINATOR_NOT_AVAILABLE"
    description = "Coordinator not available."
    retriable = True


class NotCoordinatorForGroupError(BrokerResponseError):
    errno = 16
    message = "NOT_COORDINATOR"
    description = "Not coordinator."
    retriable = True


class InvalidTopicError(BrokerResponseError):
    errno = 17
    message = "INVALID_TOPIC"
    description = "Invalid topic exception."


class RecordListTooLargeError(BrokerResponseError):
    errno = 18
    message = "RECORD_LIST_TOO_LARGE"
    description = "Record list too large."


class NotEnoughReplicasError(BrokerResponseError):
    errno = 19
    message = "NOT_ENOUGH_REPLICAS"
    description = "Not enough replicas."
    retriable = True


class NotEnoughReplicasAfterAppendError(BrokerResponseError):
    errno = 20
    message = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    description = "Not enough replicas after append."
    retriable = True


class InvalidRequiredAcksError(BrokerResponseError):
    errno = 21
    message = "INVALID_REQUIRED_ACKS"
    description = "Invalid required acks."


class IllegalGenerationError(BrokerResponseError):
    errno = 22
    message = "ILLEGAL_GENERATION"
    description = "Illegal generation."


class InconsistentGroupProtocolError(BrokerResponseError):
    errno = 23
    message = "INCONSISTENT_GROUP_PROTOCOL"
    description = "Inconsistent group protocol."


class InvalidGroupIdError(BrokerResponseError):
    errno = 24
    message = "INVALID_GROUP_ID"
    description = "Invalid group id."


class UnknownMemberIdError(BrokerResponseError):
    errno = 25
    message = "UNKNOWN_MEMBER_ID"
    description = "Unknown member id."


class InvalidSessionTimeoutError(BrokerResponseError):
    errno = 26
    message = "INVALID_SESSION_TIMEOUT"
    description = "Invalid session timeout."


class RebalanceInProgressError(BrokerResponseError):
    errno = 27
    message = "REBALANCE_IN_PROGRESS"
    description = "Rebalance in progress."


class InvalidCommitOffsetSizeError(BrokerResponseError):
    errno = 28
    message = "INVALID_COMMIT_OFFSET_SIZE"
    description = "Invalid commit offset size."


class TopicAuthorizationFailedError(BrokerResponseError):
    errno = 29
    message = "TOPIC_AUTHORIZATION_FAILED"
    description = "Topic authorization failed."


class GroupAuthorizationFailedError(BrokerResponseError):
    errno = 30
    message = "GROUP_AUTHORIZATION_FAILED"
    description = "Group authorization failed."


class ClusterAuthorizationFailedError(BrokerResponseError):
    errno = 31
    message = "CLUSTER_AUTHORIZATION_FAILED"
    description = "Cluster authorization failed."


class InvalidTimestampError(BrokerResponseError):
    errno = 32
    message = "INVALID_TIMESTAMP"
    description = "Invalid timestamp."


class UnsupportedSaslMechanismError(BrokerResponseError):
    errno = 33
    message = "UNSUPPORTED_SASL_MECHANISM"
    description = "Unsupported sasl mechanism."


class IllegalSaslStateError(BrokerResponseError):
    errno = 34
    message = "ILLEGAL_SASL_STATE"
    description = "Illegal sasl state."


class UnsupportedVersionError(BrokerResponseError):
    errno = 35
    message = "UNSUPPORTED_VERSION"
    description = "Unsupported version."


class TopicAlreadyExistsError(BrokerResponseError):
    errno = 36
    message = "TOPIC_ALREADY_EXISTS"
    description = "Topic already exists."


class InvalidPartitionsError(BrokerResponseError):
    errno = 37
    message = "INVALID_PARTITIONS"
    description = "Invalid partitions."


class InvalidReplicationFactorError(BrokerResponseError):
    errno = 38
    message = "INVALID_REPLICATION_FACTOR"
    description = "Invalid replication factor."


class InvalidReplicationAssignmentError(BrokerResponseError):
    errno = 39
    message = "INVALID_REPLICATION_ASSIGNMENT"
    description = "Invalid replica assignment."


class InvalidConfigurationError(BrokerResponseError):
    errno = 40
    message = "INVALID_CONFIG"
    description = "Invalid config."


class NotControllerError(BrokerResponseError):
    errno = 41
    message = "NOT_CONTROLLER"
    description = "Not controller."
    retriable = True


class InvalidRequestError(BrokerResponseError):
    errno = 42
    message = "INVALID_REQUEST"
    description = "Invalid request."


class UnsupportedForMessageFormatError(BrokerResponseError):
    errno = 43
    message = "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    description = "Unsupported for message format."


class PolicyViolationError(BrokerResponseError):
    errno = 44
    message = "POLICY_VIOLATION"
    description = "Policy violation."


class OutOfOrderSequenceNumber(BrokerResponseError):
    errno = 45
    message = "OUT_OF_ORDER_SEQUENCE_NUMBER"
    description = "Out of order sequence number."


class DuplicateSequenceNumber(BrokerResponseError):
    errno = 46
    message = "DUPLICATE_SEQUENCE_NUMBER"
    description = "Duplicate sequence number."


class InvalidProducerEpoch(BrokerResponseError):
    errno = 47
    message = "INVALID_PRODUCER_EPOCH"
    description = "Invalid producer epoch."


class InvalidTxnState(BrokerResponseError):
    errno = 48
    message = "INVALID_TXN_STATE"
    description = "Invalid txn state."


class InvalidProducerIdMapping(BrokerResponseError):
    errno = 49
    message = "INVALID_PRODUCER_ID_MAPPING"
    description = "Invalid producer id mapping."


class InvalidTransactionTimeout(BrokerResponseError):
    errno = 50
    message = "INVALID_TRANSACTION_TIMEOUT"
    description = "Invalid transaction timeout."


class ConcurrentTransactions(BrokerResponseError):
    errno = 51
    message = "CONCURRENT_TRANSACTIONS"
    description = "Concurrent transactions."


class TransactionCoordinatorFenced(BrokerResponseError):
    errno = 52
    message = "TRANSACTION_COORDINATOR_FENCED"
    description = "Transaction coordinator fenced."


class TransactionalIdAuthorizationFailed(BrokerResponseError):
    errno = 53
    message = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    description = "Transactional id authorization failed."


class SecurityDisabled(BrokerResponseError):
    errno = 54
    message = "SECURITY_DISABLED"
    description = "Security disabled."


class OperationNotAttempted(BrokerResponseError):
    errno = 55
    message = "OPERATION_NOT_ATTEMPTED"
    description = "Operation not attempted."


class KafkaStorageError(BrokerResponseError):
    errno = 56
    message = "KAFKA_STORAGE_ERROR"
    description = "Kafka storage error."
    retriable = True
    invalid_metadata = True


class LogDirNotFound(BrokerResponseError):
    errno = 57
    message = "LOG_DIR_NOT_FOUND"
    description = "Log dir not found."


class SaslAuthenticationFailed(BrokerResponseError):
    errno = 58
    message = "SASL_AUTHENTICATION_FAILED"
    description = "Sasl authentication failed."


class UnknownProducerId(BrokerResponseError):
    errno = 59
    message = "UNKNOWN_PRODUCER_ID"
    description = "Unknown producer id."


class ReassignmentInProgress(BrokerResponseError):
    errno = 60
    message = "REASSIGNMENT_IN_PROGRESS"
    description = "Reassignment in progress."


class DelegationTokenAuthDisabled(BrokerResponseError):
    errno = 61
    message = "DELEGATION_TOKEN_AUTH_DISABLED"
    description = "Delegation token auth disabled."


class DelegationTokenNotFound(BrokerResponseError):
    errno = 62
    message = "DELEGATION_TOKEN_NOT_FOUND"
    description = "Delegation token not found."


class DelegationTokenOwnerMismatch(BrokerResponseError):
    errno = 63
    message = "DELEGATION_TOKEN_OWNER_MISMATCH"
    description = "Delegation token owner mismatch."


class DelegationTokenRequestNotAllowed(BrokerResponseError):
    errno = 64
    message = "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"
    description = "Delegation token request not allowed."


class DelegationTokenAuthorizationFailed(BrokerResponseError):
    errno = 65
    message = "DELEGATION_TOKEN_AUTHORIZATION_FAILED"
    description = "Delegation token authorization failed."


class DelegationTokenExpired(BrokerResponseError):
    errno = 66
    message = "DELEGATION_TOKEN_EXPIRED"
    description = "Delegation token expired."


class InvalidPrincipalType(BrokerResponseError):
    errno = 67
    message = "INVALID_PRINCIPAL_TYPE"
    description = "Invalid principal type."


class NonEmptyGroup(BrokerResponseError):
    errno = 68
    message = "NON_EMPTY_GROUP"
    description = "Non empty group."


class GroupIdNotFound(BrokerResponseError):
    errno = 69
    message = "GROUP_ID_NOT_FOUND"
    description = "Group id not found."


class FetchSessionIdNotFound(BrokerResponseError):
    errno = 70
    message = "FETCH_SESSION_ID_NOT_FOUND"
    description = "Fetch session id not found."


class InvalidFetchSessionEpoch(BrokerResponseError):
    errno = 71
    message = "INVALID_FETCH_SESSION_EPOCH"
    description = "Invalid fetch session epoch."


class ListenerNotFound(BrokerResponseError):
    errno = 72
    message = "LISTENER_NOT_FOUND"
    description = "Listener not found."


class TopicDeletionDisabledError(BrokerResponseError):
    errno = 73
    message = "TOPIC_DELETION_DISABLED"
    description = "Topic deletion disabled."


class FencedLeaderEpochError(BrokerResponseError):
    errno = 74
    message = "FENCED_LEADER_EPOCH"
    description = "Fenced leader epoch."
    retriable = True
    invalid_metadata = True


class UnknownLeaderEpochError(BrokerResponseError):
    errno = 75
    message = "UNKNOWN_LEADER_EPOCH"
    description = "Unknown leader epoch."
    retriable = True


class UnsupportedCompressionTypeError(BrokerResponseError):
    errno = 76
    message = "UNSUPPORTED_COMPRESSION_TYPE"
    description = "Unsupported compression type."


class StaleBrokerEpochError(BrokerResponseError):
    errno = 77
    message = "STALE_BROKER_EPOCH"
    description = "Stale broker epoch."


class OffsetNotAvailableError(BrokerResponseError):
    errno = 78
    message = "OFFSET_NOT_AVAILABLE"
    description = "Offset not available."
    retriable = True


class MemberIdRequired(BrokerResponseError):
    errno = 79
    message = "MEMBER_ID_REQUIRED"
    description = "Member id required."


class PreferredLeaderNotAvailableError(BrokerResponseError):
    errno = 80
    message = "PREFERRED_LEADER_NOT_AVAILABLE"
    description = "Preferred leader not available."
    retriable = True
    invalid_metadata = True


class GroupMaxSizeReachedError(BrokerResponseError):
    errno = 81
    message = "GROUP_MAX_SIZE_REACHED"
    description = "Group max size reached."


class FencedInstanceIdError(BrokerResponseError):
    errno = 82
    message = "FENCED_INSTANCE_ID"
    description = "Fenced instance id."


class EligibleLeadersNotAvailableError(BrokerResponseError):
    errno = 83
    message = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    description = "Eligible leaders not available."
    retriable = True
    invalid_metadata = True


class ElectionNotNeededError(BrokerResponseError):
    errno = 84
    message = "ELECTION_NOT_NEEDED"
    description = "Election not needed."
    retriable = True
    invalid_metadata = True


class NoReassignmentInProgressError(BrokerResponseError):
    errno = 85
    message = "NO_REASSIGNMENT_IN_PROGRESS"
    description = "No reassignment in progress."


class GroupSubscribedToTopicError(BrokerResponseError):
    errno = 86
    message = "GROUP_SUBSCRIBED_TO_TOPIC"
    description = "Group subscribed to topic."


class InvalidRecordError(BrokerResponseError):
    errno = 87
    message = "INVALID_RECORD"
    description = "Invalid record."


class UnstableOffsetCommitError(BrokerResponseError):
    errno = 88
    message = "UNSTABLE_OFFSET_COMMIT"
    description = "Unstable offset commit."
    retriable = True


class ThrottlingQuotaExceededError(BrokerResponseError):
    errno = 89
    message = "THROTTLING_QUOTA_EXCEEDED"
    description = "Throttling quota exceeded."
    retriable = True


class ProducerFencedError(BrokerResponseError):
    errno = 90
    message = "PRODUCER_FENCED"
    description = "Producer fenced."


class ResourceNotFoundError(BrokerResponseError):
    errno = 91
    message = "RESOURCE_NOT_FOUND"
    description = "Resource not found."


class DuplicateResourceError(BrokerResponseError):
    errno = 92
    message = "DUPLICATE_RESOURCE"
    description = "Duplicate resource."


class UnacceptableCredentialError(BrokerResponseError):
    errno = 93
    message = "UNACCEPTABLE_CREDENTIAL"
    description = "Unacceptable credential."


class InconsistentVoterSetError(BrokerResponseError):
    errno = 94
    message = "INCONSISTENT_VOTER_SET"
    description = "Inconsistent voter set."


class InvalidUpdateVersionError(BrokerResponseError):
    errno = 95
    message = "INVALID_UPDATE_VERSION"
    description = "Invalid update version."


class FeatureUpdateFailedError(BrokerResponseError):
    errno = 96
    message = "FEATURE_UPDATE_FAILED"
    description = "Feature update failed."


class PrincipalDeserializationFailureError(BrokerResponseError):
    errno = 97
    message = "PRINCIPAL_DESERIALIZATION_FAILURE"
    description = "Principal deserialization failure."


class SnapshotNotFoundError(BrokerResponseError):
    errno = 98
    message = "SNAPSHOT_NOT_FOUND"
    description = "Snapshot not found."


class PositionOutOfRangeError(BrokerResponseError):
    errno = 99
    message = "POSITION_OUT_OF_RANGE"
    description = "Position out of range."


class UnknownTopicIdError(BrokerResponseError):
    errno = 100
    message = "UNKNOWN_TOPIC_ID"
    description = "Unknown topic id."
    retriable = True
    invalid_metadata = True


class DuplicateBrokerRegistrationError(BrokerResponseError):
    errno = 101
    message = "DUPLICATE_BROKER_REGISTRATION"
    description = "Duplicate broker registration."


class BrokerIdNotRegisteredError(BrokerResponseError):
    errno = 102
    message = "BROKER_ID_NOT_REGISTERED"
    description = "Broker id not registered."


class InconsistentTopicIdError(BrokerResponseError):
    errno = 103
    message = "INCONSISTENT_TOPIC_ID"
    description = "Inconsistent topic id."
    retriable = True
    invalid_metadata = True


class InconsistentClusterIdError(BrokerResponseError):
    errno = 104
    message = "INCONSISTENT_CLUSTER_ID"
    description = "Inconsistent cluster id."


class TransactionalIdNotFoundError(BrokerResponseError):
    errno = 105
    message = "TRANSACTIONAL_ID_NOT_FOUND"
    description = "Transactional id not found."


class FetchSessionTopicIdError(BrokerResponseError):
    errno = 106
    message = "FETCH_SESSION_TOPIC_ID_ERROR"
    description = "Fetch session topic id error."
    retriable = True


class IneligibleReplicaError(BrokerResponseError):
    errno = 107
    message = "INELIGIBLE_REPLICA"
    description = "Ineligible replica."


class NewLeaderElectedError(BrokerResponseError):
    errno = 108
    message = "NEW_LEADER_ELECTED"
    description = "New leader elected."


class OffsetMovedToTieredStorageError(BrokerResponseError):
    errno = 109
    message = "OFFSET_MOVED_TO_TIERED_STORAGE"
    description = "Offset moved to tiered storage."


class FencedMemberEpochError(BrokerResponseError):
    errno = 110
    message = "FENCED_MEMBER_EPOCH"
    description = "Fenced member epoch."


class UnreleasedInstanceIdError(BrokerResponseError):
    errno = 111
    message = "UNRELEASED_INSTANCE_ID"
    description = "Unreleased instance id."


class UnsupportedAssignorError(BrokerResponseError):
    errno = 112
    message = "UNSUPPORTED_ASSIGNOR"
    description = "Unsupported assignor."


class StaleMemberEpochError(BrokerResponseError):
    errno = 113
    message = "STALE_MEMBER_EPOCH"
    description = "Stale member epoch."


class MismatchedEndpointTypeError(BrokerResponseError):
    errno = 114
    message = "MISMATCHED_ENDPOINT_TYPE"
    description = "Mismatched endpoint type."


class UnsupportedEndpointTypeError(BrokerResponseError):
    errno = 115
    message = "UNSUPPORTED_ENDPOINT_TYPE"
    description = "Unsupported endpoint type."


class UnknownControllerIdError(BrokerResponseError):
    errno = 116
    message = "UNKNOWN_CONTROLLER_ID"
    description = "Unknown controller id."


class UnknownSubscriptionIdError(BrokerResponseError):
    errno = 117
    message = "UNKNOWN_SUBSCRIPTION_ID"
    description = "Unknown subscription id."


class TelemetryTooLargeError(BrokerResponseError):
    errno = 118
    message = "TELEMETRY_TOO_LARGE"
    description = "Telemetry too large."


class InvalidRegistrationError(BrokerResponseError):
    errno = 119
    message = "INVALID_REGISTRATION"
    description = "Invalid registration."


class TransactionAbortableError(BrokerResponseError):
    errno = 120
    message = "TRANSACTION_ABORTABLE"
    description = "Transaction abortable."


class InvalidRecordStateError(BrokerResponseError):
    errno = 121
    message = "INVALID_RECORD_STATE"
    description = "Invalid record state."


class ShareSessionNotFoundError(BrokerResponseError):
    errno = 122
    message = "SHARE_SESSION_NOT_FOUND"
    description = "Share session not found."
    retriable = True


class InvalidShareSessionEpochError(BrokerResponseError):
    errno = 123
    message = "INVALID_SHARE_SESSION_EPOCH"
    description = "Invalid share session epoch."
    retriable = True


class FencedStateEpochError(BrokerResponseError):
    errno = 124
    message = "FENCED_STATE_EPOCH"
    description = "Fenced state epoch."


class InvalidVoterKeyError(BrokerResponseError):
    errno = 125
    message = "INVALID_VOTER_KEY"
    description = "Invalid voter key."


class DuplicateVoterError(BrokerResponseError):
    errno = 126
    message = "DUPLICATE_VOTER"
    description = "Duplicate voter."


class VoterNotFoundError(BrokerResponseError):
    errno = 127
    message = "VOTER_NOT_FOUND"
    description = "Voter not found."


class InvalidRegularExpressionError(BrokerResponseError):
    errno = 128
    message = "INVALID_REGULAR_EXPRESSION"
    description = "Invalid regular expression."


class RebootstrapRequiredError(BrokerResponseError):
    errno = 129
    message = "REBOOTSTRAP_REQUIRED"
    description = "Rebootstrap required."


class StreamsInvalidTopologyError(BrokerResponseError):
    errno = 130
    message = "STREAMS_INVALID_TOPOLOGY"
    description = "Streams invalid topology."


class StreamsInvalidTopologyEpochError(BrokerResponseError):
    errno = 131
    message = "STREAMS_INVALID_TOPOLOGY_EPOCH"
    description = "Streams invalid topology epoch."


class StreamsTopologyFencedError(BrokerResponseError):
    errno = 132
    message = "STREAMS_TOPOLOGY_FENCED"
    description = "Streams topology fenced."


class ShareSessionLimitReachedError(BrokerResponseError):
    errno = 133
    message = "SHARE_SESSION_LIMIT_REACHED"
    description = "Share session limit reached."
    retriable = True


# aiokafka's second names for some codes (the same classes).
InvalidMessageError = CorruptRecordException
CoordinatorLoadInProgressError = GroupLoadInProgressError
CoordinatorNotAvailableError = GroupCoordinatorNotAvailableError
NotCoordinatorError = NotCoordinatorForGroupError

__all__ += [
    "BrokerIdNotRegisteredError",
    "BrokerNotAvailableError",
    "ClusterAuthorizationFailedError",
    "ConcurrentTransactions",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "CorruptRecordException",
    "DelegationTokenAuthDisabled",
    "DelegationTokenAuthorizationFailed",
    "DelegationTokenExpired",
    "DelegationTokenNotFound",
    "DelegationTokenOwnerMismatch",
    "DelegationTokenRequestNotAllowed",
    "DuplicateBrokerRegistrationError",
    "DuplicateResourceError",
    "DuplicateSequenceNumber",
    "DuplicateVoterError",
    "ElectionNotNeededError",
    "EligibleLeadersNotAvailableError",
    "FeatureUpdateFailedError",
    "FencedInstanceIdError",
    "FencedLeaderEpochError",
    "FencedMemberEpochError",
    "FencedStateEpochError",
    "FetchSessionIdNotFound",
    "FetchSessionTopicIdError",
    "GroupAuthorizationFailedError",
    "GroupCoordinatorNotAvailableError",
    "GroupIdNotFound",
    "GroupLoadInProgressError",
    "GroupMaxSizeReachedError",
    "GroupSubscribedToTopicError",
    "IllegalGenerationError",
    "IllegalSaslStateError",
    "InconsistentClusterIdError",
    "InconsistentGroupProtocolError",
    "InconsistentTopicIdError",
    "InconsistentVoterSetError",
    "IneligibleReplicaError",
    "InvalidCommitOffsetSizeError",
    "InvalidConfigurationError",
    "InvalidFetchRequestError",
    "InvalidFetchSessionEpoch",
    "InvalidGroupIdError",
    "InvalidMessageError",
    "InvalidPartitionsError",
    "InvalidPrincipalType",
    "InvalidProducerEpoch",
    "InvalidProducerIdMapping",
    "InvalidRecordError",
    "InvalidRecordStateError",
    "InvalidRegistrationError",
    "InvalidRegularExpressionError",
    "InvalidReplicationAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidRequiredAcksError",
    "InvalidSessionTimeoutError",
    "InvalidShareSessionEpochError",
    "InvalidTimestampError",
    "InvalidTopicError",
    "InvalidTransactionTimeout",
    "InvalidTxnState",
    "InvalidUpdateVersionError",
    "InvalidVoterKeyError",
    "KafkaStorageError",
    "LeaderNotAvailableError",
    "ListenerNotFound",
    "LogDirNotFound",
    "MemberIdRequired",
    "MessageSizeTooLargeError",
    "MismatchedEndpointTypeError",
    "NewLeaderElectedError",
    "NoError",
    "NoReassignmentInProgressError",
    "NonEmptyGroup",
    "NotControllerError",
    "NotCoordinatorError",
    "NotCoordinatorForGroupError",
    "NotEnoughReplicasAfterAppendError",
    "NotEnoughReplicasError",
    "NotLeaderForPartitionError",
    "OffsetMetadataTooLargeError",
    "OffsetMovedToTieredStorageError",
    "OffsetNotAvailableError",
    "OffsetOutOfRangeError",
    "OperationNotAttempted",
    "OutOfOrderSequenceNumber",
    "PolicyViolationError",
    "PositionOutOfRangeError",
    "PreferredLeaderNotAvailableError",
    "PrincipalDeserializationFailureError",
    "ProducerFencedError",
    "ReassignmentInProgress",
    "RebalanceInProgressError",
    "RebootstrapRequiredError",
    "RecordListTooLargeError",
    "ReplicaNotAvailableError",
    "RequestTimedOutError",
    "ResourceNotFoundError",
    "SaslAuthenticationFailed",
    "SecurityDisabled",
    "ShareSessionLimitReachedError",
    "ShareSessionNotFoundError",
    "SnapshotNotFoundError",
    "StaleBrokerEpochError",
    "StaleControllerEpochError",
    "StaleLeaderEpochCodeError",
    "StaleMemberEpochError",
    "StreamsInvalidTopologyEpochError",
    "StreamsInvalidTopologyError",
    "StreamsTopologyFencedError",
    "TelemetryTooLargeError",
    "ThrottlingQuotaExceededError",
    "TopicAlreadyExistsError",
    "TopicAuthorizationFailedError",
    "TopicDeletionDisabledError",
    "TransactionAbortableError",
    "TransactionCoordinatorFenced",
    "TransactionalIdAuthorizationFailed",
    "TransactionalIdNotFoundError",
    "UnacceptableCredentialError",
    "UnknownControllerIdError",
    "UnknownError",
    "UnknownLeaderEpochError",
    "UnknownMemberIdError",
    "UnknownProducerId",
    "UnknownSubscriptionIdError",
    "UnknownTopicIdError",
    "UnknownTopicOrPartitionError",
    "UnreleasedInstanceIdError",
    "UnstableOffsetCommitError",
    "UnsupportedAssignorError",
    "UnsupportedCompressionTypeError",
    "UnsupportedEndpointTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedSaslMechanismError",
    "UnsupportedVersionError",
    "VoterNotFoundError",
]
# --- end of generated code ---


class LogTruncationError(OffsetOutOfRangeError):
    """The leader's log was truncated below the consumed position (KIP-320, an unclean leader
    election): records the application consumed may no longer exist. Raised only with
    ``auto_offset_reset="none"``; ``divergent_offsets`` maps each partition to the first offset
    known to diverge."""

    def __init__(self, message: str = "", divergent_offsets: dict[Any, int] | None = None) -> None:
        super().__init__(message)
        self.divergent_offsets = dict(divergent_offsets or {})
