//! DeleteShareGroupOffsets (key 92): forget a share group's state for whole topics
//! (KIP-932), sent to the group's coordinator.
//!
//! Version 0 only, flexible.

use super::Api;
use crate::kafka_struct;
use crate::protocol::codec::Uuid;

pub struct DeleteShareGroupOffsets;

impl Api for DeleteShareGroupOffsets {
    const NAME: &'static str = "DeleteShareGroupOffsets";
    const KEY: i16 = 92;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FIRST_FLEXIBLE: i16 = 0;
    type Request = DeleteShareGroupOffsetsRequest;
    type Response = DeleteShareGroupOffsetsResponse;
}

kafka_struct! {
    pub struct DeleteShareOffsetsTopic {
        topic_name: String [0, _],
    }
}

kafka_struct! {
    pub struct DeleteShareGroupOffsetsRequest {
        group_id: String [0, _],
        topics: Vec<DeleteShareOffsetsTopic> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteShareOffsetsTopicResult {
        topic_name: String [0, _],
        topic_id: Uuid [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteShareGroupOffsetsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        responses: Vec<DeleteShareOffsetsTopicResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(code: i16) -> DeleteShareGroupOffsetsResponse {
        DeleteShareGroupOffsetsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            responses: vec![DeleteShareOffsetsTopicResult {
                topic_name: "t".into(),
                topic_id: Uuid([5; 16]),
                error_code: code,
                error_message: None,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(names in proptest::collection::vec("[a-z]{1,8}", 0..4), code in 0i16..200) {
            let request = DeleteShareGroupOffsetsRequest {
                group_id: "g".into(),
                topics: names.into_iter().map(|topic_name| DeleteShareOffsetsTopic { topic_name }).collect(),
            };
            assert_round_trip::<DeleteShareGroupOffsets>(0, &request, &response(code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        assert_truncations_fail::<DeleteShareGroupOffsets>(0, &response(5));
    }
}
