//! OffsetCommit (key 8): store a group's consumed positions in `__consumer_offsets`.
//!
//! Versions 2-10: v2 is Kafka 4.x's floor (v0-1 were removed); 2-4 carry `retention_time_ms`;
//! 3 throttle time; 6 committed leader epochs; 7 `group_instance_id`; 8 flexible; 9 KIP-848
//! member epochs (same layout); 10 topic ids instead of names. Kafka 3.x speaks up to 9.
//!
//! A commit with `member_id` "" and generation -1 is accepted from a client that is not a
//! group member (the "simple" / admin commit).

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct OffsetCommit;

impl Api for OffsetCommit {
    const NAME: &'static str = "OffsetCommit";
    const KEY: i16 = 8;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 10;
    const FIRST_FLEXIBLE: i16 = 8;
    type Request = OffsetCommitRequest;
    type Response = OffsetCommitResponse;
}

kafka_struct! {
    pub struct OffsetCommitRequestPartition {
        partition_index: i32 [0, _],
        committed_offset: i64 [0, _],
        committed_leader_epoch: i32 [6, _] = -1,
        committed_metadata: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetCommitRequestTopic {
        name: String [0, 9],
        topic_id: Uuid [10, _],
        partitions: Vec<OffsetCommitRequestPartition> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetCommitRequest {
        group_id: String [0, _],
        generation_id_or_member_epoch: i32 [1, _] = -1,
        member_id: String [1, _],
        group_instance_id: Option<String> [7, _],
        retention_time_ms: i64 [2, 4] = -1,
        topics: Vec<OffsetCommitRequestTopic> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetCommitResponsePartition {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct OffsetCommitResponseTopic {
        name: String [0, 9],
        topic_id: Uuid [10, _],
        partitions: Vec<OffsetCommitResponsePartition> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetCommitResponse {
        throttle_time_ms: i32 [3, _],
        topics: Vec<OffsetCommitResponseTopic> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn name(v: i16) -> String {
        if v <= 9 {
            "t".into()
        } else {
            String::new()
        }
    }

    fn id(v: i16) -> Uuid {
        if v >= 10 {
            Uuid([9; 16])
        } else {
            Uuid::default()
        }
    }

    fn response(v: i16, code: i16) -> OffsetCommitResponse {
        OffsetCommitResponse {
            throttle_time_ms: if v >= 3 { 5 } else { 0 },
            topics: vec![OffsetCommitResponseTopic {
                name: name(v),
                topic_id: id(v),
                partitions: vec![OffsetCommitResponsePartition {
                    partition_index: 3,
                    error_code: code,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 2i16..=10,
            offset: i64,
            epoch: i32,
            generation: i32,
            metadata in proptest::option::of("[a-z]{0,10}"),
            instance in proptest::option::of("[a-z]{1,10}"),
            code: i16,
        ) {
            let request = OffsetCommitRequest {
                group_id: "group".into(),
                generation_id_or_member_epoch: generation,
                member_id: "member-1".into(),
                group_instance_id: if v >= 7 { instance } else { None },
                retention_time_ms: if v <= 4 { 60_000 } else { -1 },
                topics: vec![OffsetCommitRequestTopic {
                    name: name(v),
                    topic_id: id(v),
                    partitions: vec![OffsetCommitRequestPartition {
                        partition_index: 0,
                        committed_offset: offset,
                        committed_leader_epoch: if v >= 6 { epoch } else { -1 },
                        committed_metadata: metadata,
                    }],
                }],
            };
            assert_round_trip::<OffsetCommit>(v, &request, &response(v, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 2..=10 {
            assert_truncations_fail::<OffsetCommit>(v, &response(v, 0));
        }
    }

    fn simple_commit(v: i16) -> OffsetCommitRequest {
        OffsetCommitRequest {
            group_id: "g".into(),
            member_id: String::new(),
            topics: vec![OffsetCommitRequestTopic {
                name: name(v),
                topic_id: id(v),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 5,
                    committed_leader_epoch: -1,
                    committed_metadata: Some(String::new()),
                }],
            }],
            ..Default::default()
        }
    }

    #[test]
    fn v2_request_bytes() {
        let frame = encode_request::<OffsetCommit>(2, 0, None, &simple_commit(2)).unwrap();
        #[rustfmt::skip]
        let body: &[u8] = &[
            0, 1, b'g',                                     // group_id "g"
            0xff, 0xff, 0xff, 0xff,                         // generation -1
            0, 0,                                           // member_id ""
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // retention_time_ms -1
            0, 0, 0, 1, 0, 1, b't',                         // topics [ "t"
            0, 0, 0, 1, 0, 0, 0, 0,                         //   partitions [ 0
            0, 0, 0, 0, 0, 0, 0, 5,                         //   offset 5
            0, 0,                                           //   metadata ""
        ];
        assert_eq!(&frame[14..], body);
    }

    #[test]
    fn v9_request_bytes() {
        let frame = encode_request::<OffsetCommit>(9, 0, None, &simple_commit(9)).unwrap();
        #[rustfmt::skip]
        let body: &[u8] = &[
            0,                                              // header tags
            2, b'g',                                        // group_id "g"
            0xff, 0xff, 0xff, 0xff,                         // generation -1
            1,                                              // member_id ""
            0,                                              // group_instance_id null
            2, 2, b't',                                     // topics [ "t"
            2, 0, 0, 0, 0,                                  //   partitions [ 0
            0, 0, 0, 0, 0, 0, 0, 5,                         //   offset 5
            0xff, 0xff, 0xff, 0xff,                         //   leader epoch -1
            1, 0,                                           //   metadata "", tags
            0, 0,                                           // topic tags, request tags
        ];
        assert_eq!(&frame[14..], body);
    }
}
