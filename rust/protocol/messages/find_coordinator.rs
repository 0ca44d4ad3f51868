//! FindCoordinator (key 10): which broker coordinates a group (key_type 0) or a transactional
//! id (key_type 1).
//!
//! Versions 0-6: v3 flexible; v4 batches keys (`coordinator_keys` -> `coordinators`) where
//! v0-3 carry a single key and a single answer; v5 and v6 keep v4's layout (new error codes,
//! share groups). Kafka 3.x speaks up to 4.

use super::Api;
use crate::kafka_struct;

pub struct FindCoordinator;

impl Api for FindCoordinator {
    const NAME: &'static str = "FindCoordinator";
    const KEY: i16 = 10;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FIRST_FLEXIBLE: i16 = 3;
    type Request = FindCoordinatorRequest;
    type Response = FindCoordinatorResponse;
}

kafka_struct! {
    pub struct FindCoordinatorRequest {
        key: String [0, 3],
        key_type: i8 [1, _],
        coordinator_keys: Vec<String> [4, _],
    }
}

kafka_struct! {
    pub struct Coordinator {
        key: String [4, _],
        node_id: i32 [4, _],
        host: String [4, _],
        port: i32 [4, _],
        error_code: i16 [4, _],
        error_message: Option<String> [4, _],
    }
}

kafka_struct! {
    pub struct FindCoordinatorResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [0, 3],
        error_message: Option<String> [1, 3],
        node_id: i32 [0, 3],
        host: String [0, 3],
        port: i32 [0, 3],
        coordinators: Vec<Coordinator> [4, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, node: i32, msg: Option<String>) -> FindCoordinatorResponse {
        if v >= 4 {
            FindCoordinatorResponse {
                throttle_time_ms: 1,
                coordinators: vec![Coordinator {
                    key: "g".into(),
                    node_id: node,
                    host: "h".into(),
                    port: 9092,
                    error_code: 0,
                    error_message: msg,
                }],
                ..Default::default()
            }
        } else {
            FindCoordinatorResponse {
                throttle_time_ms: if v >= 1 { 1 } else { 0 },
                error_code: 15,
                error_message: if v >= 1 { msg } else { None },
                node_id: node,
                host: "h".into(),
                port: 9092,
                coordinators: vec![],
            }
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=6,
            key in "[a-z-]{0,20}",
            key_type in 0i8..=2,
            node in any::<i32>(),
            msg in proptest::option::of("[a-z ]{0,20}"),
        ) {
            let request = FindCoordinatorRequest {
                key: if v <= 3 { key.clone() } else { String::new() },
                key_type: if v >= 1 { key_type } else { 0 },
                coordinator_keys: if v >= 4 { vec![key] } else { vec![] },
            };
            assert_round_trip::<FindCoordinator>(v, &request, &response(v, node, msg));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=6 {
            assert_truncations_fail::<FindCoordinator>(v, &response(v, 1, Some("m".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = FindCoordinatorRequest {
            key: "g".into(),
            key_type: 0,
            coordinator_keys: vec!["g".into()],
        };
        let frame = encode_request::<FindCoordinator>(2, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 1, b'g', 0]);
        // v4: header v2 (15 bytes), key_type, compact array [compact "g"], tags.
        let frame = encode_request::<FindCoordinator>(4, 0, None, &request).unwrap();
        assert_eq!(&frame[15..], &[0, 2, 2, b'g', 0]);
    }
}
