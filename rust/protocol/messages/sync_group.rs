//! SyncGroup (key 14): the second step of a classic rebalance; the leader sends every
//! member's assignment, every member receives its own.
//!
//! Versions 0-5: 1 throttle time; 3 `group_instance_id`; 4 flexible; 5 protocol type and name
//! in both directions (KIP-559).

use serde_bytes::ByteBuf;

use super::Api;
use crate::kafka_struct;

pub struct SyncGroup;

impl Api for SyncGroup {
    const NAME: &'static str = "SyncGroup";
    const KEY: i16 = 14;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = SyncGroupRequest;
    type Response = SyncGroupResponse;
}

kafka_struct! {
    pub struct SyncGroupRequestAssignment {
        member_id: String [0, _],
        assignment: ByteBuf [0, _],
    }
}

kafka_struct! {
    pub struct SyncGroupRequest {
        group_id: String [0, _],
        generation_id: i32 [0, _],
        member_id: String [0, _],
        group_instance_id: Option<String> [3, _],
        protocol_type: Option<String> [5, _],
        protocol_name: Option<String> [5, _],
        assignments: Vec<SyncGroupRequestAssignment> [0, _],
    }
}

kafka_struct! {
    pub struct SyncGroupResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [0, _],
        protocol_type: Option<String> [5, _],
        protocol_name: Option<String> [5, _],
        assignment: ByteBuf [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, assignment: Vec<u8>) -> SyncGroupResponse {
        SyncGroupResponse {
            throttle_time_ms: if v >= 1 { 1 } else { 0 },
            error_code: 0,
            protocol_type: if v >= 5 {
                Some("consumer".into())
            } else {
                None
            },
            protocol_name: if v >= 5 { Some("range".into()) } else { None },
            assignment: ByteBuf::from(assignment),
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=5,
            generation: i32,
            assignment in proptest::collection::vec(any::<u8>(), 0..40),
            instance in proptest::option::of("[a-z]{1,10}"),
        ) {
            let request = SyncGroupRequest {
                group_id: "g".into(),
                generation_id: generation,
                member_id: "m".into(),
                group_instance_id: if v >= 3 { instance } else { None },
                protocol_type: if v >= 5 { Some("consumer".into()) } else { None },
                protocol_name: if v >= 5 { Some("range".into()) } else { None },
                assignments: vec![SyncGroupRequestAssignment {
                    member_id: "m".into(),
                    assignment: ByteBuf::from(assignment.clone()),
                }],
            };
            assert_round_trip::<SyncGroup>(v, &request, &response(v, assignment));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=5 {
            assert_truncations_fail::<SyncGroup>(v, &response(v, vec![0, 1]));
        }
    }

    #[test]
    fn request_bytes() {
        let request = SyncGroupRequest {
            group_id: "g".into(),
            generation_id: 3,
            member_id: "m".into(),
            ..Default::default()
        };
        let frame = encode_request::<SyncGroup>(0, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 1, b'g', 0, 0, 0, 3, 0, 1, b'm', 0, 0, 0, 0]
        );
        // v5: header tags, "g", 3, "m", instance/type/name null, no assignments, tags.
        let frame = encode_request::<SyncGroup>(5, 0, None, &request).unwrap();
        assert_eq!(
            &frame[14..],
            &[0, 2, b'g', 0, 0, 0, 3, 2, b'm', 0, 0, 0, 1, 0]
        );
    }
}
