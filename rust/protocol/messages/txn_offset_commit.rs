//! TxnOffsetCommit (key 28): a transactional producer commits a consumer group's offsets as
//! part of its transaction, at the group's coordinator.
//!
//! Versions 0-5: 1 same as 0; 2 committed leader epoch; 3 flexible, with the member's
//! generation, member id and group instance id (KIP-447); 4 TRANSACTION_ABORTABLE; 5 transaction
//! version 2 (KIP-890 part 2): the coordinator adds the group's offsets partition to the
//! transaction itself, where version 4 and older need an AddOffsetsToTxn first.

use super::Api;
use crate::kafka_struct;

pub struct TxnOffsetCommit;

impl Api for TxnOffsetCommit {
    const NAME: &'static str = "TxnOffsetCommit";
    const KEY: i16 = 28;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = TxnOffsetCommitRequest;
    type Response = TxnOffsetCommitResponse;
}

kafka_struct! {
    pub struct TxnOffsetCommitRequestPartition {
        partition_index: i32 [0, _],
        committed_offset: i64 [0, _],
        committed_leader_epoch: i32 [2, _] = -1,
        committed_metadata: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct TxnOffsetCommitRequestTopic {
        name: String [0, _],
        partitions: Vec<TxnOffsetCommitRequestPartition> [0, _],
    }
}

kafka_struct! {
    pub struct TxnOffsetCommitRequest {
        transactional_id: String [0, _],
        group_id: String [0, _],
        producer_id: i64 [0, _],
        producer_epoch: i16 [0, _],
        generation_id: i32 [3, _] = -1,
        member_id: String [3, _],
        group_instance_id: Option<String> [3, _],
        topics: Vec<TxnOffsetCommitRequestTopic> [0, _],
    }
}

kafka_struct! {
    pub struct TxnOffsetCommitResponsePartition {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct TxnOffsetCommitResponseTopic {
        name: String [0, _],
        partitions: Vec<TxnOffsetCommitResponsePartition> [0, _],
    }
}

kafka_struct! {
    pub struct TxnOffsetCommitResponse {
        throttle_time_ms: i32 [0, _],
        topics: Vec<TxnOffsetCommitResponseTopic> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(v: i16, offset: i64, metadata: Option<String>) -> TxnOffsetCommitRequest {
        TxnOffsetCommitRequest {
            transactional_id: "tx".into(),
            group_id: "g".into(),
            producer_id: 7,
            producer_epoch: 1,
            generation_id: if v >= 3 { 5 } else { -1 },
            member_id: if v >= 3 { "m".into() } else { String::new() },
            group_instance_id: None,
            topics: vec![TxnOffsetCommitRequestTopic {
                name: "t".into(),
                partitions: vec![TxnOffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: offset,
                    committed_leader_epoch: if v >= 2 { 3 } else { -1 },
                    committed_metadata: metadata,
                }],
            }],
        }
    }

    fn response(code: i16) -> TxnOffsetCommitResponse {
        TxnOffsetCommitResponse {
            throttle_time_ms: 0,
            topics: vec![TxnOffsetCommitResponseTopic {
                name: "t".into(),
                partitions: vec![TxnOffsetCommitResponsePartition {
                    partition_index: 0,
                    error_code: code,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=5,
            offset: i64,
            metadata in proptest::option::of("[a-z]{0,8}"),
            code: i16,
        ) {
            assert_round_trip::<TxnOffsetCommit>(v, &request(v, offset, metadata), &response(code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=5 {
            assert_truncations_fail::<TxnOffsetCommit>(v, &response(22));
        }
    }

    #[test]
    fn request_bytes() {
        // v0: "tx", "g", id 7, epoch 1, [ "t", [ 0, offset 9, metadata "" ] ].
        let frame =
            encode_request::<TxnOffsetCommit>(0, 0, None, &request(0, 9, Some(String::new())))
                .unwrap();
        let mut want = vec![0, 2, b't', b'x', 0, 1, b'g', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1];
        want.extend([0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0]);
        want.extend([0, 0, 0, 0, 0, 0, 0, 9, 0, 0]);
        assert_eq!(&frame[14..], &want[..]);
    }
}
