//! DescribeAcls (key 29): the ACL bindings matching one filter, grouped by resource pattern.
//!
//! Versions 1-3: v1 is Kafka 4.x's floor (v0 was removed) and adds the pattern type filter
//! (KIP-290); 2 flexible; 3 same as 2 (allows the USER resource type).

use super::Api;
use crate::kafka_struct;

pub struct DescribeAcls;

impl Api for DescribeAcls {
    const NAME: &'static str = "DescribeAcls";
    const KEY: i16 = 29;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 3;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = DescribeAclsRequest;
    type Response = DescribeAclsResponse;
}

kafka_struct! {
    /// A null name, principal or host matches any; type codes 1 (ANY) match any.
    pub struct DescribeAclsRequest {
        resource_type_filter: i8 [0, _],
        resource_name_filter: Option<String> [0, _],
        pattern_type_filter: i8 [1, _] = 3,
        principal_filter: Option<String> [0, _],
        host_filter: Option<String> [0, _],
        operation: i8 [0, _],
        permission_type: i8 [0, _],
    }
}

kafka_struct! {
    pub struct AclDescription {
        principal: String [0, _],
        host: String [0, _],
        operation: i8 [0, _],
        permission_type: i8 [0, _],
    }
}

kafka_struct! {
    pub struct DescribeAclsResource {
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        pattern_type: i8 [1, _] = 3,
        acls: Vec<AclDescription> [0, _],
    }
}

kafka_struct! {
    pub struct DescribeAclsResponse {
        throttle_time_ms: i32 [0, _],
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        resources: Vec<DescribeAclsResource> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn response(pattern: i8, principal: String) -> DescribeAclsResponse {
        DescribeAclsResponse {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            resources: vec![DescribeAclsResource {
                resource_type: 3,
                resource_name: "g".into(),
                pattern_type: pattern,
                acls: vec![AclDescription {
                    principal,
                    host: "*".into(),
                    operation: 3,
                    permission_type: 3,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=3,
            pattern in 3i8..=4,
            name in proptest::option::of("[a-z.-]{0,12}"),
            principal in proptest::option::of("User:[a-z]{1,8}"),
            host in proptest::option::of("[0-9.*]{1,8}"),
        ) {
            let request = DescribeAclsRequest {
                resource_type_filter: 1,
                resource_name_filter: name,
                pattern_type_filter: 1,
                principal_filter: principal.clone(),
                host_filter: host,
                operation: 1,
                permission_type: 1,
            };
            let response = response(pattern, principal.unwrap_or_else(|| "User:b".into()));
            assert_round_trip::<DescribeAcls>(v, &request, &response);
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=3 {
            assert_truncations_fail::<DescribeAcls>(v, &response(3, "User:a".into()));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DescribeAclsRequest {
            resource_type_filter: 2,
            resource_name_filter: None,
            pattern_type_filter: 1,
            principal_filter: Some("User:a".into()),
            host_filter: None,
            operation: 1,
            permission_type: 1,
        };
        #[rustfmt::skip]
        let v1: &[u8] = &[
            2, 0xff, 0xff, 1,                   // topic, any name, any pattern
            0, 6, b'U', b's', b'e', b'r', b':', b'a',
            0xff, 0xff, 1, 1,                   // any host, any operation, any permission
        ];
        let frame = encode_request::<DescribeAcls>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v1);
        #[rustfmt::skip]
        let v3: &[u8] = &[
            0, 2, 0, 1,                         // header tags, topic, any name, any pattern
            7, b'U', b's', b'e', b'r', b':', b'a',
            0, 1, 1, 0,                         // any host, operation, permission, tags
        ];
        let frame = encode_request::<DescribeAcls>(3, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v3);
    }
}
