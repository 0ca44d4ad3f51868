//! ShareAcknowledge (key 79): a share group member acknowledges records it holds without
//! fetching more (KIP-932): on commit, and when it leaves its share session.
//!
//! Versions 1-2, flexible (Kafka 4.2). Version 2 adds `is_renew_ack` (the acknowledgements only
//! renew acquisition locks, KIP-1222) and the response's `acquisition_lock_timeout_ms`.
//! Acknowledgement batches are ShareFetch's.

use super::common::{AcknowledgementBatch, LeaderIdAndEpoch, NodeEndpoint};
use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct ShareAcknowledge;

impl Api for ShareAcknowledge {
    const NAME: &'static str = "ShareAcknowledge";
    const KEY: i16 = 79;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ShareAcknowledgeRequest;
    type Response = ShareAcknowledgeResponse;
}

kafka_struct! {
    pub struct AcknowledgePartition {
        partition_index: i32 [0, _],
        acknowledgement_batches: Vec<AcknowledgementBatch> [0, _],
    }
}

kafka_struct! {
    pub struct AcknowledgeTopic {
        topic_id: Uuid [0, _],
        partitions: Vec<AcknowledgePartition> [0, _],
    }
}

kafka_struct! {
    pub struct ShareAcknowledgeRequest {
        group_id: Option<String> [0, _],
        member_id: Option<String> [0, _],
        share_session_epoch: i32 [0, _],
        is_renew_ack: bool [2, _],
        topics: Vec<AcknowledgeTopic> [0, _],
    }
}

kafka_struct! {
    pub struct AcknowledgePartitionData {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        current_leader: LeaderIdAndEpoch [0, _],
    }
}

kafka_struct! {
    pub struct ShareAcknowledgeTopicResponse {
        topic_id: Uuid [0, _],
        partitions: Vec<AcknowledgePartitionData> [0, _],
    }
}

kafka_struct! {
    pub struct ShareAcknowledgeResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        acquisition_lock_timeout_ms: i32 [2, _],
        responses: Vec<ShareAcknowledgeTopicResponse> [0, _],
        node_endpoints: Vec<NodeEndpoint> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, code: i16) -> ShareAcknowledgeResponse {
        ShareAcknowledgeResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            acquisition_lock_timeout_ms: if v >= 2 { 30_000 } else { 0 },
            responses: vec![ShareAcknowledgeTopicResponse {
                topic_id: Uuid([7; 16]),
                partitions: vec![AcknowledgePartitionData {
                    partition_index: 0,
                    error_code: code,
                    error_message: (code != 0).then(|| "lock expired".into()),
                    current_leader: LeaderIdAndEpoch::default(),
                }],
            }],
            node_endpoints: Vec::new(),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=2,
            types in proptest::collection::vec(0i8..=4, 1..6),
            code in 0i16..100,
        ) {
            let request = ShareAcknowledgeRequest {
                group_id: Some("g".into()),
                member_id: Some("m".into()),
                share_session_epoch: 3,
                is_renew_ack: v >= 2 && types.contains(&4),
                topics: vec![AcknowledgeTopic {
                    topic_id: Uuid([7; 16]),
                    partitions: vec![AcknowledgePartition {
                        partition_index: 0,
                        acknowledgement_batches: vec![AcknowledgementBatch {
                            first_offset: 5,
                            last_offset: 4 + types.len() as i64,
                            acknowledge_types: types,
                        }],
                    }],
                }],
            };
            assert_round_trip::<ShareAcknowledge>(v, &request, &response(v, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=2 {
            assert_truncations_fail::<ShareAcknowledge>(v, &response(v, 0));
        }
    }
}
