//! ListOffsets (key 2): the offset for a timestamp, or the earliest (-2) / latest (-1) offset;
//! the answer to `beginning_offsets`, `end_offsets` and `offsets_for_times`.
//!
//! Versions 1-11: v1 is Kafka 4.x's floor; 2 isolation level (latest = last stable offset
//! under read_committed); 4 leader epochs; 6 flexible; 7-9 new special timestamps only
//! (max timestamp, earliest local, latest tiered); 10 `timeout_ms`; 11 earliest pending upload.

use super::Api;
use crate::kafka_struct;

pub struct ListOffsets;

impl Api for ListOffsets {
    const NAME: &'static str = "ListOffsets";
    const KEY: i16 = 2;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 11;
    const FIRST_FLEXIBLE: i16 = 6;
    type Request = ListOffsetsRequest;
    type Response = ListOffsetsResponse;
}

kafka_struct! {
    pub struct ListOffsetsPartition {
        partition_index: i32 [0, _],
        current_leader_epoch: i32 [4, _] = -1,
        timestamp: i64 [0, _],
    }
}

kafka_struct! {
    pub struct ListOffsetsTopic {
        name: String [0, _],
        partitions: Vec<ListOffsetsPartition> [0, _],
    }
}

kafka_struct! {
    pub struct ListOffsetsRequest {
        replica_id: i32 [0, _] = -1,
        isolation_level: i8 [2, _],
        topics: Vec<ListOffsetsTopic> [0, _],
        timeout_ms: i32 [10, _],
    }
}

kafka_struct! {
    pub struct ListOffsetsPartitionResponse {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        timestamp: i64 [1, _] = -1,
        offset: i64 [1, _] = -1,
        leader_epoch: i32 [4, _] = -1,
    }
}

kafka_struct! {
    pub struct ListOffsetsTopicResponse {
        name: String [0, _],
        partitions: Vec<ListOffsetsPartitionResponse> [0, _],
    }
}

kafka_struct! {
    pub struct ListOffsetsResponse {
        throttle_time_ms: i32 [2, _],
        topics: Vec<ListOffsetsTopicResponse> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, offset: i64, ts: i64) -> ListOffsetsResponse {
        ListOffsetsResponse {
            throttle_time_ms: if v >= 2 { 2 } else { 0 },
            topics: vec![ListOffsetsTopicResponse {
                name: "t".into(),
                partitions: vec![ListOffsetsPartitionResponse {
                    partition_index: 0,
                    error_code: 0,
                    timestamp: ts,
                    offset,
                    leader_epoch: if v >= 4 { 3 } else { -1 },
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 1i16..=11, offset: i64, ts: i64, iso in 0i8..=1, epoch: i32) {
            let request = ListOffsetsRequest {
                replica_id: -1,
                isolation_level: if v >= 2 { iso } else { 0 },
                topics: vec![ListOffsetsTopic {
                    name: "topic".into(),
                    partitions: vec![ListOffsetsPartition {
                        partition_index: 1,
                        current_leader_epoch: if v >= 4 { epoch } else { -1 },
                        timestamp: ts,
                    }],
                }],
                timeout_ms: if v >= 10 { 30000 } else { 0 },
            };
            assert_round_trip::<ListOffsets>(v, &request, &response(v, offset, ts));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=11 {
            assert_truncations_fail::<ListOffsets>(v, &response(v, 10, -1));
        }
    }

    #[test]
    fn v1_request_bytes() {
        let request = ListOffsetsRequest {
            replica_id: -1,
            topics: vec![ListOffsetsTopic {
                name: "t".into(),
                partitions: vec![ListOffsetsPartition {
                    partition_index: 0,
                    current_leader_epoch: -1,
                    timestamp: -2,
                }],
            }],
            ..Default::default()
        };
        let frame = encode_request::<ListOffsets>(1, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let body: &[u8] = &[
            0xff, 0xff, 0xff, 0xff,                         // replica_id -1
            0, 0, 0, 1, 0, 1, b't',                         // topics [ "t"
            0, 0, 0, 1, 0, 0, 0, 0,                         //   partitions [ 0
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, //   timestamp -2 (earliest)
        ];
        assert_eq!(&frame[14..], body);
    }
}
