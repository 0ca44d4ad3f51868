//! OffsetDelete (key 47): forget a group's committed offsets of some partitions; the group
//! coordinator answers, refusing partitions the group is subscribed to while it has members.
//!
//! Version 0 only (never flexible).

use super::Api;
use crate::kafka_struct;

pub struct OffsetDelete;

impl Api for OffsetDelete {
    const NAME: &'static str = "OffsetDelete";
    const KEY: i16 = 47;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = i16::MAX;
    type Request = OffsetDeleteRequest;
    type Response = OffsetDeleteResponse;
}

kafka_struct! {
    pub struct OffsetDeleteRequestPartition {
        partition_index: i32 [0, _],
    }
}

kafka_struct! {
    pub struct OffsetDeleteRequestTopic {
        name: String [0, _],
        partitions: Vec<OffsetDeleteRequestPartition> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetDeleteRequest {
        group_id: String [0, _],
        topics: Vec<OffsetDeleteRequestTopic> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetDeleteResponsePartition {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
    }
}

kafka_struct! {
    pub struct OffsetDeleteResponseTopic {
        name: String [0, _],
        partitions: Vec<OffsetDeleteResponsePartition> [0, _],
    }
}

kafka_struct! {
    pub struct OffsetDeleteResponse {
        error_code: i16 [0, _],
        throttle_time_ms: i32 [0, _],
        topics: Vec<OffsetDeleteResponseTopic> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode_response;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(group_code: i16, code: i16, partition: i32) -> OffsetDeleteResponse {
        OffsetDeleteResponse {
            error_code: group_code,
            throttle_time_ms: 0,
            topics: vec![OffsetDeleteResponseTopic {
                name: "t".into(),
                partitions: vec![OffsetDeleteResponsePartition {
                    partition_index: partition,
                    error_code: code,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(group in "[a-z]{1,8}", partition: i32, code: i16, group_code: i16) {
            let request = OffsetDeleteRequest {
                group_id: group,
                topics: vec![OffsetDeleteRequestTopic {
                    name: "t".into(),
                    partitions: vec![OffsetDeleteRequestPartition { partition_index: partition }],
                }],
            };
            assert_round_trip::<OffsetDelete>(0, &request, &response(group_code, code, partition));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<OffsetDelete>(0, &response(0, 86, 3));
    }

    #[test]
    fn response_bytes() {
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 0, 0, 7,                 // correlation id
            0, 0, 0, 0, 0, 0,           // no error, throttle 0
            0, 0, 0, 1, 0, 1, b't',     // topics [ "t"
            0, 0, 0, 1, 0, 0, 0, 3,     //   partitions [ 3
            0, 86,                      //   GROUP_SUBSCRIBED_TO_TOPIC
        ];
        let (corr, r) = decode_response::<OffsetDelete>(0, v0).unwrap();
        assert_eq!((corr, r), (7, response(0, 86, 3)));
    }
}
