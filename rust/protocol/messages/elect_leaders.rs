//! ElectLeaders (key 43): elect the preferred replica (election type 0) or, for partitions
//! without a leader, any live replica even out of sync (1, unclean) as the leader. KRaft
//! brokers forward it to the controller.
//!
//! Versions 0-2: 1 election type and a top-level error code; 2 flexible.

use super::Api;
use crate::kafka_struct;

pub struct ElectLeaders;

impl Api for ElectLeaders {
    const NAME: &'static str = "ElectLeaders";
    const KEY: i16 = 43;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = ElectLeadersRequest;
    type Response = ElectLeadersResponse;
}

kafka_struct! {
    pub struct ElectLeadersTopicPartitions {
        topic: String [0, _],
        partitions: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// `topic_partitions: None` asks for every partition of the cluster.
    pub struct ElectLeadersRequest {
        election_type: i8 [1, _],
        topic_partitions: Option<Vec<ElectLeadersTopicPartitions>> [0, _],
        timeout_ms: i32 [0, _] = 60000,
    }
}

kafka_struct! {
    pub struct ElectLeadersPartitionResult {
        partition_id: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct ReplicaElectionResult {
        topic: String [0, _],
        partition_result: Vec<ElectLeadersPartitionResult> [0, _],
    }
}

kafka_struct! {
    pub struct ElectLeadersResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [1, _],
        replica_election_results: Vec<ReplicaElectionResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, code: i16, message: Option<String>) -> ElectLeadersResponse {
        ElectLeadersResponse {
            throttle_time_ms: 0,
            error_code: if v >= 1 { 41 } else { 0 },
            replica_election_results: vec![ReplicaElectionResult {
                topic: "t".into(),
                partition_result: vec![ElectLeadersPartitionResult {
                    partition_id: 0,
                    error_code: code,
                    error_message: message,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=2,
            every: bool,
            unclean: bool,
            code: i16,
            message in proptest::option::of("[a-z ]{0,16}"),
        ) {
            let request = ElectLeadersRequest {
                election_type: if v >= 1 { i8::from(unclean) } else { 0 },
                topic_partitions: if every {
                    None
                } else {
                    Some(vec![ElectLeadersTopicPartitions { topic: "t".into(), partitions: vec![0, 3] }])
                },
                timeout_ms: 5000,
            };
            assert_round_trip::<ElectLeaders>(v, &request, &response(v, code, message));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=2 {
            assert_truncations_fail::<ElectLeaders>(v, &response(v, 84, Some("x".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = ElectLeadersRequest {
            election_type: 1,
            topic_partitions: None,
            timeout_ms: 1000,
        };
        let frame = encode_request::<ElectLeaders>(1, 0, None, &request).unwrap();
        // unclean, null array, timeout 1000
        assert_eq!(&frame[14..], &[1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x03, 0xe8]);
    }
}
