//! DeleteAcls (key 31): remove every ACL binding matching each of a list of filters.
//!
//! Versions 1-3: v1 is Kafka 4.x's floor (v0 was removed) and adds the pattern type (KIP-290);
//! 2 flexible; 3 same as 2 (allows the USER resource type).

use super::Api;
use crate::kafka_struct;

pub struct DeleteAcls;

impl Api for DeleteAcls {
    const NAME: &'static str = "DeleteAcls";
    const KEY: i16 = 31;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 3;
    const FIRST_FLEXIBLE: i16 = 2;
    type Request = DeleteAclsRequest;
    type Response = DeleteAclsResponse;
}

kafka_struct! {
    /// A null name, principal or host matches any; type codes 1 (ANY) match any.
    pub struct DeleteAclsFilter {
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
    pub struct DeleteAclsRequest {
        filters: Vec<DeleteAclsFilter> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteAclsMatchingAcl {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        resource_type: i8 [0, _],
        resource_name: String [0, _],
        pattern_type: i8 [1, _] = 3,
        principal: String [0, _],
        host: String [0, _],
        operation: i8 [0, _],
        permission_type: i8 [0, _],
    }
}

kafka_struct! {
    /// One per filter, in the request's order.
    pub struct DeleteAclsFilterResult {
        error_code: i16 [0, _],
        error_message: Option<String> [0, _],
        matching_acls: Vec<DeleteAclsMatchingAcl> [0, _],
    }
}

kafka_struct! {
    pub struct DeleteAclsResponse {
        throttle_time_ms: i32 [0, _],
        filter_results: Vec<DeleteAclsFilterResult> [0, _],
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode_request;
    use super::super::testing::{assert_round_trip, assert_truncations_fail};
    use super::*;
    use proptest::prelude::*;

    fn filter(name: Option<String>) -> DeleteAclsFilter {
        DeleteAclsFilter {
            resource_type_filter: 2,
            resource_name_filter: name,
            pattern_type_filter: 3,
            principal_filter: None,
            host_filter: None,
            operation: 1,
            permission_type: 1,
        }
    }

    fn response(code: i16, msg: Option<String>, pattern: i8) -> DeleteAclsResponse {
        DeleteAclsResponse {
            throttle_time_ms: 0,
            filter_results: vec![DeleteAclsFilterResult {
                error_code: 0,
                error_message: None,
                matching_acls: vec![DeleteAclsMatchingAcl {
                    error_code: code,
                    error_message: msg,
                    resource_type: 2,
                    resource_name: "t".into(),
                    pattern_type: pattern,
                    principal: "User:a".into(),
                    host: "*".into(),
                    operation: 4,
                    permission_type: 3,
                }],
            }],
        }
    }

    proptest! {
        #[test]
        fn round_trips(
            v in 1i16..=3,
            name in proptest::option::of("[a-z.-]{0,12}"),
            code: i16,
            msg in proptest::option::of("[a-z ]{0,20}"),
            pattern in 3i8..=4,
        ) {
            let request = DeleteAclsRequest { filters: vec![filter(name), filter(None)] };
            assert_round_trip::<DeleteAcls>(v, &request, &response(code, msg, pattern));
        }
    }

    #[test]
    fn truncated_responses_fail() {
        for v in 1..=3 {
            assert_truncations_fail::<DeleteAcls>(v, &response(0, None, 4));
        }
    }

    #[test]
    fn request_bytes() {
        let request = DeleteAclsRequest {
            filters: vec![filter(Some("t".into()))],
        };
        #[rustfmt::skip]
        let v1: &[u8] = &[
            0, 0, 0, 1, 2, 0, 1, b't', 3,       // filters [ topic "t", literal
            0xff, 0xff, 0xff, 0xff, 1, 1,       //   any principal, any host, operation, permission ]
        ];
        let frame = encode_request::<DeleteAcls>(1, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v1);
        #[rustfmt::skip]
        let v3: &[u8] = &[
            0, 2, 2, 2, b't', 3,                // header tags, filters [ topic "t", literal
            0, 0, 1, 1, 0,                      //   any principal, any host, operation, permission, tags ]
            0,                                  // tags
        ];
        let frame = encode_request::<DeleteAcls>(3, 0, None, &request).unwrap();
        assert_eq!(&frame[14..], v3);
    }
}
