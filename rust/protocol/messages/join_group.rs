//! JoinGroup (key 11): the first step of a classic group rebalance; the leader gets every
//! member's subscription metadata.
//!
//! Versions 0-9: 1 rebalance timeout; 2 throttle time; 4 the first join returns
//! MEMBER_ID_REQUIRED and a member id to retry with (KIP-394); 5 static membership
//! (`group_instance_id`, KIP-345); 6 flexible; 7 protocol type in the response and a nullable
//! protocol name; 8 a reason (KIP-800); 9 `skip_assignment` (KIP-814).

use serde_bytes::ByteBuf;

use super::Api;
use crate::kafka_struct;

pub struct JoinGroup;

impl Api for JoinGroup {
    const NAME: &'static str = "JoinGroup";
    const KEY: i16 = 11;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 9;
    const FIRST_FLEXIBLE: i16 = 6;
    type Request = JoinGroupRequest;
    type Response = JoinGroupResponse;
}

kafka_struct! {
    pub struct JoinGroupRequestProtocol {
        name: String [0, _],
        metadata: ByteBuf [0, _],
    }
}

kafka_struct! {
    pub struct JoinGroupRequest {
        group_id: String [0, _],
        session_timeout_ms: i32 [0, _],
        rebalance_timeout_ms: i32 [1, _] = -1,
        member_id: String [0, _],
        group_instance_id: Option<String> [5, _],
        protocol_type: String [0, _],
        protocols: Vec<JoinGroupRequestProtocol> [0, _],
        reason: Option<String> [8, _],
    }
}

kafka_struct! {
    pub struct JoinGroupResponseMember {
        member_id: String [0, _],
        group_instance_id: Option<String> [5, _],
        metadata: ByteBuf [0, _],
    }
}

kafka_struct! {
    /// `protocol_name` is null (v7+) when the join failed.
    pub struct JoinGroupResponse {
        throttle_time_ms: i32 [2, _],
        error_code: i16 [0, _],
        generation_id: i32 [0, _] = -1,
        protocol_type: Option<String> [7, _],
        protocol_name: Option<String> [0, _],
        leader: String [0, _],
        skip_assignment: bool [9, _],
        member_id: String [0, _],
        members: Vec<JoinGroupResponseMember> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn request(v: i16, metadata: Vec<u8>, instance: Option<String>) -> JoinGroupRequest {
        JoinGroupRequest {
            group_id: "g".into(),
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: if v >= 1 { 30_000 } else { -1 },
            member_id: String::new(),
            group_instance_id: if v >= 5 { instance } else { None },
            protocol_type: "consumer".into(),
            protocols: vec![JoinGroupRequestProtocol {
                name: "range".into(),
                metadata: ByteBuf::from(metadata),
            }],
            reason: if v >= 8 { Some("rejoin".into()) } else { None },
        }
    }

    fn response(v: i16, generation: i32, metadata: Vec<u8>) -> JoinGroupResponse {
        JoinGroupResponse {
            throttle_time_ms: if v >= 2 { 2 } else { 0 },
            error_code: 0,
            generation_id: generation,
            protocol_type: if v >= 7 {
                Some("consumer".into())
            } else {
                None
            },
            protocol_name: Some("range".into()),
            leader: "m-1".into(),
            skip_assignment: v >= 9,
            member_id: "m-1".into(),
            members: vec![JoinGroupResponseMember {
                member_id: "m-1".into(),
                group_instance_id: if v >= 5 { Some("i".into()) } else { None },
                metadata: ByteBuf::from(metadata),
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=9,
            generation: i32,
            metadata in proptest::collection::vec(any::<u8>(), 0..40),
            instance in proptest::option::of("[a-z]{1,10}"),
        ) {
            assert_round_trip::<JoinGroup>(
                v,
                &request(v, metadata.clone(), instance),
                &response(v, generation, metadata),
            );
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=9 {
            assert_truncations_fail::<JoinGroup>(v, &response(v, 1, vec![1, 2]));
        }
    }

    #[test]
    fn request_bytes() {
        #[rustfmt::skip]
        let v0: &[u8] = &[
            0, 1, b'g',                 // group_id
            0, 0, 0x27, 0x10,           // session timeout 10000
            0, 0,                       // member_id ""
            0, 8, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r',
            0, 0, 0, 1,                 // protocols [
            0, 5, b'r', b'a', b'n', b'g', b'e',
            0, 0, 0, 1, 7,              //   metadata [7]
        ];
        let frame = encode_request::<JoinGroup>(0, 0, None, &request(0, vec![7], None)).unwrap();
        assert_eq!(&frame[14..], v0);
        #[rustfmt::skip]
        let v9: &[u8] = &[
            0,                          // header tags
            2, b'g',                    // group_id
            0, 0, 0x27, 0x10,           // session timeout 10000
            0, 0, 0x75, 0x30,           // rebalance timeout 30000
            1,                          // member_id ""
            0,                          // group_instance_id null
            9, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r',
            2,                          // protocols [
            6, b'r', b'a', b'n', b'g', b'e',
            2, 7, 0,                    //   metadata [7], tags
            7, b'r', b'e', b'j', b'o', b'i', b'n',
            0,                          // tags
        ];
        let frame = encode_request::<JoinGroup>(9, 0, None, &request(9, vec![7], None)).unwrap();
        assert_eq!(&frame[14..], v9);
    }
}
