//! AlterShareGroupOffsets (key 91): move where an empty share group starts partitions
//! (KIP-932), sent to the group's coordinator.
//!
//! Version 0 only, flexible.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct AlterShareGroupOffsets;

impl Api for AlterShareGroupOffsets {
    const NAME: &'static str = "AlterShareGroupOffsets";
    const KEY: i16 = 91;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = AlterShareGroupOffsetsRequest;
    type Response = AlterShareGroupOffsetsResponse;
}

kafka_struct! {
    pub struct AlterShareOffsetsPartition {
        partition_index: i32 [0, _],
        start_offset: i64 [0, _],
    }
}

kafka_struct! {
    pub struct AlterShareOffsetsTopic {
        topic_name: String [0, _],
        partitions: Vec<AlterShareOffsetsPartition> [0, _],
    }
}

kafka_struct! {
    pub struct AlterShareGroupOffsetsRequest {
        group_id: String [0, _],
        topics: Vec<AlterShareOffsetsTopic> [0, _],
    }
}

kafka_struct! {
    pub struct AlterShareOffsetsPartitionResult {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct AlterShareOffsetsTopicResult {
        topic_name: String [0, _],
        topic_id: Uuid [0, _],
        partitions: Vec<AlterShareOffsetsPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct AlterShareGroupOffsetsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        responses: Vec<AlterShareOffsetsTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16) -> AlterShareGroupOffsetsResponse {
        AlterShareGroupOffsetsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            responses: vec![AlterShareOffsetsTopicResult {
                topic_name: "t".into(),
                topic_id: Uuid([4; 16]),
                partitions: vec![AlterShareOffsetsPartitionResult {
                    partition_index: 0,
                    error_code: code,
                    error_message: (code != 0).then(|| "not empty".into()),
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(start: i64, code in 0i16..200) {
            let request = AlterShareGroupOffsetsRequest {
                group_id: "g".into(),
                topics: vec![AlterShareOffsetsTopic {
                    topic_name: "t".into(),
                    partitions: vec![AlterShareOffsetsPartition { partition_index: 0, start_offset: start }],
                }],
            };
            assert_round_trip::<AlterShareGroupOffsets>(0, &request, &response(code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<AlterShareGroupOffsets>(0, &response(5));
    }
}
