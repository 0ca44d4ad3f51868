//! OffsetFetch (key 9): a group's committed positions.
//!
//! Versions 1-10: v1 is Kafka 4.x's floor (v0 read from ZooKeeper); 2 null topics = "all" and
//! a top-level error code; 3 throttle time; 5 committed leader epochs; 6 flexible; 7
//! `require_stable`; 8 batches several groups (`groups` replaces the single-group fields in
//! both directions); 9 KIP-848 member id/epoch; 10 topic ids instead of names. Kafka 3.x speaks
//! up to 9.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct OffsetFetch;

impl Api for OffsetFetch {
    const NAME: &'static str = "OffsetFetch";
    const KEY: i16 = 9;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 10;
    const FIRST_FLEXIBLE: i16 = 6;
    type Request = OffsetFetchRequest;
    type Response = OffsetFetchResponse;
}

kafka_struct! {
    /// A topic of the single-group layout (v1-7).
    pub struct OffsetFetchRequestTopic {
        name: String [0, 7],
        partition_indexes: Vec<i32> [0, 7],
    }
}

kafka_struct! {
    /// A topic of the multi-group layout (v8+).
    pub struct OffsetFetchRequestTopics {
        name: String [8, 9],
        topic_id: Uuid [10, _],
        partition_indexes: Vec<i32> [8, _],
    }
}

kafka_struct! {
    /// `topics: None` asks for every topic the group committed.
    pub struct OffsetFetchRequestGroup {
        group_id: String [8, _],
        member_id: Option<String> [9, _],
        member_epoch: i32 [9, _] = -1,
        topics: Option<Vec<OffsetFetchRequestTopics>> [8, _],
    }
}

kafka_struct! {
    /// v1-7 name one group (`group_id`, `topics`; null topics = all, v2+); v8+ use `groups`.
    pub struct OffsetFetchRequest {
        group_id: String [0, 7],
        topics: Option<Vec<OffsetFetchRequestTopic>> [0, 7],
        groups: Vec<OffsetFetchRequestGroup> [8, _],
        require_stable: bool [7, _],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponsePartition {
        partition_index: i32 [0, 7],
        committed_offset: i64 [0, 7],
        committed_leader_epoch: i32 [5, 7] = -1,
        metadata: Option<String> [0, 7],
        error_code: i16 [0, 7],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponseTopic {
        name: String [0, 7],
        partitions: Vec<OffsetFetchResponsePartition> [0, 7],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponsePartitions {
        partition_index: i32 [8, _],
        committed_offset: i64 [8, _],
        committed_leader_epoch: i32 [8, _] = -1,
        metadata: Option<String> [8, _],
        error_code: i16 [8, _],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponseTopics {
        name: String [8, 9],
        topic_id: Uuid [10, _],
        partitions: Vec<OffsetFetchResponsePartitions> [8, _],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponseGroup {
        group_id: String [8, _],
        topics: Vec<OffsetFetchResponseTopics> [8, _],
        error_code: i16 [8, _],
    }
}

kafka_struct! {
    pub struct OffsetFetchResponse {
        throttle_time_ms: i32 [3, _],
        topics: Vec<OffsetFetchResponseTopic> [0, 7],
        error_code: i16 [2, 7],
        groups: Vec<OffsetFetchResponseGroup> [8, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(v: i16, all: bool, stable: bool) -> OffsetFetchRequest {
        let all = all && v >= 2;
        if v >= 8 {
            OffsetFetchRequest {
                groups: vec![OffsetFetchRequestGroup {
                    group_id: "g".into(),
                    member_id: if v >= 9 { Some("m".into()) } else { None },
                    member_epoch: if v >= 9 { 4 } else { -1 },
                    topics: (!all).then(|| {
                        vec![OffsetFetchRequestTopics {
                            name: if v <= 9 { "t".into() } else { String::new() },
                            topic_id: if v >= 10 {
                                Uuid([1; 16])
                            } else {
                                Uuid::default()
                            },
                            partition_indexes: vec![0, 1],
                        }]
                    }),
                }],
                require_stable: stable,
                ..Default::default()
            }
        } else {
            OffsetFetchRequest {
                group_id: "g".into(),
                topics: (!all).then(|| {
                    vec![OffsetFetchRequestTopic {
                        name: "t".into(),
                        partition_indexes: vec![0, 1],
                    }]
                }),
                require_stable: stable && v >= 7,
                ..Default::default()
            }
        }
    }

    fn response(v: i16, offset: i64, metadata: Option<String>) -> OffsetFetchResponse {
        let throttle_time_ms = if v >= 3 { 7 } else { 0 };
        if v >= 8 {
            OffsetFetchResponse {
                throttle_time_ms,
                groups: vec![OffsetFetchResponseGroup {
                    group_id: "g".into(),
                    topics: vec![OffsetFetchResponseTopics {
                        name: if v <= 9 { "t".into() } else { String::new() },
                        topic_id: if v >= 10 {
                            Uuid([1; 16])
                        } else {
                            Uuid::default()
                        },
                        partitions: vec![OffsetFetchResponsePartitions {
                            partition_index: 0,
                            committed_offset: offset,
                            committed_leader_epoch: 2,
                            metadata,
                            error_code: 0,
                        }],
                    }],
                    error_code: 0,
                }],
                ..Default::default()
            }
        } else {
            OffsetFetchResponse {
                throttle_time_ms,
                topics: vec![OffsetFetchResponseTopic {
                    name: "t".into(),
                    partitions: vec![OffsetFetchResponsePartition {
                        partition_index: 0,
                        committed_offset: offset,
                        committed_leader_epoch: if v >= 5 { 2 } else { -1 },
                        metadata,
                        error_code: 0,
                    }],
                }],
                error_code: if v >= 2 { 16 } else { 0 },
                ..Default::default()
            }
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=10,
            all: bool,
            stable: bool,
            offset: i64,
            metadata in proptest::option::of("[a-z]{0,10}"),
        ) {
            assert_round_trip::<OffsetFetch>(v, &request(v, all, stable), &response(v, offset, metadata));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=10 {
            assert_truncations_fail::<OffsetFetch>(v, &response(v, 42, Some("m".into())));
        }
    }

    #[test]
    fn request_bytes() {
        // v2, every topic: group "g", topics null.
        let frame = encode_request::<OffsetFetch>(2, 0, None, &request(2, true, false)).unwrap();
        assert_eq!(&frame[14..], &[0, 1, b'g', 0xff, 0xff, 0xff, 0xff]);
        // v8, every topic: header tags, groups [ "g", topics null, tags ], require_stable, tags.
        let frame = encode_request::<OffsetFetch>(8, 0, None, &request(8, true, false)).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'g', 0, 0, 0, 0]);
        // v9 adds the member id and epoch to the group.
        let frame = encode_request::<OffsetFetch>(9, 0, None, &request(9, true, true)).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 2, 2, b'g', 2, b'm', 0, 0, 0, 4, 0, 0, 1, 0]
        );
    }
}
