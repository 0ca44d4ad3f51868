//! CreateAcls (key 30): add ACL bindings (a resource pattern and an access control entry each).
//!
//! Versions 1-3: v1 is Kafka 4.x's floor (v0 was removed) and adds the resource pattern type
//! (KIP-290, prefixed ACLs); 2 flexible; 3 same as 2 (allows the USER resource type).

use super::Api;
use crate::kafka_struct;

pub struct CreateAcls;

impl Api for CreateAcls {
    const NAME: &'static str = "CreateAcls";
    const KEY: i16 = 30;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 3;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = CreateAclsRequest;
    type Response = CreateAclsResponse;
}

kafka_struct! {
    /// One binding; the codes are the resource type, pattern type, operation and permission
    /// type enums shared by the three ACL APIs.
    pub struct AclCreation {
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        resource_pattern_type: i8 [1, _] = 3,
        principal: String [0, _],
        host: String [0, _],
        operation: i8 [0, _],
        permission_type: i8 [0, _],
    }
}

kafka_struct! {
    pub struct CreateAclsRequest {
        creations: Vec<AclCreation> [0, _],
    }
}

kafka_struct! {
    /// One per creation, in the request's order.
    pub struct AclCreationResult {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
    }
}

kafka_struct! {
    pub struct CreateAclsResponse {
        throttle_time_ms: i32 [0, _],
        results: Vec<AclCreationResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;

    use proptest::prelude::*;

    fn creation(pattern: i8) -> AclCreation {
        AclCreation {
            resource_type: 2,
            resource_name: "t".into(),
            resource_pattern_type: pattern,
            principal: "User:a".into(),
            host: "*".into(),
            operation: 3,
            permission_type: 3,
        }
    }

    fn response(code: i16, msg: Option<String>) -> CreateAclsResponse {
        CreateAclsResponse {
            throttle_time_ms: 0,
            results: vec![AclCreationResult {
                error_code: code,
                error_message: msg,
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=3,
            pattern in 3i8..=4,
            name in "[a-z.*-]{0,12}",
            code: i16,
            msg in proptest::option::of("[a-z ]{0,20}"),
        ) {
            let mut c = creation(pattern);
            c.resource_name = name;
            let request = CreateAclsRequest { creations: vec![c, creation(3)] };
            assert_round_trip::<CreateAcls>(v, &request, &response(code, msg));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=3 {
            assert_truncations_fail::<CreateAcls>(v, &response(31, Some("denied".into())));
        }
    }

    #[test]
    fn request_bytes() {
        let request = CreateAclsRequest {
            creations: vec![creation(3)],
        };
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 0, 0, 1, 2, 0, 1, b't', 3,       // creations [ topic "t", literal
            0, 6, b'U', b's', b'e', b'r', b':', b'a',
            0, 1, b'*', 3, 3,                   //   host "*", read, allow ]
        ];
        let frame = encode_request::<CreateAcls>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v1);
        #[rustfmt::skip]
        let v3: &[u8] = &[
            0, 2, 2, 2, b't', 3,                // header tags, creations [ topic "t", literal
            7, b'U', b's', b'e', b'r', b':', b'a',
            2, b'*', 3, 3, 0,                   //   host "*", read, allow, tags ]
            0,                                  // tags
        ];
        let frame = encode_request::<CreateAcls>(3, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v3);
    }
}
