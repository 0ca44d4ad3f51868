//! DeleteTopics (key 20): delete topics by name (v1-5 `topic_names`) or by name or id (v6
//! `topics`). In KRaft any broker forwards it to the controller.
//!
//! Versions 1-6: v1 is Kafka 4.x's floor; 4 flexible; 5 error messages; 6 topic ids.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct DeleteTopics;

impl Api for DeleteTopics {
    const NAME: &'static str = "DeleteTopics";
    const KEY: i16 = 20;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 6;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = DeleteTopicsRequest;
    type Response = DeleteTopicsResponse;
}

kafka_struct! {
    pub struct DeleteTopicState {
        name: Option<String> [6, _],
        topic_id: Uuid [6, _],
    }
}

kafka_struct! {
    /// Fill both `topic_names` (v1-5) and `topics` (v6+); each version writes its own.
    pub struct DeleteTopicsRequest {
        topics: Vec<DeleteTopicState> [6, _],
        topic_names: Vec<String> [0, 5],
        timeout_ms: i32 [0, _],
    }
}

kafka_struct! {
    pub struct DeletableTopicResult {
        name: Option<String> [0, _],
        topic_id: Uuid [6, _],
        error_code: i16 [0, _],
        error_message: Option<String> [5, _],
    }
}

kafka_struct! {
    pub struct DeleteTopicsResponse {
        throttle_time_ms: i32 [1, _],
        responses: Vec<DeletableTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, name: &str, code: i16) -> DeleteTopicsResponse {
        DeleteTopicsResponse {
            throttle_time_ms: 1,
            responses: vec![DeletableTopicResult {
                name: Some(name.into()),
                topic_id: if v >= 6 {
                    Uuid([4; 16])
                } else {
                    Uuid::default()
                },
                error_code: code,
                error_message: if v >= 5 { Some("gone".into()) } else { None },
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(v in 1i16..=6, name in "[a-z]{1,20}", code in any::<i16>(), id: [u8; 16]) {
            let request = DeleteTopicsRequest {
                topics: if v >= 6 {
                    vec![DeleteTopicState { name: Some(name.clone()), topic_id: Uuid(id) }]
                } else {
                    vec![]
                },
                topic_names: if v <= 5 { vec![name.clone()] } else { vec![] },
                timeout_ms: 500,
            };
            assert_round_trip::<DeleteTopics>(v, &request, &response(v, &name, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=6 {
            assert_truncations_fail::<DeleteTopics>(v, &response(v, "t", 3));
        }
    }

    #[test]
    fn request_bytes_by_version() {
        let request = DeleteTopicsRequest {
            topics: vec![DeleteTopicState {
                name: Some("t".into()),
                topic_id: Uuid::default(),
            }],
            topic_names: vec!["t".into()],
            timeout_ms: 1,
        };
        let frame = encode_request::<DeleteTopics>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1]);
        // v6: compact array of one {compact "t", zero uuid, tags}, timeout, tags.
        let frame = encode_request::<DeleteTopics>(6, 0, None, &request).unwrap();
        let mut body = vec![2u8, 2, b't'];
        body.extend([0u8; 16]);
        body.extend([0, 0, 0, 0, 1, 0]);
        assert_eq!(&frame[15..], &body[..]);
    }
}
