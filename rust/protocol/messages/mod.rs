//! Kafka APIs, one per file. Each file declares its API (key, supported version range, first
//! flexible version) and the request/response structs; this module frames them with headers.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::codec::{Reader, Version, Wire};
use super::error::{DecodeError, Result};
use super::header::{read_response_header, write_response_header, RequestHeader};

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_client_quotas;
pub mod alter_configs;
pub mod alter_partition_reassignments;
pub mod alter_replica_log_dirs;
pub mod alter_share_group_offsets;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod common;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_share_group_offsets;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_client_quotas;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_share_group_offsets;
pub mod describe_topic_partitions;
pub mod describe_transactions;
pub mod describe_user_scram_credentials;
pub mod elect_leaders;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_groups;
pub mod list_offsets;
pub mod list_partition_reassignments;
pub mod list_transactions;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod share_acknowledge;
pub mod share_fetch;
pub mod share_group_describe;
pub mod share_group_heartbeat;
pub mod sync_group;
pub mod txn_offset_commit;
pub mod update_features;
pub mod write_txn_markers;

#[cfg(test)]
mod golden;

/// One Kafka API: its key, the versions ferrokafka speaks, and its message types.
pub trait Api {
    const NAME: &'static str;
    const KEY: i16;
    /// The lowest version ferrokafka can encode and decode.
    const MIN_VERSION: i16;
    /// The highest version ferrokafka can encode and decode.
    const MAX_VERSION: i16;
    /// The first version using compact forms and tagged fields (`i16::MAX` when none does).
    const FIRST_FLEXIBLE: i16;

    type Request: Wire + Serialize + DeserializeOwned + Default + Debug + Clone + PartialEq;
    type Response: Wire + Serialize + DeserializeOwned + Default + Debug + Clone + PartialEq;

    /// The layout of `version`, or an error when ferrokafka does not speak it.
    fn layout(version: i16) -> Result<Version> {
        if version < Self::MIN_VERSION || version > Self::MAX_VERSION {
            return Err(DecodeError::UnsupportedVersion {
                api: Self::NAME,
                version,
                min: Self::MIN_VERSION,
                max: Self::MAX_VERSION,
            });
        }
        Ok(Version::new(version, version >= Self::FIRST_FLEXIBLE))
    }

    /// Whether the response header at `version` is v1 (tagged fields).
    fn flexible_response_header(version: i16) -> bool {
        version >= Self::FIRST_FLEXIBLE
    }

    /// Make a decoded response independent of the `frame` it was read from: a field the
    /// decoder leaves in the frame (the records of a Fetch or ShareFetch response, see
    /// [`fetch::decode_in_frame`]) is copied out. Nothing to do for every other API.
    fn detach(_response: &mut Self::Response, _frame: &[u8]) {}
}

/// Encode a complete request frame: size prefix, header, body.
pub fn encode_request<A: Api>(
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    request: &A::Request,
) -> Result<Vec<u8>> {
    let layout = A::layout(version)?;
    let mut out = vec![0u8; 4];
    RequestHeader {
        api_key: A::KEY,
        api_version: version,
        correlation_id,
        client_id: client_id.map(str::to_owned),
    }
    .write(&mut out, layout.flexible);
    request.write(&mut out, layout);
    finish_frame(out)
}

/// Decode a request body that follows an already-read fixed header (used by fake brokers in
/// tests and by golden-byte checks).
pub fn decode_request_body<A: Api>(r: &mut Reader<'_>, version: i16) -> Result<A::Request> {
    let layout = A::layout(version)?;
    if layout.flexible {
        RequestHeader::read_tagged(r)?;
    }
    let request = A::Request::read(r, layout).map_err(|e| e.in_field(A::NAME))?;
    r.finish(A::NAME)?;
    Ok(request)
}

/// Encode a complete response frame: size prefix, header, body.
pub fn encode_response<A: Api>(
    version: i16,
    correlation_id: i32,
    response: &A::Response,
) -> Result<Vec<u8>> {
    let layout = A::layout(version)?;
    let mut out = vec![0u8; 4];
    write_response_header(
        &mut out,
        correlation_id,
        A::flexible_response_header(version),
    );
    response.write(&mut out, layout);
    finish_frame(out)
}

/// Decode a response frame (without its size prefix): the correlation id and the body, which
/// owns its values (see [`Api::detach`]).
pub fn decode_response<A: Api>(version: i16, frame: &[u8]) -> Result<(i32, A::Response)> {
    let (correlation_id, mut response) = read_response::<A>(version, frame)?;
    A::detach(&mut response, frame);
    Ok((correlation_id, response))
}

/// A response frame read as its fields' wire types read it, fields left in the frame included.
fn read_response<A: Api>(version: i16, frame: &[u8]) -> Result<(i32, A::Response)> {
    let layout = A::layout(version)?;
    let mut r = Reader::new(frame);
    let correlation_id = read_response_header(&mut r, A::flexible_response_header(version))?;
    let response = A::Response::read(&mut r, layout).map_err(|e| e.in_field(A::NAME))?;
    r.finish(A::NAME)?;
    Ok((correlation_id, response))
}

fn finish_frame(mut out: Vec<u8>) -> Result<Vec<u8>> {
    let size = frame_size(out.len() - 4)?;
    out[..4].copy_from_slice(&size.to_be_bytes());
    Ok(out)
}

/// A frame's size prefix for `len` bytes after it.
fn frame_size(len: usize) -> Result<i32> {
    i32::try_from(len).map_err(|_| DecodeError::Unencodable {
        what: "frame",
        reason: format!("{len} bytes exceed the int32 size prefix"),
    })
}

/// A row of the supported-API table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    pub name: &'static str,
    pub key: i16,
    pub min_version: i16,
    pub max_version: i16,
    pub first_flexible: i16,
}

/// Run `$body` with the type alias `$A` bound to the API whose key is `$key`, or evaluate
/// `$fallback` for a key ferrokafka does not speak. The one list of supported APIs.
#[macro_export]
macro_rules! with_api {
    ($key:expr, $A:ident => $body:expr, else $fallback:expr) => {{
        use $crate::protocol::messages::Api as _;
        use $crate::protocol::messages::*;
        match $key {
            k if k == produce::Produce::KEY => {
                type $A = produce::Produce;
                $body
            }
            k if k == fetch::Fetch::KEY => {
                type $A = fetch::Fetch;
                $body
            }
            k if k == list_offsets::ListOffsets::KEY => {
                type $A = list_offsets::ListOffsets;
                $body
            }
            k if k == metadata::Metadata::KEY => {
                type $A = metadata::Metadata;
                $body
            }
            k if k == find_coordinator::FindCoordinator::KEY => {
                type $A = find_coordinator::FindCoordinator;
                $body
            }
            k if k == create_topics::CreateTopics::KEY => {
                type $A = create_topics::CreateTopics;
                $body
            }
            k if k == delete_topics::DeleteTopics::KEY => {
                type $A = delete_topics::DeleteTopics;
                $body
            }
            k if k == sasl_handshake::SaslHandshake::KEY => {
                type $A = sasl_handshake::SaslHandshake;
                $body
            }
            k if k == api_versions::ApiVersions::KEY => {
                type $A = api_versions::ApiVersions;
                $body
            }
            k if k == offset_commit::OffsetCommit::KEY => {
                type $A = offset_commit::OffsetCommit;
                $body
            }
            k if k == offset_fetch::OffsetFetch::KEY => {
                type $A = offset_fetch::OffsetFetch;
                $body
            }
            k if k == join_group::JoinGroup::KEY => {
                type $A = join_group::JoinGroup;
                $body
            }
            k if k == heartbeat::Heartbeat::KEY => {
                type $A = heartbeat::Heartbeat;
                $body
            }
            k if k == leave_group::LeaveGroup::KEY => {
                type $A = leave_group::LeaveGroup;
                $body
            }
            k if k == sync_group::SyncGroup::KEY => {
                type $A = sync_group::SyncGroup;
                $body
            }
            k if k == describe_groups::DescribeGroups::KEY => {
                type $A = describe_groups::DescribeGroups;
                $body
            }
            k if k == list_groups::ListGroups::KEY => {
                type $A = list_groups::ListGroups;
                $body
            }
            k if k == delete_records::DeleteRecords::KEY => {
                type $A = delete_records::DeleteRecords;
                $body
            }
            k if k == init_producer_id::InitProducerId::KEY => {
                type $A = init_producer_id::InitProducerId;
                $body
            }
            k if k == add_partitions_to_txn::AddPartitionsToTxn::KEY => {
                type $A = add_partitions_to_txn::AddPartitionsToTxn;
                $body
            }
            k if k == add_offsets_to_txn::AddOffsetsToTxn::KEY => {
                type $A = add_offsets_to_txn::AddOffsetsToTxn;
                $body
            }
            k if k == end_txn::EndTxn::KEY => {
                type $A = end_txn::EndTxn;
                $body
            }
            k if k == write_txn_markers::WriteTxnMarkers::KEY => {
                type $A = write_txn_markers::WriteTxnMarkers;
                $body
            }
            k if k == txn_offset_commit::TxnOffsetCommit::KEY => {
                type $A = txn_offset_commit::TxnOffsetCommit;
                $body
            }
            k if k == offset_for_leader_epoch::OffsetForLeaderEpoch::KEY => {
                type $A = offset_for_leader_epoch::OffsetForLeaderEpoch;
                $body
            }
            k if k == describe_acls::DescribeAcls::KEY => {
                type $A = describe_acls::DescribeAcls;
                $body
            }
            k if k == create_acls::CreateAcls::KEY => {
                type $A = create_acls::CreateAcls;
                $body
            }
            k if k == delete_acls::DeleteAcls::KEY => {
                type $A = delete_acls::DeleteAcls;
                $body
            }
            k if k == describe_configs::DescribeConfigs::KEY => {
                type $A = describe_configs::DescribeConfigs;
                $body
            }
            k if k == alter_configs::AlterConfigs::KEY => {
                type $A = alter_configs::AlterConfigs;
                $body
            }
            k if k == alter_replica_log_dirs::AlterReplicaLogDirs::KEY => {
                type $A = alter_replica_log_dirs::AlterReplicaLogDirs;
                $body
            }
            k if k == describe_log_dirs::DescribeLogDirs::KEY => {
                type $A = describe_log_dirs::DescribeLogDirs;
                $body
            }
            k if k == sasl_authenticate::SaslAuthenticate::KEY => {
                type $A = sasl_authenticate::SaslAuthenticate;
                $body
            }
            k if k == create_partitions::CreatePartitions::KEY => {
                type $A = create_partitions::CreatePartitions;
                $body
            }
            k if k == delete_groups::DeleteGroups::KEY => {
                type $A = delete_groups::DeleteGroups;
                $body
            }
            k if k == elect_leaders::ElectLeaders::KEY => {
                type $A = elect_leaders::ElectLeaders;
                $body
            }
            k if k == incremental_alter_configs::IncrementalAlterConfigs::KEY => {
                type $A = incremental_alter_configs::IncrementalAlterConfigs;
                $body
            }
            k if k == alter_partition_reassignments::AlterPartitionReassignments::KEY => {
                type $A = alter_partition_reassignments::AlterPartitionReassignments;
                $body
            }
            k if k == list_partition_reassignments::ListPartitionReassignments::KEY => {
                type $A = list_partition_reassignments::ListPartitionReassignments;
                $body
            }
            k if k == offset_delete::OffsetDelete::KEY => {
                type $A = offset_delete::OffsetDelete;
                $body
            }
            k if k == describe_client_quotas::DescribeClientQuotas::KEY => {
                type $A = describe_client_quotas::DescribeClientQuotas;
                $body
            }
            k if k == alter_client_quotas::AlterClientQuotas::KEY => {
                type $A = alter_client_quotas::AlterClientQuotas;
                $body
            }
            k if k == describe_user_scram_credentials::DescribeUserScramCredentials::KEY => {
                type $A = describe_user_scram_credentials::DescribeUserScramCredentials;
                $body
            }
            k if k == alter_user_scram_credentials::AlterUserScramCredentials::KEY => {
                type $A = alter_user_scram_credentials::AlterUserScramCredentials;
                $body
            }
            k if k == update_features::UpdateFeatures::KEY => {
                type $A = update_features::UpdateFeatures;
                $body
            }
            k if k == describe_cluster::DescribeCluster::KEY => {
                type $A = describe_cluster::DescribeCluster;
                $body
            }
            k if k == describe_producers::DescribeProducers::KEY => {
                type $A = describe_producers::DescribeProducers;
                $body
            }
            k if k == describe_transactions::DescribeTransactions::KEY => {
                type $A = describe_transactions::DescribeTransactions;
                $body
            }
            k if k == list_transactions::ListTransactions::KEY => {
                type $A = list_transactions::ListTransactions;
                $body
            }
            k if k == consumer_group_heartbeat::ConsumerGroupHeartbeat::KEY => {
                type $A = consumer_group_heartbeat::ConsumerGroupHeartbeat;
                $body
            }
            k if k == consumer_group_describe::ConsumerGroupDescribe::KEY => {
                type $A = consumer_group_describe::ConsumerGroupDescribe;
                $body
            }
            k if k == describe_topic_partitions::DescribeTopicPartitions::KEY => {
                type $A = describe_topic_partitions::DescribeTopicPartitions;
                $body
            }
            k if k == share_group_heartbeat::ShareGroupHeartbeat::KEY => {
                type $A = share_group_heartbeat::ShareGroupHeartbeat;
                $body
            }
            k if k == share_fetch::ShareFetch::KEY => {
                type $A = share_fetch::ShareFetch;
                $body
            }
            k if k == share_acknowledge::ShareAcknowledge::KEY => {
                type $A = share_acknowledge::ShareAcknowledge;
                $body
            }
            k if k == share_group_describe::ShareGroupDescribe::KEY => {
                type $A = share_group_describe::ShareGroupDescribe;
                $body
            }
            k if k == describe_share_group_offsets::DescribeShareGroupOffsets::KEY => {
                type $A = describe_share_group_offsets::DescribeShareGroupOffsets;
                $body
            }
            k if k == alter_share_group_offsets::AlterShareGroupOffsets::KEY => {
                type $A = alter_share_group_offsets::AlterShareGroupOffsets;
                $body
            }
            k if k == delete_share_group_offsets::DeleteShareGroupOffsets::KEY => {
                type $A = delete_share_group_offsets::DeleteShareGroupOffsets;
                $body
            }
            _ => $fallback,
        }
    }};
}

fn info<A: Api>() -> ApiInfo {
    ApiInfo {
        name: A::NAME,
        key: A::KEY,
        min_version: A::MIN_VERSION,
        max_version: A::MAX_VERSION,
        first_flexible: A::FIRST_FLEXIBLE,
    }
}

/// Every API ferrokafka speaks, by key.
pub fn supported_apis() -> Vec<ApiInfo> {
    (0..100)
        .filter_map(|key: i16| with_api!(key, A => Some(info::<A>()), else None))
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    //! Shared checks for the per-API test modules.
    use super::*;

    /// Encode -> frame -> decode must be the identity for requests and responses.
    pub fn assert_round_trip<A: Api>(version: i16, request: &A::Request, response: &A::Response) {
        let frame = encode_request::<A>(version, 11, Some("ferrokafka"), request).unwrap();
        let mut r = Reader::new(&frame[4..]);
        let header = RequestHeader::read_fixed(&mut r).unwrap();
        assert_eq!(
            (header.api_key, header.api_version, header.correlation_id),
            (A::KEY, version, 11)
        );
        let back = decode_request_body::<A>(&mut r, version).unwrap();
        assert_eq!(&back, request, "{} v{version} request", A::NAME);

        let frame = encode_response::<A>(version, 12, response).unwrap();
        let (corr, back) = decode_response::<A>(version, &frame[4..]).unwrap();
        assert_eq!(corr, 12);
        assert_eq!(&back, response, "{} v{version} response", A::NAME);
    }

    /// Every strict prefix of an encoded response must fail to decode, never panic.
    pub fn assert_truncations_fail<A: Api>(version: i16, response: &A::Response) {
        let frame = encode_response::<A>(version, 1, response).unwrap();
        let body = &frame[4..];
        for cut in 0..body.len() {
            assert!(
                decode_response::<A>(version, &body[..cut]).is_err(),
                "{} v{version}: a {cut}-byte prefix decoded",
                A::NAME
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_table_lists_each_api_once() {
        let apis = supported_apis();
        let keys: Vec<i16> = apis.iter().map(|a| a.key).collect();
        assert_eq!(
            keys,
            vec![
                0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 42, 43, 44, 45, 46, 47, 48, 49, 50,
                51, 57, 60, 61, 65, 66, 68, 69, 75, 76, 77, 78, 79, 90, 91, 92
            ]
        );
        for a in apis {
            assert!(a.min_version <= a.max_version, "{}", a.name);
        }
    }

    #[test]
    fn unsupported_version_is_a_typed_error() {
        let err = encode_request::<api_versions::ApiVersions>(99, 1, None, &Default::default())
            .unwrap_err();
        assert!(matches!(
            err,
            DecodeError::UnsupportedVersion { version: 99, .. }
        ));
    }
}
