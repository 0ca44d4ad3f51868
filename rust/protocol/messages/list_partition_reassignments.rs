//! ListPartitionReassignments (key 46): the reassignments in progress (the replica set, and
//! the replicas being added and removed). KRaft brokers forward it to the controller.
//!
//! Version 0 only (flexible).

use super::Api;
use crate::kafka_struct;

pub struct ListPartitionReassignments;

impl Api for ListPartitionReassignments {
    const NAME: &'static str = "ListPartitionReassignments";
    const KEY: i16 = 46;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = ListPartitionReassignmentsRequest;
    type Response = ListPartitionReassignmentsResponse;
}

kafka_struct! {
    pub struct ListPartitionReassignmentsTopics {
        name: String [0, _],
        partition_indexes: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// `topics: None` lists every reassignment in progress.
    pub struct ListPartitionReassignmentsRequest {
        timeout_ms: i32 [0, _] = 60000,
        topics: Option<Vec<ListPartitionReassignmentsTopics>> [0, _],
    }
}

kafka_struct! {
    pub struct OngoingPartitionReassignment {
        partition_index: i32 [0, _],
        replicas: Vec<i32> [0, _],
        adding_replicas: Vec<i32> [0, _],
        removing_replicas: Vec<i32> [0, _],
    }
}

kafka_struct! {
    pub struct OngoingTopicReassignment {
        name: String [0, _],
        partitions: Vec<OngoingPartitionReassignment> [0, _],
    }
}

kafka_struct! {
    pub struct ListPartitionReassignmentsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        topics: Vec<OngoingTopicReassignment> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(replicas: Vec<i32>, adding: Vec<i32>) -> ListPartitionReassignmentsResponse {
        ListPartitionReassignmentsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            topics: vec![OngoingTopicReassignment {
                name: "t".into(),
                partitions: vec![OngoingPartitionReassignment {
                    partition_index: 0,
                    replicas,
                    adding_replicas: adding,
                    removing_replicas: vec![3],
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            every: bool,
            replicas in proptest::collection::vec(0i32..10, 0..4),
            adding in proptest::collection::vec(0i32..10, 0..4),
        ) {
            let request = ListPartitionReassignmentsRequest {
                timeout_ms: 1000,
                topics: if every {
                    None
                } else {
                    Some(vec![ListPartitionReassignmentsTopics {
                        name: "t".into(),
                        partition_indexes: vec![0],
                    }])
                },
            };
            assert_round_trip::<ListPartitionReassignments>(0, &request, &response(replicas, adding));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<ListPartitionReassignments>(0, &response(vec![1, 2], vec![2]));
    }

    #[test]
    fn request_bytes() {
        let every = ListPartitionReassignmentsRequest {
            timeout_ms: 1000,
            topics: None,
        };
        let frame = encode_request::<ListPartitionReassignments>(0, 0, None, &every).unwrap();
        // header tags, timeout 1000, compact null array, tags
        assert_eq!(&frame[14..], &[0, 0, 0, 0x03, 0xe8, 0, 0]);
    }
}
