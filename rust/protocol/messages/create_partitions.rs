//! CreatePartitions (key 37): grow a topic's partition count (never shrink it).
//!
//! Versions 0-3: 1 same as 0; 2 flexible; 3 same as 2.

use super::Api;
use crate::kafka_struct;

pub struct CreatePartitions;

impl Api for CreatePartitions {
    const NAME: &'static str = "CreatePartitions";
    const KEY: i16 = 37;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 3;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = CreatePartitionsRequest;
    type Response = CreatePartitionsResponse;
}

kafka_struct! {
    pub struct CreatePartitionsAssignment {
        broker_ids: Vec<i32> [0, _],
    }
}

kafka_struct! {
    /// `count` is the new total; `assignments` (one per new partition) or null for the
    /// controller's placement.
    pub struct CreatePartitionsTopic {
        name: String [0, _],
        count: i32 [0, _],
        assignments: Option<Vec<CreatePartitionsAssignment>> [0, _],
    }
}

kafka_struct! {
    pub struct CreatePartitionsRequest {
        topics: Vec<CreatePartitionsTopic> [0, _],
        timeout_ms: i32 [0, _] = 60000,
        validate_only: bool [0, _],
    }
}

kafka_struct! {
    pub struct CreatePartitionsTopicResult {
        name: String [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct CreatePartitionsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<CreatePartitionsTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16, msg: Option<String>) -> CreatePartitionsResponse {
        CreatePartitionsResponse {
            throttle_time_ms: 0,
            results: vec![CreatePartitionsTopicResult {
                name: "t".into(),
                error_code: code,
                error_message: msg,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=3,
            count: i32,
            brokers in proptest::option::of(proptest::collection::vec(any::<i32>(), 0..3)),
            validate: bool,
            code: i16,
            msg in proptest::option::of("[a-z ]{0,20}"),
        ) {
            let request = CreatePartitionsRequest {
                topics: vec![CreatePartitionsTopic {
                    name: "t".into(),
                    count,
                    assignments: brokers.map(|b| vec![CreatePartitionsAssignment { broker_ids: b }]),
                }],
                timeout_ms: 30_000,
                validate_only: validate,
            };
            assert_round_trip::<CreatePartitions>(v, &request, &response(code, msg));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=3 {
            assert_truncations_fail::<CreatePartitions>(v, &response(37, Some("m".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = CreatePartitionsRequest {
            topics: vec![CreatePartitionsTopic {
                name: "t".into(),
                count: 3,
                assignments: None,
            }],
            timeout_ms: 1000,
            validate_only: false,
        };
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 0, 0, 1, 0, 1, b't',     // topics [ "t"
            0, 0, 0, 3,                 //   count 3
            0xff, 0xff, 0xff, 0xff,     //   assignments null
            0, 0, 0x03, 0xe8, 0,        // timeout 1000, validate_only false
        ];
        let frame = encode_request::<CreatePartitions>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v1);
        #[rustfmt::skip]
        let v3: &[u8] = &[
            0, 2, 2, b't',              // header tags, topics [ "t"
            0, 0, 0, 3, 0, 0,           //   count 3, assignments null, tags
            0, 0, 0x03, 0xe8, 0, 0,     // timeout, validate_only, tags
        ];
        let frame = encode_request::<CreatePartitions>(3, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v3);
    }
}
