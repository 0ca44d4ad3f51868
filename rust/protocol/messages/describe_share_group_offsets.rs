//! DescribeShareGroupOffsets (key 90): where a share group starts each partition (its share
//! partition start offset, KIP-932), asked of the group's coordinator.
//!
//! Versions 0-1, flexible; 1 adds each partition's lag. A null topic list asks for every
//! partition the group has state for.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct DescribeShareGroupOffsets;

impl Api for DescribeShareGroupOffsets {
    const NAME: &'static str = "DescribeShareGroupOffsets";
    const KEY: i16 = 90;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DescribeShareGroupOffsetsRequest;
    type Response = DescribeShareGroupOffsetsResponse;
}

kafka_struct! {
    pub struct ShareOffsetsRequestTopic {
        topic_name: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct ShareOffsetsRequestGroup {
        group_id: String [0, _],
        topics: Option<Vec<ShareOffsetsRequestTopic>> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeShareGroupOffsetsRequest {
        groups: Vec<ShareOffsetsRequestGroup> [0, _],
    }
}

kafka_struct! {
    pub struct ShareOffsetsPartition {
        partition_index: i32 [0, _],
        start_offset: i64 [0, _],
        leader_epoch: i32 [0, _],
        lag: i64 [1, _] = -1,
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct ShareOffsetsTopic {
        topic_name: String [0, _],
        topic_id: Uuid [0, _],
        partitions: Vec<ShareOffsetsPartition> [0, _],
    }
}

kafka_struct! {
    pub struct ShareOffsetsGroup {
        group_id: String [0, _],
        topics: Vec<ShareOffsetsTopic> [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeShareGroupOffsetsResponse {
        throttle_time_ms: i32 [0, _],
        groups: Vec<ShareOffsetsGroup> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, start: i64) -> DescribeShareGroupOffsetsResponse {
        DescribeShareGroupOffsetsResponse {
            throttle_time_ms: 0,
            groups: vec![ShareOffsetsGroup {
                group_id: "g".into(),
                topics: vec![ShareOffsetsTopic {
                    topic_name: "t".into(),
                    topic_id: Uuid([3; 16]),
                    partitions: vec![ShareOffsetsPartition {
                        partition_index: 0,
                        start_offset: start,
                        leader_epoch: 0,
                        lag: if v >= 1 { 7 } else { -1 },
                        error_code: 0,
                        error_message: None,
                    }],
                }],
                error_code: 0,
                error_message: None,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 0i16..=1, all: bool, start: i64) {
            let topics = (!all).then(|| vec![ShareOffsetsRequestTopic {
                topic_name: "t".into(),
                partitions: vec![0, 1],
            }]);
            let request = DescribeShareGroupOffsetsRequest {
                groups: vec![ShareOffsetsRequestGroup { group_id: "g".into(), topics }],
            };
            assert_round_trip::<DescribeShareGroupOffsets>(v, &request, &response(v, start));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=1 {
            assert_truncations_fail::<DescribeShareGroupOffsets>(v, &response(v, 5));
        }
    }
}
