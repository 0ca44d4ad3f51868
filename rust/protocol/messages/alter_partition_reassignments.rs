//! AlterPartitionReassignments (key 45): move partitions' replicas to other brokers, or
//! cancel a move in progress (`replicas: None`). KRaft brokers forward it to the controller.
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;

pub struct AlterPartitionReassignments;

impl Api for AlterPartitionReassignments {
    const NAME: &'static str = "AlterPartitionReassignments";
    const KEY: i16 = 45;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = AlterPartitionReassignmentsRequest;
    type Response = AlterPartitionReassignmentsResponse;
}

kafka_struct! {
    /// `replicas: None` cancels the partition's reassignment in progress.
    pub struct ReassignablePartition {
        partition_index: i32 [0, _],
        replicas: Option<Vec<i32>> [0, _],
    }
}

kafka_struct! {
    pub struct ReassignableTopic {
        name: String [0, _],
        partitions: Vec<ReassignablePartition> [0, _],
    }
}

kafka_struct! {
    pub struct AlterPartitionReassignmentsRequest {
        timeout_ms: i32 [0, _] = 60000,
        topics: Vec<ReassignableTopic> [0, _],
    }
}

kafka_struct! {
    pub struct ReassignablePartitionResponse {
        partition_index: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct ReassignableTopicResponse {
        name: String [0, _],
        partitions: Vec<ReassignablePartitionResponse> [0, _],
    }
}

kafka_struct! {
    pub struct AlterPartitionReassignmentsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        responses: Vec<ReassignableTopicResponse> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, message: Option<String>) -> AlterPartitionReassignmentsResponse {
        AlterPartitionReassignmentsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            responses: vec![ReassignableTopicResponse {
                name: "t".into(),
                partitions: vec![ReassignablePartitionResponse {
                    partition_index: 0,
                    error_code: code,
                    error_message: message,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            replicas in proptest::option::of(proptest::collection::vec(0i32..10, 0..4)),
            code: i16,
            message in proptest::option::of("[a-z ]{0,16}"),
        ) {
            let request = AlterPartitionReassignmentsRequest {
                timeout_ms: 1000,
                topics: vec![ReassignableTopic {
                    name: "t".into(),
                    partitions: vec![ReassignablePartition { partition_index: 0, replicas }],
                }],
            };
            assert_round_trip::<AlterPartitionReassignments>(0, &request, &response(code, message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<AlterPartitionReassignments>(0, &response(85, Some("x".into())));
    }

    #[test]
    fn request_bytes() {
        let request = AlterPartitionReassignmentsRequest {
            timeout_ms: 1000,
            topics: vec![ReassignableTopic {
                name: "t".into(),
                partitions: vec![ReassignablePartition {
                    partition_index: 0,
                    replicas: None,
                }],
            }],
        };
        let frame = encode_request::<AlterPartitionReassignments>(0, 0, None, &request).unwrap();
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 0, 0, 0x03, 0xe8,        // header tags, timeout 1000
            2, 2, b't', 2, 0, 0, 0, 0,  // topics [ "t" partitions [ 0
            0, 0, 0, 0,                 //   replicas null, partition, topic, body tags
        ];
        assert_eq!(&frame[14..], v0);
    }
}
