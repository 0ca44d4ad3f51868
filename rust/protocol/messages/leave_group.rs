//! LeaveGroup (key 13): members leave a classic group without waiting for their session to
//! expire.
//!
//! Versions 0-5: 1 throttle time; 3 batches members (`members` replaces `member_id`, KIP-345);
//! 4 flexible; 5 a reason per member (KIP-800).

use super::Api;
use crate::kafka_struct;

pub struct LeaveGroup;

impl Api for LeaveGroup {
    const NAME: &'static str = "LeaveGroup";
    const KEY: i16 = 13;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FIRST_FLEXIBLE: i16 = 4;
    type Request = LeaveGroupRequest;
    type Response = LeaveGroupResponse;
}

kafka_struct! {
    pub struct MemberIdentity {
        member_id: String [3, _],
        group_instance_id: Option<String> [3, _],
        reason: Option<String> [5, _],
    }
}

kafka_struct! {
    pub struct LeaveGroupRequest {
        group_id: String [0, _],
        member_id: String [0, 2],
        members: Vec<MemberIdentity> [3, _],
    }
}

kafka_struct! {
    pub struct MemberResponse {
        member_id: String [3, _],
        group_instance_id: Option<String> [3, _],
        error_code: i16 [3, _],
    }
}

kafka_struct! {
    pub struct LeaveGroupResponse {
        throttle_time_ms: i32 [1, _],
        error_code: i16 [0, _],
        members: Vec<MemberResponse> [3, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(v: i16, member: &str, reason: Option<String>) -> LeaveGroupRequest {
        if v >= 3 {
            LeaveGroupRequest {
                group_id: "g".into(),
                member_id: String::new(),
                members: vec![MemberIdentity {
                    member_id: member.into(),
                    group_instance_id: None,
                    reason: if v >= 5 { reason } else { None },
                }],
            }
        } else {
            LeaveGroupRequest {
                group_id: "g".into(),
                member_id: member.into(),
                members: vec![],
            }
        }
    }

    fn response(v: i16, code: i16) -> LeaveGroupResponse {
        LeaveGroupResponse {
            throttle_time_ms: if v >= 1 { 1 } else { 0 },
            error_code: code,
            members: if v >= 3 {
                vec![MemberResponse {
                    member_id: "m".into(),
                    group_instance_id: Some("i".into()),
                    error_code: 25,
                }]
            } else {
                vec![]
            },
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=5,
            member in "[a-z0-9-]{0,30}",
            reason in proptest::option::of("[a-z ]{0,20}"),
            code: i16,
        ) {
            assert_round_trip::<LeaveGroup>(v, &request(v, &member, reason), &response(v, code));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=5 {
            assert_truncations_fail::<LeaveGroup>(v, &response(v, 0));
        }
    }

    #[test]
    fn request_bytes() {
        let frame = encode_request::<LeaveGroup>(2, 0, None, &request(2, "m", None)).unwrap();
        assert_eq!(&frame[14..], &[0, 1, b'g', 0, 1, b'm']);
        #[rustfmt::skip]
        let v5: &[u8] = &[
            0, 2, b'g',         // header tags, group_id
            2, 2, b'm', 0,      // members [ "m", instance null
            3, b'b', b'y',      //   reason "by"
            0, 0,               //   tags ], tags
        ];
        let frame =
            encode_request::<LeaveGroup>(5, 0, None, &request(5, "m", Some("by".into()))).unwrap();
        assert_eq!(&frame[14..], v5);
    }
}
