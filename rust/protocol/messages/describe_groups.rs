//! DescribeGroups (key 15): state, protocol and members of classic groups.
//!
//! Versions 0-6: 1 throttle time; 3 authorized operations; 4 `group_instance_id`; 5 flexible;
//! 6 a per-group error message. Kafka 3.x speaks up to 5.

use serde_bytes::ByteBuf;

use super::Api;
use crate::kafka_struct;

pub struct DescribeGroups;

impl Api for DescribeGroups {
    const NAME: &'static str = "DescribeGroups";
    const KEY: i16 = 15;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FIRST_FLEXIBLE: i16 = 5;
    type Request = DescribeGroupsRequest;
    type Response = DescribeGroupsResponse;
}

kafka_struct! {
    pub struct DescribeGroupsRequest {
        groups: Vec<String> [0, _],
        include_authorized_operations: bool [3, _],
    }
}

kafka_struct! {
    pub struct DescribedGroupMember {
        member_id: String [0, _],
        group_instance_id: Option<String> [4, _],
        client_id: String [0, _],
        client_host: String [0, _],
        member_metadata: ByteBuf [0, _],
        member_assignment: ByteBuf [0, _],
    }
}

kafka_struct! {
    pub struct DescribedGroup {
        error_code: i16 [0, _],
        error_message: Option<String> [6, _],
        group_id: String [0, _],
        group_state: String [0, _],
        protocol_type: String [0, _],
        protocol_data: String [0, _],
        members: Vec<DescribedGroupMember> [0, _],
        authorized_operations: i32 [3, _] = i32::MIN,
    }
}

kafka_struct! {
    pub struct DescribeGroupsResponse {
        throttle_time_ms: i32 [1, _],
        groups: Vec<DescribedGroup> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(v: i16, assignment: Vec<u8>, msg: Option<String>) -> DescribeGroupsResponse {
        DescribeGroupsResponse {
            throttle_time_ms: if v >= 1 { 1 } else { 0 },
            groups: vec![DescribedGroup {
                error_code: 0,
                error_message: if v >= 6 { msg } else { None },
                group_id: "g".into(),
                group_state: "Stable".into(),
                protocol_type: "consumer".into(),
                protocol_data: "range".into(),
                members: vec![DescribedGroupMember {
                    member_id: "m-1".into(),
                    group_instance_id: if v >= 4 { Some("i".into()) } else { None },
                    client_id: "c".into(),
                    client_host: "/127.0.0.1".into(),
                    member_metadata: ByteBuf::from(vec![0, 1]),
                    member_assignment: ByteBuf::from(assignment),
                }],
                authorized_operations: if v >= 3 { 0x0f } else { i32::MIN },
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 0i16..=6,
            groups in proptest::collection::vec("[a-z]{0,10}", 0..4),
            ops: bool,
            assignment in proptest::collection::vec(any::<u8>(), 0..32),
            msg in proptest::option::of("[a-z ]{0,20}"),
        ) {
            let request = DescribeGroupsRequest {
                groups,
                include_authorized_operations: ops && v >= 3,
            };
            assert_round_trip::<DescribeGroups>(v, &request, &response(v, assignment, msg));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 0..=6 {
            assert_truncations_fail::<DescribeGroups>(v, &response(v, vec![1], Some("m".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DescribeGroupsRequest {
            groups: vec!["g".into()],
            include_authorized_operations: true,
        };
        let frame = encode_request::<DescribeGroups>(0, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 0, 0, 1, 0, 1, b'g']);
        let frame = encode_request::<DescribeGroups>(5, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], &[0, 2, 2, b'g', 1, 0]);
    }
}
